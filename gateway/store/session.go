package store

import (
	"crypto/subtle"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// register logs the connection in (protocol 5.1). Every failure is an
// eviction, as in the official server; the password shape is tried first,
// then the token shape.
func (c *conn) register(h *wire.RequestHeader, body []byte) error {
	shapes, err := wire.ParseRegister(body)
	if err != nil {
		return evictError{wire.EvictMalformedLogin}
	}
	if !wire.VersionCompatible(shapes.Version.Protocol, wire.ProtocolVersion) {
		return evictError{wire.EvictIncompatibleProtocol}
	}
	if !shapes.HasPassword && !shapes.HasToken {
		return evictError{wire.EvictMalformedLogin}
	}
	s := c.s
	userID, ok := uint32(0), false
	reason := wire.EvictMalformedLogin
	if shapes.HasPassword {
		userID, ok = s.checkPasswordLogin(shapes.Password.Username, shapes.Password.Password)
		reason = wire.EvictInvalidCredentials
	}
	if !ok && shapes.HasToken {
		userID, reason = s.checkTokenLogin(shapes.Token.Token)
		ok = reason == 0
	}
	if !ok {
		return evictError{reason}
	}

	s.mu.Lock()
	s.endSessionLocked(c)
	s.nextSession++
	sess := &session{number: s.nextSession, userID: userID, client: h.Client}
	c.sess = sess
	s.mu.Unlock()

	reply := wire.LoginReply{
		UserID:                userID,
		Session:               sess.number,
		ServerProtocolVersion: wire.ProtocolVersion,
		ServerVersion:         Version,
	}
	c.out = reply.AppendTo(c.out)
	return nil
}

func (s *Server) checkPasswordLogin(username, password string) (uint32, bool) {
	if len(username) < 3 || len(username) > 50 || len(password) < 3 || len(password) > 100 {
		return 0, false
	}
	s.mu.RLock()
	u := s.state.userByName(username)
	var cp user
	if u != nil {
		cp = *u
	}
	s.mu.RUnlock()
	if u == nil || cp.status != userActive {
		return 0, false
	}
	// Hashing runs outside the lock: it is the slow part of a login.
	if !checkPassword(&cp, password) {
		return 0, false
	}
	return cp.id, true
}

// checkTokenLogin returns the token's user, or the eviction reason.
func (s *Server) checkTokenLogin(token string) (uint32, wire.EvictionReason) {
	if token == "" {
		return 0, wire.EvictInvalidToken
	}
	hash := tokenHash(token)
	now := nowMicros()
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, u := range s.state.users {
		if u == nil {
			continue
		}
		for _, p := range u.pats {
			if subtle.ConstantTimeCompare(p.hash, hash) != 1 {
				continue
			}
			if p.expiryAt != 0 && p.expiryAt <= now {
				return 0, wire.EvictInvalidToken
			}
			if u.status != userActive {
				return 0, wire.EvictUserInactive
			}
			return u.id, 0
		}
	}
	return 0, wire.EvictInvalidToken
}

// allowed reports whether the session's user passes check; root (id 0)
// passes everything. The caller holds Server.mu.
func (s *Server) allowed(sess *session, check authz.Check) bool {
	if sess.userID == 0 {
		return true
	}
	if int(sess.userID) >= len(s.state.users) {
		return false
	}
	u := s.state.users[sess.userID]
	if u == nil {
		return false
	}
	return authz.Allowed(sess.userID, u.perms, check)
}

func allPermissions() *wire.Permissions {
	p := wire.AllPermissions()
	return &p
}
