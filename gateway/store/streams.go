package store

import (
	"errors"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"os"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetStream] = (*conn).getStream
	readHandlers[wire.CmdGetStreams] = (*conn).getStreams
	writeHandlers[wire.CmdCreateStream] = (*conn).createStream
	writeHandlers[wire.CmdUpdateStream] = (*conn).updateStream
	writeHandlers[wire.CmdDeleteStream] = (*conn).deleteStream
	writeHandlers[wire.CmdPurgeStream] = (*conn).purgeStream
}

// decode is the common failure path of request bodies: a body that does
// not parse is InvalidCommand, as in the official server.
func decode(b wire.Body, body []byte) error {
	if err := b.Decode(body); err != nil {
		return wire.InvalidCommand
	}
	return nil
}

func streamInfo(st *stream) wire.Stream {
	size, msgs := st.stats()
	return wire.Stream{
		ID: st.id, CreatedAt: st.createdAt, TopicsCount: uint32(st.topicCount()),
		SizeBytes: size, MessagesCount: msgs, Name: st.name,
	}
}

func streamDetails(st *stream) wire.StreamDetails {
	d := wire.StreamDetails{Stream: streamInfo(st)}
	for _, t := range st.topics {
		if t != nil {
			d.Topics = append(d.Topics, topicInfo(t))
		}
	}
	return d
}

func (c *conn) getStream(sess *session, body []byte) error {
	var q wire.StreamRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.state.stream(q.Stream)
	if st == nil {
		return nil
	}
	if !s.allowed(sess, authz.ReadStream(st.id)) {
		return wire.Unauthorized
	}
	d := streamDetails(st)
	c.out = d.AppendTo(c.out)
	return nil
}

func (c *conn) getStreams(sess *session, body []byte) error {
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.allowed(sess, authz.ReadStreams) {
		return wire.Unauthorized
	}
	for _, st := range s.state.streams {
		if st != nil {
			info := streamInfo(st)
			c.out = info.AppendTo(c.out)
		}
	}
	return nil
}

// noOptions refuses any key in a stream or user options block.
func noOptions(block []byte) error {
	n, err := wire.ValidateOptions(block)
	if err != nil {
		return wire.InvalidOptionValue
	}
	if n > 0 {
		return wire.UnsupportedOptionKey
	}
	return nil
}

func (c *conn) createStream(sess *session, body []byte) error {
	var q wire.CreateStream
	if err := decode(&q, body); err != nil {
		return err
	}
	if !wire.ValidName(q.Name) {
		return wire.InvalidStreamName
	}
	if err := noOptions(q.Options); err != nil {
		return err
	}
	s := c.s
	var d wire.StreamDetails
	err := s.mutate(func() error {
		if !s.allowed(sess, authz.ManageStreams) {
			return wire.Unauthorized
		}
		if s.state.streamByName(q.Name) != nil {
			return wire.StreamNameAlreadyExists
		}
		slot := freeSlot(s.state.streams)
		if slot >= maxStreams {
			return wire.TooManyStreams
		}
		// A directory at a reused id is what a crash during an earlier
		// delete left behind.
		if err := os.RemoveAll(s.streamDir(uint32(slot))); err != nil {
			return err
		}
		st := &stream{id: uint32(slot), name: q.Name, createdAt: nowMicros()}
		s.state.streams = putSlot(s.state.streams, slot, st)
		d = streamDetails(st)
		return nil
	})
	return c.replyAfter(err, &d)
}

func (c *conn) updateStream(sess *session, body []byte) error {
	var q wire.UpdateStream
	if err := decode(&q, body); err != nil {
		return err
	}
	if !wire.ValidName(q.Name) {
		return wire.InvalidStreamName
	}
	if err := noOptions(q.Options); err != nil {
		return err
	}
	s := c.s
	return s.mutateStream(sess, q.Stream, authz.ManageStream, func(st *stream) error {
		if other := s.state.streamByName(q.Name); other != nil && other != st {
			return wire.StreamNameAlreadyExists
		}
		st.name = q.Name
		return nil
	})
}

func (c *conn) deleteStream(sess *session, body []byte) error {
	var q wire.StreamRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	var gone *stream // set once the stream is out of the state
	var logs []partLog
	var trash string
	err := s.mutateStream(sess, q.Stream, authz.ManageStream, func(st *stream) error {
		var err error
		if trash, err = s.trashLocked(s.streamDir(st.id)); err != nil {
			return err
		}
		for _, t := range st.topics {
			if t != nil {
				logs = append(logs, detachTopic(t)...)
			}
		}
		s.state.streams[st.id] = nil
		gone = st
		return nil
	})
	if gone == nil {
		return err
	}
	if s.afterDelete != nil {
		s.afterDelete()
	}
	for _, l := range logs {
		err = errors.Join(err, l.Close())
	}
	s.removeTrash(trash)
	return err
}

// detachTopic dissolves a topic's groups and returns its logs for closing.
// The caller holds Server.mu.
func detachTopic(t *topic) []partLog {
	for _, g := range t.groups {
		if g != nil {
			g.dissolve()
		}
	}
	logs := make([]partLog, 0, len(t.partitions))
	for _, p := range t.partitions {
		logs = append(logs, p.log)
	}
	return logs
}

func (c *conn) purgeStream(sess *session, body []byte) error {
	var q wire.StreamRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.streamFor(sess, q.Stream, authz.ManageStream)
	if err != nil {
		return err
	}
	for _, t := range st.topics {
		if t != nil {
			if err := purgeTopicLocked(t); err != nil {
				return err
			}
		}
	}
	return s.commitLocked()()
}

// purgeTopicLocked empties every partition: offsets restart at 0 and stored
// consumer offsets are cleared (protocol 7.3).
func purgeTopicLocked(t *topic) error {
	for _, p := range t.partitions {
		if err := p.log.Purge(); err != nil {
			return err
		}
		clear(p.offsets)
	}
	return nil
}
