package store

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

const (
	userActive   uint8 = 1
	userInactive uint8 = 2

	// pbkdf2Iterations is the default of Config.PasswordIterations, and the count of a hash
	// stored without one. Deliberately moderate: every login hashes once.
	pbkdf2Iterations = 20000
	saltLen          = 16
	hashLen          = 32
	patRawLen        = 32
)

// hashPassword hashes password with a new salt and iter iterations of PBKDF2-SHA256.
func hashPassword(password string, iter int) (salt, hash []byte, err error) {
	salt = make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, err
	}
	hash, err = pbkdf2.Key(sha256.New, password, salt, iter, hashLen)
	return salt, hash, err
}

// checkPassword reports whether password is u's, with the iterations u's hash was made with.
func checkPassword(u *user, password string) bool {
	got, err := pbkdf2.Key(sha256.New, password, u.salt, u.iterations(), hashLen)
	return err == nil && subtle.ConstantTimeCompare(got, u.hash) == 1
}

// iterations is the count u's hash was made with: pbkdf2Iterations for a hash stored before
// the count was.
func (u *user) iterations() int {
	if u.iter > 0 {
		return u.iter
	}
	return pbkdf2Iterations
}

// newToken returns a raw personal access token (shown to the user once) and
// the hash the server keeps. Tokens are random, so an unsalted hash is as
// strong as the token.
func newToken() (raw string, hash []byte, err error) {
	b := make([]byte, patRawLen)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	raw = base64.RawURLEncoding.EncodeToString(b)
	return raw, tokenHash(raw), nil
}

func tokenHash(raw string) []byte {
	h := sha256.Sum256([]byte(raw))
	return h[:]
}
