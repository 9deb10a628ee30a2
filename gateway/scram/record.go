package scram

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Topic is the Iggy topic of stream "<stream>.meta" that holds the records, one partition.
const Topic = "scram_credentials"

const (
	recordVersion = 1
	kindSet       = 1
	kindDeleted   = 2
	// kindProvisioned is kindSet followed by the name of the administrator whose token the
	// record holds.
	kindProvisioned = 3
)

// Record is one change of one user's credential for one mechanism.
type Record struct {
	User      string
	Mechanism Mechanism
	// Deleted records the credential's deletion; Credential and Token are then empty.
	Deleted    bool
	Credential Credential // Credential.Mechanism is Mechanism
	// Token is an Iggy login token, sealed (Seal): the user's own, or with Admin set the token of
	// the administrator who provisioned the credential.
	Token []byte
	// Admin, when not empty, is the Iggy user with the manage-users permission who set this
	// credential for User (AlterUserScramCredentials of another user), and whose token Token is.
	Admin string
}

// Key identifies what a record changes: the newest record of a key wins.
type Key struct {
	User      string
	Mechanism Mechanism
}

// Key is the record's key.
func (r Record) Key() Key { return Key{r.User, r.Mechanism} }

// Append appends the record's encoding (see the package doc). It fails on a record that
// DecodeRecord would refuse.
func (r Record) Append(dst []byte) ([]byte, error) {
	if err := r.check(); err != nil {
		return dst, err
	}
	kind := byte(kindSet)
	switch {
	case r.Deleted:
		kind = kindDeleted
	case r.Admin != "":
		kind = kindProvisioned
	}
	dst = append(dst, recordVersion, kind, byte(r.Mechanism))
	dst = appendBytes16(dst, []byte(r.User))
	if r.Deleted {
		return dst, nil
	}
	c := r.Credential
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Iterations))
	dst = appendBytes16(dst, c.Salt)
	dst = append(dst, c.StoredKey...)
	dst = append(dst, c.ServerKey...)
	dst = appendBytes16(dst, r.Token)
	if r.Admin != "" {
		dst = appendBytes16(dst, []byte(r.Admin))
	}
	return dst, nil
}

func (r Record) check() error {
	switch {
	case !r.Mechanism.Valid():
		return errors.New("scram: record of an unknown mechanism")
	case r.User == "" || len(r.User) > MaxUser || !utf8.ValidString(r.User):
		return errors.New("scram: record user empty, too long or not UTF-8")
	case r.Deleted:
		return nil
	}
	c := r.Credential
	switch {
	case c.Mechanism != r.Mechanism:
		return errors.New("scram: record credential of another mechanism")
	case c.Iterations < MinIterations || c.Iterations > MaxIterations:
		return fmt.Errorf("scram: %d iterations, want %d..%d", c.Iterations, MinIterations, MaxIterations)
	case len(c.Salt) == 0 || len(c.Salt) > MaxSalt:
		return errors.New("scram: record salt empty or too long")
	case len(c.StoredKey) != r.Mechanism.Size() || len(c.ServerKey) != r.Mechanism.Size():
		return errors.New("scram: record keys of the wrong size")
	case len(r.Token) == 0 || len(r.Token) > maxToken:
		return errors.New("scram: record token empty or too long")
	case len(r.Admin) > MaxUser || !utf8.ValidString(r.Admin) || r.Admin == r.User:
		return errors.New("scram: record administrator too long, not UTF-8 or the user itself")
	}
	return nil
}

// DecodeRecord decodes one record. The Record shares no memory with b.
func DecodeRecord(b []byte) (Record, error) {
	d := decoder{b: b}
	version, kind, mech := d.u8(), d.u8(), Mechanism(d.u8())
	if d.err == nil && version != recordVersion {
		return Record{}, fmt.Errorf("scram: record version %d", version)
	}
	r := Record{Mechanism: mech, Deleted: kind == kindDeleted}
	r.User = string(d.bytes16())
	if d.err == nil && kind != kindSet && kind != kindDeleted && kind != kindProvisioned {
		return Record{}, fmt.Errorf("scram: record kind %d", kind)
	}
	if !r.Deleted {
		c := &r.Credential
		c.Mechanism = mech
		c.Iterations = int32(d.u32())
		c.Salt = d.bytes16()
		n := mech.Size()
		c.StoredKey, c.ServerKey = d.fixed(n), d.fixed(n)
		r.Token = d.bytes16()
		if kind == kindProvisioned {
			r.Admin = string(d.bytes16())
			if d.err == nil && r.Admin == "" {
				return Record{}, errors.New("scram: provisioned record without its administrator")
			}
		}
	}
	if d.err != nil {
		return Record{}, d.err
	}
	if len(d.b) != 0 {
		return Record{}, fmt.Errorf("scram: %d bytes after the record", len(d.b))
	}
	if err := r.check(); err != nil {
		return Record{}, err
	}
	return r, nil
}

var errShort = errors.New("scram: record truncated")

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fixed(n int) []byte {
	if d.err != nil {
		return nil
	}
	if len(d.b) < n {
		d.err = errShort
		return nil
	}
	out := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return out
}

func (d *decoder) u8() byte {
	if b := d.fixed(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.fixed(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) bytes16() []byte {
	l := d.fixed(2)
	if l == nil {
		return nil
	}
	return d.fixed(int(binary.BigEndian.Uint16(l)))
}

func appendBytes16(dst, b []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(b)))
	return append(dst, b...)
}

// Seal seals an Iggy login token of user for mechanism m under clientKey.
func Seal(clientKey []byte, user string, m Mechanism, token string) ([]byte, error) {
	aead, err := sealer(clientKey)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(token)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(token), sealedData(user, m)), nil
}

// Open opens what Seal sealed; another ClientKey, user or mechanism fails.
func Open(clientKey []byte, user string, m Mechanism, sealed []byte) (string, error) {
	aead, err := sealer(clientKey)
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("scram: sealed token too short")
	}
	n := aead.NonceSize()
	token, err := aead.Open(nil, sealed[:n], sealed[n:], sealedData(user, m))
	if err != nil {
		return "", errors.New("scram: the sealed token does not open with this key")
	}
	return string(token), nil
}

func sealer(clientKey []byte) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, clientKey)
	mac.Write([]byte("iggy-kafka scram token"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func sealedData(user string, m Mechanism) []byte {
	return append([]byte{recordVersion, byte(m)}, user...)
}
