package scram

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
)

// Mechanism is a SCRAM mechanism, numbered as Kafka's DescribeUserScramCredentials and
// AlterUserScramCredentials number them.
type Mechanism int8

const (
	SHA256 Mechanism = 1
	SHA512 Mechanism = 2
)

// Mechanisms are the mechanisms served, in the order SaslHandshake lists them.
var Mechanisms = []Mechanism{SHA256, SHA512}

// Kafka's bounds of a credential's iteration count (ScramMechanism.minIterations and the
// 16384 its controller accepts at most).
const (
	MinIterations = 4096
	MaxIterations = 16384
)

// Bounds of what a record carries, so that a stored record is always small.
const (
	MaxUser  = 1024
	MaxSalt  = 1024
	maxToken = 4096
)

// ParseMechanism returns the mechanism a SASL mechanism name names.
func ParseMechanism(name string) (Mechanism, bool) {
	for _, m := range Mechanisms {
		if m.String() == name {
			return m, true
		}
	}
	return 0, false
}

// Valid reports whether m is a mechanism served.
func (m Mechanism) Valid() bool { return m == SHA256 || m == SHA512 }

// String is the SASL mechanism name.
func (m Mechanism) String() string {
	switch m {
	case SHA256:
		return "SCRAM-SHA-256"
	case SHA512:
		return "SCRAM-SHA-512"
	}
	return "SCRAM-UNKNOWN"
}

func (m Mechanism) hash() func() hash.Hash {
	if m == SHA512 {
		return sha512.New
	}
	return sha256.New
}

// Size is the length of the mechanism's hash, and so of its keys and proofs.
func (m Mechanism) Size() int {
	if m == SHA512 {
		return sha512.Size
	}
	return sha256.Size
}

func (m Mechanism) hmac(key []byte, parts ...string) []byte {
	mac := hmac.New(m.hash(), key)
	for _, p := range parts {
		mac.Write([]byte(p))
	}
	return mac.Sum(nil)
}

func (m Mechanism) sum(b []byte) []byte {
	h := m.hash()()
	h.Write(b)
	return h.Sum(nil)
}

// Credential is what a server keeps of a user's password for one mechanism (RFC 5802, 3).
type Credential struct {
	Mechanism  Mechanism
	Salt       []byte
	Iterations int32
	StoredKey  []byte // H(ClientKey)
	ServerKey  []byte // HMAC(SaltedPassword, "Server Key")
}

// SaltPassword is Hi(password, salt, iterations), the SaltedPassword of RFC 5802 that
// AlterUserScramCredentials carries. It fails only where crypto/pbkdf2 refuses the arguments
// (in FIPS mode, a short salt).
func SaltPassword(m Mechanism, password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(m.hash(), password, salt, iterations, m.Size())
}

// FromSaltedPassword derives the credential a server keeps from a SaltedPassword, and the
// ClientKey it does not keep.
func FromSaltedPassword(m Mechanism, salt []byte, iterations int32, saltedPassword []byte) (Credential, []byte) {
	clientKey := m.hmac(saltedPassword, "Client Key")
	return Credential{
		Mechanism:  m,
		Salt:       append([]byte(nil), salt...),
		Iterations: iterations,
		StoredKey:  m.sum(clientKey),
		ServerKey:  m.hmac(saltedPassword, "Server Key"),
	}, clientKey
}
