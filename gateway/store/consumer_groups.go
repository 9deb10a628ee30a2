package store

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetConsumerGroup] = (*conn).getConsumerGroup
	readHandlers[wire.CmdGetConsumerGroups] = (*conn).getConsumerGroups
	readHandlers[wire.CmdSyncConsumerGroup] = (*conn).syncConsumerGroup
	writeHandlers[wire.CmdCreateConsumerGroup] = (*conn).createConsumerGroup
	writeHandlers[wire.CmdDeleteConsumerGroup] = (*conn).deleteConsumerGroup
	writeHandlers[wire.CmdJoinConsumerGroup] = (*conn).joinConsumerGroup
	writeHandlers[wire.CmdLeaveConsumerGroup] = (*conn).leaveConsumerGroup
}

func groupInfo(g *group) wire.ConsumerGroup {
	return wire.ConsumerGroup{
		ID: g.id, PartitionsCount: uint32(len(g.topic.partitions)),
		MembersCount: uint32(g.memberCount()), Name: g.name,
	}
}

func groupDetails(g *group) wire.ConsumerGroupDetails {
	d := wire.ConsumerGroupDetails{ConsumerGroup: groupInfo(g)}
	for _, m := range g.members {
		if m != nil {
			d.Members = append(d.Members, wire.GroupMember{ID: m.slot, Partitions: append([]uint32(nil), m.owned...)})
		}
	}
	return d
}

// lookupGroup resolves a group request with the typed not-found codes.
// The caller holds Server.mu.
func (s *Server) lookupGroup(q *wire.GroupRequest) (*topic, *group, error) {
	t, err := s.lookupTopic(q.Stream, q.Topic)
	if err != nil {
		return nil, nil, err
	}
	g := t.group(q.Group)
	if g == nil {
		return t, nil, wire.ConsumerGroupIDNotFound
	}
	return t, g, nil
}

func (c *conn) getConsumerGroup(sess *session, body []byte) error {
	var q wire.GroupRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, g, err := s.lookupGroup(&q)
	if t == nil {
		return err
	}
	if !s.allowed(sess, authz.ReadTopic(t.stream.id, t.id)) {
		return wire.Unauthorized
	}
	if g == nil {
		return nil
	}
	d := groupDetails(g)
	c.out = d.AppendTo(c.out)
	return nil
}

func (c *conn) getConsumerGroups(sess *session, body []byte) error {
	var q wire.TopicRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.topicFor(sess, q.Stream, q.Topic, authz.ReadTopic)
	if err != nil {
		return err
	}
	for _, g := range t.groups {
		if g != nil {
			info := groupInfo(g)
			c.out = info.AppendTo(c.out)
		}
	}
	return nil
}

func (c *conn) syncConsumerGroup(sess *session, body []byte) error {
	var q wire.GroupRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, g, err := s.lookupGroup(&q)
	if err != nil {
		return nil
	}
	g.settle(s.now())
	m := g.memberOf(sess)
	if m == nil {
		return nil
	}
	a := wire.GroupAssignment{Generation: g.generation, Partitions: m.pollable()}
	c.out = a.AppendTo(c.out)
	return nil
}

func (c *conn) createConsumerGroup(sess *session, body []byte) error {
	var q wire.CreateConsumerGroup
	if err := decode(&q, body); err != nil {
		return err
	}
	if !wire.ValidName(q.Name) {
		return wire.InvalidConsumerGroupName
	}
	s := c.s
	var d wire.ConsumerGroupDetails
	err := s.mutateTopic(sess, q.Stream, q.Topic, authz.Poll, func(t *topic) error {
		if t.group(wire.NamedID(q.Name)) != nil {
			return wire.ConsumerGroupNameAlreadyExists
		}
		g := &group{topic: t, id: t.nextGroupID, name: q.Name}
		t.nextGroupID++
		for uint32(len(t.groups)) < g.id {
			t.groups = append(t.groups, nil)
		}
		t.groups = append(t.groups, g)
		d = groupDetails(g)
		return nil
	})
	return c.replyAfter(err, &d)
}

func (c *conn) deleteConsumerGroup(sess *session, body []byte) error {
	var q wire.GroupRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	return s.mutate(func() error {
		t, g, err := s.groupFor(sess, &q, authz.Poll)
		if err != nil {
			return err
		}
		g.dissolve()
		t.groups[g.id] = nil
		key := consumerKey{kind: wire.ConsumerKindGroup, id: g.id}
		for _, p := range t.partitions {
			delete(p.offsets, key)
		}
		return nil
	})
}

func (c *conn) joinConsumerGroup(sess *session, body []byte) error {
	var q wire.GroupRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, g, err := s.groupFor(sess, &q, authz.Poll)
	if err != nil {
		return err
	}
	if c.sess != sess {
		return wire.Unauthenticated
	}
	g.join(sess, s.now(), s.cfg.HeartbeatInterval)
	s.offDirty.Store(true) // membership is kept in the metadata document, as the real server does
	return nil
}

func (c *conn) leaveConsumerGroup(sess *session, body []byte) error {
	var q wire.GroupRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	_, g, err := s.lookupGroup(&q)
	if err != nil {
		return err
	}
	if !g.leave(sess) {
		return wire.ConsumerGroupMemberNotFound
	}
	s.offDirty.Store(true)
	return nil
}
