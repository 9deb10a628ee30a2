package store

import (
	"errors"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"os"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func init() {
	readHandlers[wire.CmdGetTopic] = (*conn).getTopic
	readHandlers[wire.CmdGetTopics] = (*conn).getTopics
	writeHandlers[wire.CmdCreateTopic] = (*conn).createTopic
	writeHandlers[wire.CmdUpdateTopic] = (*conn).updateTopic
	writeHandlers[wire.CmdDeleteTopic] = (*conn).deleteTopic
	writeHandlers[wire.CmdPurgeTopic] = (*conn).purgeTopic
	writeHandlers[wire.CmdCreatePartitions] = (*conn).createPartitions
	writeHandlers[wire.CmdDeletePartitions] = (*conn).deletePartitions
	writeHandlers[wire.CmdDeleteSegments] = (*conn).deleteSegments
}

func topicInfo(t *topic) wire.Topic {
	size, msgs := t.stats()
	return wire.Topic{
		ID: t.id, CreatedAt: t.createdAt, PartitionsCount: uint32(len(t.partitions)),
		MessageExpiry: t.opts.MessageExpiry, CompressionAlgorithm: t.opts.Compression,
		MaxTopicSize: t.opts.MaxTopicSize, SizeBytes: size, MessagesCount: msgs,
		Name: t.name, Options: t.opts.Explicit, DerivedOptions: t.opts.Derived,
	}
}

func partitionInfo(p *partition, fresh bool) wire.Partition {
	info := wire.Partition{
		ID: p.id, CreatedAt: p.createdAt, SegmentsCount: uint32(p.log.SegmentCount()),
		SizeBytes: p.log.SizeBytes(), MessagesCount: p.log.MessageCount(),
		CurrentOffset: currentOffset(p.log),
	}
	if fresh {
		info.SegmentsCount = 0
	} else if info.SegmentsCount == 0 {
		info.SegmentsCount = 1
	}
	return info
}

// currentOffset is the highest stored offset, 0 for an empty partition.
func currentOffset(l partLog) uint64 {
	if n := l.NextOffset(); n > 0 {
		return n - 1
	}
	return 0
}

func topicDetails(t *topic, fresh bool) wire.TopicDetails {
	d := wire.TopicDetails{Topic: topicInfo(t)}
	for _, p := range t.partitions {
		d.Partitions = append(d.Partitions, partitionInfo(p, fresh))
	}
	return d
}

// lookupTopic resolves stream and topic with the typed not-found codes.
// The caller holds Server.mu.
func (s *Server) lookupTopic(sid, tid wire.Identifier) (*topic, error) {
	st := s.state.stream(sid)
	if st == nil {
		return nil, wire.StreamIDNotFound
	}
	t := st.topic(tid)
	if t == nil {
		return nil, wire.TopicIDNotFound
	}
	return t, nil
}

func (c *conn) getTopic(sess *session, body []byte) error {
	var q wire.TopicRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.lookupTopic(q.Stream, q.Topic)
	if err != nil {
		return nil // an empty body is how a read says "not found"
	}
	if !s.allowed(sess, authz.ReadTopic(t.stream.id, t.id)) {
		return wire.Unauthorized
	}
	d := topicDetails(t, false)
	c.out = d.AppendTo(c.out)
	return nil
}

func (c *conn) getTopics(sess *session, body []byte) error {
	var q wire.StreamRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	defer s.mu.RUnlock()
	var list wire.TopicList
	if st := s.state.stream(q.Stream); st != nil {
		if !s.allowed(sess, authz.ReadStream(st.id)) {
			return wire.Unauthorized
		}
		for _, t := range st.topics {
			if t != nil {
				list = append(list, topicInfo(t))
			}
		}
	}
	c.out = list.AppendTo(c.out)
	return nil
}

func (c *conn) createTopic(sess *session, body []byte) error {
	var q wire.CreateTopic
	if err := decode(&q, body); err != nil {
		return err
	}
	if !wire.ValidName(q.Name) {
		return wire.InvalidTopicName
	}
	if q.PartitionsCount > maxPartitionsPerReq {
		return wire.TooManyPartitions
	}
	opts, err := admitTopicOptions(q.Options, topicDefaults, false)
	if err != nil {
		return err
	}
	if !opts.preallocateOK(q.PartitionsCount) {
		return wire.InvalidOptionValue
	}
	s := c.s
	var d wire.TopicDetails
	err = s.mutateStream(sess, q.Stream, authz.ManageTopics, func(st *stream) error {
		if st.topicByName(q.Name) != nil {
			return wire.TopicNameAlreadyExists
		}
		slot := freeSlot(st.topics)
		if slot >= maxTopicsPerStream {
			return wire.TooManyTopics
		}
		if err := os.RemoveAll(s.topicDir(st.id, uint32(slot))); err != nil {
			return err
		}
		t := &topic{stream: st, id: uint32(slot), name: q.Name, createdAt: nowMicros(), opts: opts}
		for i := range q.PartitionsCount {
			p, err := s.openPartition(st.id, t.id, i, nowMicros(), opts)
			if err != nil {
				for _, p := range t.partitions {
					_ = p.log.Close()
				}
				return err
			}
			t.partitions = append(t.partitions, p)
		}
		st.topics = putSlot(st.topics, slot, t)
		d = topicDetails(t, true)
		return nil
	})
	return c.replyAfter(err, &d)
}

func (c *conn) updateTopic(sess *session, body []byte) error {
	var q wire.UpdateTopic
	if err := decode(&q, body); err != nil {
		return err
	}
	if !wire.ValidName(q.Name) {
		return wire.InvalidTopicName
	}
	s := c.s
	return s.mutateTopic(sess, q.Stream, q.Topic, authz.ManageTopic, func(t *topic) error {
		if other := t.stream.topicByName(q.Name); other != nil && other != t {
			return wire.TopicNameAlreadyExists
		}
		opts, err := admitTopicOptions(q.Options, t.opts, true)
		if err != nil {
			return err
		}
		t.name = q.Name
		t.opts = opts
		return nil
	})
}

func (c *conn) deleteTopic(sess *session, body []byte) error {
	var q wire.TopicRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	var gone *topic // set once the topic is out of the state
	var logs []partLog
	var trash string
	err := s.mutateTopic(sess, q.Stream, q.Topic, authz.ManageTopic, func(t *topic) error {
		var err error
		if trash, err = s.trashLocked(s.topicDir(t.stream.id, t.id)); err != nil {
			return err
		}
		logs = detachTopic(t)
		t.stream.topics[t.id] = nil
		gone = t
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

func (c *conn) purgeTopic(sess *session, body []byte) error {
	var q wire.TopicRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.topicFor(sess, q.Stream, q.Topic, authz.ManageTopic)
	if err != nil {
		return err
	}
	if err := purgeTopicLocked(t); err != nil {
		return err
	}
	return s.commitLocked()()
}

func (c *conn) createPartitions(sess *session, body []byte) error {
	var q wire.PartitionsRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	if q.Count == 0 || q.Count > maxPartitionsPerReq {
		return wire.TooManyPartitions
	}
	s := c.s
	return s.mutateTopic(sess, q.Stream, q.Topic, authz.ManageTopic, func(t *topic) error {
		if uint64(len(t.partitions))+uint64(q.Count) > 1_000_000 {
			return wire.PartitionIDSpaceExhausted
		}
		for range q.Count {
			id := uint32(len(t.partitions))
			if err := os.RemoveAll(s.partitionDir(t.stream.id, t.id, id)); err != nil {
				return err
			}
			p, err := s.openPartition(t.stream.id, t.id, id, nowMicros(), t.opts)
			if err != nil {
				return err
			}
			t.partitions = append(t.partitions, p)
		}
		rebalanceTopic(t)
		return nil
	})
}

func (c *conn) deletePartitions(sess *session, body []byte) error {
	var q wire.PartitionsRequest
	if err := decode(&q, body); err != nil {
		return err
	}
	if q.Count == 0 || q.Count > maxPartitionsPerReq {
		return wire.TooManyPartitions
	}
	s := c.s
	var removed []*partition
	var trash []string
	err := s.mutateTopic(sess, q.Stream, q.Topic, authz.ManageTopic, func(t *topic) error {
		if int(q.Count) > len(t.partitions) {
			return wire.InvalidPartitionsCount
		}
		keep := len(t.partitions) - int(q.Count)
		for _, p := range t.partitions[keep:] {
			dir, err := s.trashLocked(p.dir)
			if err != nil {
				// Put back what was moved aside: nothing is deleted.
				for i, d := range trash {
					_ = os.Rename(d, t.partitions[keep+i].dir)
				}
				trash = nil
				return err
			}
			trash = append(trash, dir)
		}
		removed = append([]*partition(nil), t.partitions[keep:]...)
		t.partitions = t.partitions[:keep]
		rebalanceTopic(t)
		return nil
	})
	for _, p := range removed {
		err = errors.Join(err, p.log.Close())
	}
	for _, dir := range trash {
		s.removeTrash(dir)
	}
	return err
}

// rebalanceTopic redistributes every group of t after a partition change.
func rebalanceTopic(t *topic) {
	for _, g := range t.groups {
		if g != nil && g.memberCount() > 0 {
			g.rebalance()
		}
	}
}

func (c *conn) deleteSegments(sess *session, body []byte) error {
	var q wire.DeleteSegments
	if err := decode(&q, body); err != nil {
		return err
	}
	s := c.s
	s.mu.RLock()
	t, err := s.topicFor(sess, q.Stream, q.Topic, authz.ManageTopic)
	var p *partition
	if err == nil {
		p = t.partition(q.PartitionID)
	}
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if p == nil {
		return wire.PartitionNotFound
	}
	if q.SegmentsCount == 0 {
		return nil
	}
	return p.log.DeleteOldestSegments(int(q.SegmentsCount))
}
