package store

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"math"
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetUser] = (*conn).getUser
	readHandlers[wire.CmdGetUsers] = (*conn).getUsers
	writeHandlers[wire.CmdCreateUser] = (*conn).createUser
	writeHandlers[wire.CmdUpdateUser] = (*conn).updateUser
	writeHandlers[wire.CmdDeleteUser] = (*conn).deleteUser
	writeHandlers[wire.CmdUpdatePermissions] = (*conn).updatePermissions
	writeHandlers[wire.CmdChangePassword] = (*conn).changePassword
	readHandlers[wire.CmdGetPersonalAccessTokens] = (*conn).getPATs
	writeHandlers[wire.CmdCreatePersonalAccessToken] = (*conn).createPAT
	writeHandlers[wire.CmdDeletePersonalAccessToken] = (*conn).deletePAT
}

func userInfo(u *user) wire.User {
	return wire.User{ID: u.id, CreatedAt: u.createdAt, Status: u.status, Username: u.username}
}

func userDetails(u *user) wire.UserDetails {
	d := wire.UserDetails{User: userInfo(u)}
	if u.perms != nil {
		p := *u.perms
		d.Permissions = &p
	}
	return d
}

func validUsername(name string) bool { return len(name) >= 3 && len(name) <= 50 }
func validPassword(pw string) bool   { return len(pw) >= 3 && len(pw) <= 100 }

func (c *conn) getUser(sess *session, body []byte) error {
	var q wire.UserRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	u := s.state.user(q.User)
	if u == nil {
		return nil
	}
	if u.id != sess.userID && !s.allowed(sess, authz.ReadUsers) {
		return wire.Unauthorized
	}
	d := userDetails(u)
	c.out = d.AppendTo(c.out)
	return nil
}

func (c *conn) getUsers(sess *session, body []byte) error {
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.allowed(sess, authz.ReadUsers) {
		return wire.Unauthorized
	}
	for _, u := range s.state.users {
		if u != nil {
			info := userInfo(u)
			c.out = info.AppendTo(c.out)
		}
	}
	return nil
}

func (c *conn) createUser(sess *session, body []byte) error {
	var q wire.CreateUser
	if err := decode(&q, body); err != nil {
		return err
	}
	if !validUsername(q.Username) {
		return wire.InvalidUsername
	}
	if !validPassword(q.Password) {
		return wire.InvalidPassword
	}
	if q.Status != userActive && q.Status != userInactive {
		return wire.InvalidUserStatus
	}
	if err := noOptions(q.Options); err != nil {
		return err
	}
	salt, hash, err := hashPassword(q.Password, c.s.cfg.PasswordIterations)
	if err != nil {
		return err
	}
	s := c.s
	var d wire.UserDetails
	err = s.mutate(func() error {
		if !s.allowed(sess, authz.ManageUsers) {
			return wire.Unauthorized
		}
		if s.state.userByName(q.Username) != nil {
			return wire.UserAlreadyExists
		}
		slot := freeSlot(s.state.users)
		u := &user{id: uint32(slot), username: q.Username, createdAt: nowMicros(), status: q.Status,
			salt: salt, hash: hash, iter: s.cfg.PasswordIterations, perms: q.Permissions}
		s.state.users = putSlot(s.state.users, slot, u)
		d = userDetails(u)
		return nil
	})
	return c.replyAfter(err, &d)
}

func (c *conn) updateUser(sess *session, body []byte) error {
	var q wire.UpdateUser
	if err := decode(&q, body); err != nil {
		return err
	}
	if q.HasUsername && !validUsername(q.Username) {
		return wire.InvalidUsername
	}
	if q.HasStatus && q.Status != userActive && q.Status != userInactive {
		return wire.InvalidUserStatus
	}
	if err := noOptions(q.Options); err != nil {
		return err
	}
	s := c.s
	return s.mutateUser(sess, q.User, func(u *user) error {
		if q.HasUsername {
			if other := s.state.userByName(q.Username); other != nil && other != u {
				return wire.UserAlreadyExists
			}
			u.username = q.Username
		}
		if q.HasStatus {
			u.status = q.Status
		}
		return nil
	})
}

func (c *conn) deleteUser(sess *session, body []byte) error {
	var q wire.UserRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	return s.mutateUser(sess, q.User, func(u *user) error {
		if u.id == 0 {
			return wire.CannotDeleteUser
		}
		s.state.users[u.id] = nil
		// Sessions of the deleted user end with it.
		for other := range s.conns {
			if other.sess != nil && other.sess.userID == u.id {
				s.endSessionLocked(other)
			}
		}
		return nil
	})
}

func (c *conn) updatePermissions(sess *session, body []byte) error {
	var q wire.UpdatePermissions
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	return s.mutateUser(sess, q.User, func(u *user) error {
		if u.id == 0 {
			return wire.CannotChangePermissions
		}
		u.perms = q.Permissions
		return nil
	})
}

func (c *conn) changePassword(sess *session, body []byte) error {
	var q wire.ChangePassword
	if err := decode(&q, body); err != nil {
		return err
	}
	if !validPassword(q.NewPassword) {
		return wire.InvalidPassword
	}
	s := c.s
	s.mu.RLock()
	u := s.state.user(q.User)
	var cp user
	if u != nil {
		cp = *u
	}
	allowed := u != nil && (u.id == sess.userID || s.allowed(sess, authz.ManageUsers))
	s.mu.RUnlock()
	if u == nil {
		return wire.ResourceNotFound
	}
	if !allowed {
		return wire.Unauthorized
	}
	if !checkPassword(&cp, q.CurrentPassword) {
		return wire.InvalidCredentials
	}
	salt, hash, err := hashPassword(q.NewPassword, s.cfg.PasswordIterations)
	if err != nil {
		return err
	}
	return s.mutate(func() error {
		// The user may have been deleted while the password was hashed.
		if s.state.user(wire.NumericID(cp.id)) != u {
			return wire.ResourceNotFound
		}
		u.salt, u.hash, u.iter = salt, hash, s.cfg.PasswordIterations
		// The user's other sessions were opened with the old password and end with it, so a
		// client holding them (a gateway's pool, say) learns that the password is gone; the
		// caller's own session stays.
		for other := range s.conns {
			if other != c && other.sess != nil && other.sess.userID == u.id {
				s.endSessionLocked(other)
			}
		}
		return nil
	})
}

func (c *conn) getPATs(sess *session, body []byte) error {
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	u, err := s.sessionUser(sess)
	if err != nil {
		return err
	}
	var list wire.PersonalAccessTokenList
	for _, p := range u.pats {
		list = append(list, wire.PersonalAccessToken{Name: p.name, ExpiryAt: p.expiryAt})
	}
	c.out = list.AppendTo(c.out)
	return nil
}

func (c *conn) createPAT(sess *session, body []byte) error {
	var q wire.CreatePersonalAccessToken
	if err := decode(&q, body); err != nil {
		return err
	}
	if len(q.Name) < 3 || len(q.Name) > 30 {
		return wire.InvalidPersonalAccessTokenName
	}
	var expiryAt uint64
	if q.Expiry != 0 && q.Expiry != math.MaxUint64 {
		now := nowMicros()
		if q.Expiry > math.MaxUint64-now {
			return wire.InvalidPersonalAccessTokenExpiry
		}
		expiryAt = now + q.Expiry
	}
	raw, hash, err := newToken()
	if err != nil {
		return err
	}
	s := c.s
	err = s.mutate(func() error {
		u, err := s.sessionUser(sess)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(u.pats, func(p *pat) bool { return p.name == q.Name }) {
			return wire.PersonalAccessTokenAlreadyExists
		}
		if len(u.pats) >= maxPATsPerUser {
			return wire.PersonalAccessTokensLimitReached
		}
		u.pats = append(u.pats, &pat{name: q.Name, hash: hash, expiryAt: expiryAt})
		return nil
	})
	return c.replyAfter(err, &wire.RawToken{Token: raw})
}

func (c *conn) deletePAT(sess *session, body []byte) error {
	var q wire.DeletePersonalAccessToken
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	return s.mutate(func() error {
		u, err := s.sessionUser(sess)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(u.pats, func(p *pat) bool { return p.name == q.Name })
		if i < 0 {
			return wire.ResourceNotFound
		}
		u.pats = slices.Delete(u.pats, i, i+1)
		return nil
	})
}
