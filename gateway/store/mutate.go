package store

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// mutate runs change under Server.mu and, when change succeeds, writes the
// resulting metadata after unlocking. A metadata command is acknowledged only
// once that write is done, so the handler returns what mutate returns. When
// change fails nothing is written and its error is the answer.
func (s *Server) mutate(change func() error) error {
	save, err := s.changeLocked(change)
	if err != nil {
		return err
	}
	return save()
}

// changeLocked runs change under the lock and snapshots the result; the deferred unlock keeps
// the store usable by other connections if change panics (the connection recovers and closes).
func (s *Server) changeLocked(change func() error) (save func() error, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := change(); err != nil {
		return nil, err
	}
	return s.commitLocked(), nil
}

// mutateStream is mutate for a command on one stream: change runs only once
// the stream is found and the caller may do check on it.
func (s *Server) mutateStream(sess *session, id wire.Identifier,
	check func(streamID uint32) authz.Check, change func(*stream) error) error {
	return s.mutate(func() error {
		st, err := s.streamFor(sess, id, check)
		if err != nil {
			return err
		}
		return change(st)
	})
}

// mutateTopic is mutateStream for a command on one topic.
func (s *Server) mutateTopic(sess *session, sid, tid wire.Identifier,
	check func(streamID, topicID uint32) authz.Check, change func(*topic) error) error {
	return s.mutate(func() error {
		t, err := s.topicFor(sess, sid, tid, check)
		if err != nil {
			return err
		}
		return change(t)
	})
}

// mutateUser is mutateStream for a command that manages a user.
func (s *Server) mutateUser(sess *session, id wire.Identifier, change func(*user) error) error {
	return s.mutate(func() error {
		u, err := s.managedUser(sess, id)
		if err != nil {
			return err
		}
		return change(u)
	})
}

// streamFor resolves a stream and checks the caller may do check on it; a
// missing stream is reported before the permission is looked at. The caller
// holds Server.mu.
func (s *Server) streamFor(sess *session, id wire.Identifier,
	check func(streamID uint32) authz.Check) (*stream, error) {
	st := s.state.stream(id)
	if st == nil {
		return nil, wire.StreamIDNotFound
	}
	if !s.allowed(sess, check(st.id)) {
		return nil, wire.Unauthorized
	}
	return st, nil
}

// topicFor is streamFor for a topic. The caller holds Server.mu.
func (s *Server) topicFor(sess *session, sid, tid wire.Identifier,
	check func(streamID, topicID uint32) authz.Check) (*topic, error) {
	t, err := s.lookupTopic(sid, tid)
	if err != nil {
		return nil, err
	}
	if !s.allowed(sess, check(t.stream.id, t.id)) {
		return nil, wire.Unauthorized
	}
	return t, nil
}

// groupFor is topicFor for a consumer group: a missing group is reported
// before the permission is checked. The caller holds Server.mu.
func (s *Server) groupFor(sess *session, q *wire.GroupRequest,
	check func(streamID, topicID uint32) authz.Check) (*topic, *group, error) {
	t, g, err := s.lookupGroup(q)
	if err != nil {
		return nil, nil, err
	}
	if !s.allowed(sess, check(t.stream.id, t.id)) {
		return nil, nil, wire.Unauthorized
	}
	return t, g, nil
}

// managedUser resolves a user for a command that needs the ManageUsers
// permission, which is checked first: without it the caller learns nothing
// about which users exist. The caller holds Server.mu.
func (s *Server) managedUser(sess *session, id wire.Identifier) (*user, error) {
	if !s.allowed(sess, authz.ManageUsers) {
		return nil, wire.Unauthorized
	}
	u := s.state.user(id)
	if u == nil {
		return nil, wire.ResourceNotFound
	}
	return u, nil
}

// sessionUser is the user the caller is logged in as; the user may have been
// deleted since. The caller holds Server.mu.
func (s *Server) sessionUser(sess *session) (*user, error) {
	u := s.state.user(wire.NumericID(sess.userID))
	if u == nil {
		return nil, wire.ResourceNotFound
	}
	return u, nil
}

// replyAfter appends r to the reply when err is nil and returns err: a
// command that fails answers with its status and an empty body.
func (c *conn) replyAfter(err error, r wire.Body) error {
	if err != nil {
		return err
	}
	c.out = r.AppendTo(c.out)
	return nil
}
