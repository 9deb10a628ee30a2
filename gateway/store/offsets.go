package store

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetConsumerOffset] = (*conn).getConsumerOffset
	writeHandlers[wire.CmdStoreConsumerOffset] = (*conn).storeConsumerOffset
	writeHandlers[wire.CmdDeleteConsumerOffset] = (*conn).deleteConsumerOffset
}

// offsetTarget resolves the partition and offset key of an offset request.
// The caller holds Server.mu. notFound is what to answer when the request
// does not resolve; a nil partition with a nil error means "empty reply".
func (s *Server) offsetTarget(sess *session, cons wire.Consumer, sid, tid wire.Identifier,
	part wire.OptionalPartition, write bool) (*topic, *partition, consumerKey, *group, error) {
	fail := func(read error) (*topic, *partition, consumerKey, *group, error) {
		if write {
			return nil, nil, consumerKey{}, nil, wire.ResourceNotFound
		}
		return nil, nil, consumerKey{}, nil, read
	}
	if write && !part.Present {
		return fail(nil)
	}
	t, err := s.lookupTopic(sid, tid)
	if err != nil {
		return fail(nil)
	}
	var g *group
	key := consumerKey{kind: wire.ConsumerKindSingle, id: singleConsumerKey(cons.ID)}
	if cons.Kind == wire.ConsumerKindGroup {
		if g = t.group(cons.ID); g == nil {
			return fail(nil)
		}
		key = consumerKey{kind: wire.ConsumerKindGroup, id: g.id}
	}
	pid := uint32(0)
	if part.Present {
		pid = part.ID
	}
	p := t.partition(pid)
	if p == nil {
		return fail(wire.PartitionNotFound)
	}
	return t, p, key, g, nil
}

// writableOffset is offsetTarget for a store or delete: the caller needs
// the poll permission and, for a group offset, must own the partition in the
// group. The caller holds Server.mu.
func (s *Server) writableOffset(sess *session, cons wire.Consumer, sid, tid wire.Identifier,
	part wire.OptionalPartition) (*partition, consumerKey, *group, error) {
	t, p, key, g, err := s.offsetTarget(sess, cons, sid, tid, part, true)
	if err != nil {
		return nil, consumerKey{}, nil, err
	}
	if !s.allowed(sess, authz.Poll(t.stream.id, t.id)) {
		return nil, consumerKey{}, nil, wire.Unauthorized
	}
	if g != nil {
		if m := g.memberOf(sess); m == nil || !m.owns(p.id) {
			return nil, consumerKey{}, nil, wire.ResourceNotFound
		}
	}
	return p, key, g, nil
}

func (c *conn) getConsumerOffset(sess *session, body []byte) error {
	var q wire.GetConsumerOffset
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, p, key, _, err := s.offsetTarget(sess, q.Consumer, q.Stream, q.Topic, q.Partition, false)
	if err != nil || p == nil {
		return err
	}
	if !s.allowed(sess, authz.Poll(t.stream.id, t.id)) {
		return wire.Unauthorized
	}
	stored, ok := p.offsets[key]
	if !ok {
		return nil
	}
	reply := wire.ConsumerOffset{PartitionID: p.id, CurrentOffset: currentOffset(p.log), StoredOffset: stored}
	c.out = reply.AppendTo(c.out)
	return nil
}

func (c *conn) storeConsumerOffset(sess *session, body []byte) error {
	var q wire.StoreConsumerOffset
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p, key, g, err := s.writableOffset(sess, q.Consumer, q.Stream, q.Topic, q.Partition)
	if err != nil {
		return err
	}
	next := p.log.NextOffset()
	if next == 0 || q.Offset > next-1 {
		return wire.InvalidOffset
	}
	p.offsets[key] = q.Offset
	s.offDirty.Store(true)
	if g != nil {
		// A commit may be what a pending hand-off waits for.
		g.settle(s.now())
	}
	return nil
}

func (c *conn) deleteConsumerOffset(sess *session, body []byte) error {
	var q wire.DeleteConsumerOffset
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p, key, _, err := s.writableOffset(sess, q.Consumer, q.Stream, q.Topic, q.Partition)
	if err != nil {
		return err
	}
	if _, ok := p.offsets[key]; !ok {
		return wire.ConsumerOffsetNotFound
	}
	delete(p.offsets, key)
	s.offDirty.Store(true)
	return nil
}
