package scram

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrInvalidProof is a client-final message whose proof does not match the credential: a wrong
// password.
var ErrInvalidProof = errors.New("scram: invalid credentials")

// ClientFirst is a parsed client-first message.
type ClientFirst struct {
	User  string // unescaped
	nonce string
	gs2   string // the gs2 header, which the client-final channel binding repeats
	bare  string // client-first-message-bare, part of the AuthMessage
}

// ParseClientFirst parses a client-first message (RFC 5802, 7).
func ParseClientFirst(msg []byte) (ClientFirst, error) {
	if !utf8.Valid(msg) {
		return ClientFirst{}, malformed("client-first message is not UTF-8")
	}
	s := string(msg)
	// gs2-header = gs2-cbind-flag "," [authzid] ","
	flag, rest, ok := strings.Cut(s, ",")
	if !ok {
		return ClientFirst{}, malformed("client-first message without a gs2 header")
	}
	switch {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return ClientFirst{}, malformed("channel binding is not supported")
	default:
		return ClientFirst{}, malformed("bad gs2 channel binding flag")
	}
	authz, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return ClientFirst{}, malformed("client-first message without a gs2 header")
	}
	var authzid string
	if authz != "" {
		v, ok := strings.CutPrefix(authz, "a=")
		if !ok {
			return ClientFirst{}, malformed("bad authorization id")
		}
		var err error
		if authzid, err = unescapeName(v); err != nil {
			return ClientFirst{}, err
		}
	}
	// client-first-message-bare = [reserved-mext ","] username "," nonce ["," extensions]
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 {
		return ClientFirst{}, malformed("client-first message without user and nonce")
	}
	if strings.HasPrefix(attrs[0], "m=") {
		return ClientFirst{}, malformed("mandatory extensions are not supported")
	}
	name, ok := strings.CutPrefix(attrs[0], "n=")
	if !ok {
		return ClientFirst{}, malformed("client-first message without a user")
	}
	user, err := unescapeName(name)
	if err != nil {
		return ClientFirst{}, err
	}
	nonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok || !printable(nonce) {
		return ClientFirst{}, malformed("client-first message without a valid nonce")
	}
	for _, ext := range attrs[2:] {
		k, v, ok := strings.Cut(ext, "=")
		if !ok || !alpha(k) || v == "" {
			return ClientFirst{}, malformed("bad extension")
		}
		// Kafka's delegation tokens authenticate with tokenauth=true; the gateway has none.
		if k == "tokenauth" && strings.EqualFold(v, "true") {
			return ClientFirst{}, malformed("delegation tokens are not supported")
		}
	}
	if authzid != "" && authzid != user {
		return ClientFirst{}, malformed("authorization id must be empty or the user")
	}
	return ClientFirst{User: user, nonce: nonce, gs2: flag + "," + authz + ",", bare: bare}, nil
}

// Exchange is the server side of one SCRAM authentication after the client-first message.
type Exchange struct {
	cred        Credential
	first       ClientFirst
	nonce       string // client nonce + server nonce
	serverFirst string
}

// NewExchange starts the exchange for first, whose user has the credential cred, and returns
// the server-first message.
func NewExchange(first ClientFirst, cred Credential) (*Exchange, []byte, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, nil, err
	}
	return newExchange(first, cred, base64.StdEncoding.EncodeToString(b[:]))
}

func newExchange(first ClientFirst, cred Credential, serverNonce string) (*Exchange, []byte, error) {
	if !cred.Mechanism.Valid() || len(cred.StoredKey) != cred.Mechanism.Size() || len(cred.ServerKey) != cred.Mechanism.Size() {
		return nil, nil, errors.New("scram: unusable credential")
	}
	e := &Exchange{cred: cred, first: first, nonce: first.nonce + serverNonce}
	e.serverFirst = "r=" + e.nonce + ",s=" + base64.StdEncoding.EncodeToString(cred.Salt) +
		",i=" + strconv.Itoa(int(cred.Iterations))
	return e, []byte(e.serverFirst), nil
}

// User is the user the exchange authenticates.
func (e *Exchange) User() string { return e.first.User }

// Credential is the credential the exchange checks the proof against.
func (e *Exchange) Credential() Credential { return e.cred }

// Final checks the client-final message. On success it returns the server-final message and
// the client's ClientKey; a proof that does not match is ErrInvalidProof.
func (e *Exchange) Final(msg []byte) (serverFinal, clientKey []byte, err error) {
	s := string(msg)
	// client-final-message = channel-binding "," nonce ["," extensions] "," proof
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return nil, nil, malformed("client-final message without a proof")
	}
	withoutProof, proof64 := s[:i], s[i+len(",p="):]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 {
		return nil, nil, malformed("client-final message without channel binding and nonce")
	}
	cb, ok := strings.CutPrefix(attrs[0], "c=")
	if !ok {
		return nil, nil, malformed("client-final message without channel binding")
	}
	if got, err := base64.StdEncoding.DecodeString(cb); err != nil || string(got) != e.first.gs2 {
		return nil, nil, malformed("channel binding does not repeat the gs2 header")
	}
	if nonce, ok := strings.CutPrefix(attrs[1], "r="); !ok || !e.echoes(nonce) {
		return nil, nil, malformed("client-final message with another nonce")
	}
	for _, ext := range attrs[2:] {
		if k, _, ok := strings.Cut(ext, "="); !ok || !alpha(k) {
			return nil, nil, malformed("bad extension")
		}
	}
	proof, err := base64.StdEncoding.DecodeString(proof64)
	if err != nil || len(proof) != e.cred.Mechanism.Size() {
		return nil, nil, malformed("bad proof")
	}
	m := e.cred.Mechanism
	authMessage := e.first.bare + "," + e.serverFirst + "," + withoutProof
	sig := m.hmac(e.cred.StoredKey, authMessage)
	clientKey = make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	if subtle.ConstantTimeCompare(m.sum(clientKey), e.cred.StoredKey) != 1 {
		return nil, nil, ErrInvalidProof
	}
	serverSig := m.hmac(e.cred.ServerKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSig)), clientKey, nil
}

// echoes reports whether nonce, the client-final message's, is the combined nonce the
// server-first message carried (RFC 5802), or librdkafka's form of it: the client nonce once
// more before the combined nonce. librdkafka builds its client-final nonce as its own nonce
// followed by the server-first message's r attribute, and Kafka's brokers accept it; any other
// nonce is refused. The proof covers the message as sent, so either form proves the password.
func (e *Exchange) echoes(nonce string) bool {
	if nonce == e.nonce {
		return true
	}
	rest, ok := strings.CutPrefix(nonce, e.first.nonce)
	return ok && rest == e.nonce
}

// MalformedError is a SCRAM message that does not follow RFC 5802; its text is safe to show
// the client.
type MalformedError struct{ msg string }

func (e *MalformedError) Error() string { return "scram: " + e.msg }

func malformed(msg string) error { return &MalformedError{msg} }

// unescapeName decodes a saslname: "=2C" is ",", "=3D" is "=", and no other "=" may appear.
func unescapeName(s string) (string, error) {
	if s == "" || len(s) > MaxUser {
		return "", malformed("user name empty or too long")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", malformed("NUL in user name")
	}
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", malformed("bad escape in user name")
		}
		i += 2
	}
	return b.String(), nil
}

// printable is RFC 5802's printable: %x21-2B / %x2D-7E, at least one.
func printable(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func alpha(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
