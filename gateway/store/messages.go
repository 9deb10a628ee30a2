package store

import (
	"errors"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

func init() {
	writeHandlers[wire.CmdSendMessages] = (*conn).sendMessages
	readHandlers[wire.CmdPollMessages] = (*conn).pollMessages
	readHandlers[wire.CmdFlushUnsavedBuffer] = (*conn).flushUnsavedBuffer
}

// pollBudget keeps a poll reply inside one frame.
const pollBudget = wire.MaxFrameSize - wire.HeaderSize - wire.PollPrefixSize

// sendMessages validates the batch where it lies in the request frame and
// appends it to the partition log: the frame buffer is the only copy.
func (c *conn) sendMessages(sess *session, body []byte) error {
	var q wire.SendMessages
	if err := q.Decode(body); err != nil {
		return wire.InvalidCommand
	}
	if c.local != nil && c.local.tail != nil && len(q.Batch) == 0 {
		q.Batch = c.local.tail // Local.Exchange: the batch follows the body in the caller's memory
	}
	validate := message.Validate
	if c.local != nil {
		// In-process callers build their batches with message.Builder, which has just
		// computed every message checksum; the batch checksum over them is still checked.
		validate = message.ValidateBuilt
	}
	n, err := validate(q.Batch)
	if err != nil {
		if code := message.Code(err); code != 0 {
			return wire.Code(code)
		}
		return wire.InvalidFormat
	}
	if n != q.MessagesCount {
		return wire.InvalidMessagesCount
	}
	s := c.s
	s.mu.RLock()
	t, err := s.lookupTopic(q.Stream, q.Topic)
	if err != nil {
		s.mu.RUnlock()
		return wire.ResourceNotFound
	}
	if sess.userID != 0 && !s.allowed(sess, authz.Send(t.stream.id, t.id)) {
		s.mu.RUnlock()
		return wire.Unauthorized
	}
	nparts := uint32(len(t.partitions))
	if nparts == 0 {
		s.mu.RUnlock()
		return wire.ResourceNotFound
	}
	var pid uint32
	switch q.Partitioning.Kind {
	case wire.PartitionBalanced:
		pid = (t.rr.Add(1) - 1) % nparts
	case wire.PartitionByID:
		pid = q.Partitioning.PartitionID
	case wire.PartitionByMessageKey:
		pid = xxh32(q.Partitioning.Key) % nparts
	}
	p := t.partition(pid)
	streamID, topicID := t.stream.id, t.id
	s.mu.RUnlock()
	if p == nil {
		return wire.ResourceNotFound
	}
	base, err := p.log.Append(q.Batch, time.Now())
	if err != nil {
		if errors.Is(err, partlog.ErrClosed) {
			// The partition was deleted while the batch was on its way.
			return wire.ResourceNotFound
		}
		return err
	}
	if h := s.cfg.UnreportedOffsets; h != nil && h(q.Topic, pid) {
		// Committed, no offsets to report: the real server's answer when it cannot resolve them.
		c.out = append(c.out, 0, 0, 0, 0)
		return nil
	}
	c.out = wire.AppendSendConfirmation(c.out, wire.SendConfirmation{
		StreamID: streamID, TopicID: topicID, PartitionID: pid, BaseOffset: base,
	})
	return nil
}

// singleConsumerKey is the offset key of a single consumer: its numeric id,
// or XXH32 of its name.
func singleConsumerKey(id wire.Identifier) uint32 {
	if id.IsNumeric() {
		return id.ID
	}
	return xxh32([]byte(id.Name))
}

func (c *conn) emptyPoll(partitionID uint32, current uint64) error {
	c.out = wire.AppendPollPrefix(c.out, wire.PollReplyPrefix{PartitionID: partitionID, CurrentOffset: current})
	return nil
}

// pollMessages serves protocol 8.5. Failures of a group consumer's
// resolution answer with the resync sentinel rather than an error, so the
// client re-syncs its assignment.
func (c *conn) pollMessages(sess *session, body []byte) error {
	var q wire.PollMessages
	if err := q.Decode(body); err != nil {
		return c.emptyPoll(0, 0)
	}
	s := c.s
	isGroup := q.Consumer.Kind == wire.ConsumerKindGroup
	s.mu.RLock()
	st := s.state.stream(q.Stream)
	var t *topic
	if st != nil {
		t = st.topic(q.Topic)
	}
	var (
		p   *partition
		key consumerKey
		m   *member
	)
	if isGroup {
		if !q.Partition.Present {
			s.mu.RUnlock()
			return c.emptyPoll(0, 0)
		}
		var g *group
		if t != nil {
			g = t.group(q.Consumer.ID)
			p = t.partition(q.Partition.ID)
		}
		if g != nil {
			m = g.memberOf(sess)
		}
		if g == nil || p == nil || m == nil || !m.canPoll(p.id) {
			s.mu.RUnlock()
			return c.emptyPoll(wire.PartitionResync, 0)
		}
		key = consumerKey{kind: wire.ConsumerKindGroup, id: g.id}
	} else {
		switch {
		case st == nil:
			s.mu.RUnlock()
			return wire.StreamIDNotFound
		case t == nil:
			s.mu.RUnlock()
			return wire.TopicIDNotFound
		}
		pid := uint32(0)
		if q.Partition.Present {
			pid = q.Partition.ID
		}
		if p = t.partition(pid); p == nil {
			s.mu.RUnlock()
			return wire.PartitionNotFound
		}
		key = consumerKey{kind: wire.ConsumerKindSingle, id: singleConsumerKey(q.Consumer.ID)}
	}
	if sess.userID != 0 && !s.allowed(sess, authz.Poll(t.stream.id, t.id)) {
		s.mu.RUnlock()
		return wire.Unauthorized
	}
	stored, hasStored := p.offsets[key]
	s.mu.RUnlock()

	l := p.log
	next := l.NextOffset()
	current := currentOffset(l)
	prefixAt := len(c.out)
	c.out = wire.AppendPollPrefix(c.out, wire.PollReplyPrefix{PartitionID: p.id, CurrentOffset: current})
	if q.Count == 0 || next == 0 {
		return nil
	}
	var start uint64
	switch q.Strategy.Kind {
	case wire.PollOffset:
		start = q.Strategy.Value
	case wire.PollTimestamp:
		off, ok := l.OffsetForTimestamp(q.Strategy.Value)
		if !ok {
			return nil
		}
		start = off
	case wire.PollFirst:
		start = l.FirstOffset()
	case wire.PollLast:
		if uint64(q.Count) <= next {
			start = next - uint64(q.Count)
		}
	case wire.PollNext:
		if hasStored {
			start = stored + 1
		}
	}
	start = max(start, l.FirstOffset())
	if start >= next {
		return nil
	}
	out, n, err := l.ReadLimit(start, q.Count, pollBudget, c.out)
	if err != nil {
		c.out = c.out[:prefixAt]
		if errors.Is(err, partlog.ErrClosed) {
			return wire.ResourceNotFound
		}
		return err
	}
	c.out = out
	if n == 0 {
		return nil
	}
	wire.PutPollPrefix(c.out[prefixAt:], wire.PollReplyPrefix{PartitionID: p.id, CurrentOffset: current, MessagesCount: n})
	last := start + uint64(n) - 1
	if q.AutoCommit || m != nil {
		s.mu.Lock()
		if q.AutoCommit {
			p.offsets[key] = last
			s.offDirty.Store(true)
		}
		if m != nil {
			m.notePolled(p.id, last)
		}
		s.mu.Unlock()
	}
	return nil
}

// flushUnsavedBuffer is refused like the official server does: appends are
// already handed to the log when they are acknowledged.
func (c *conn) flushUnsavedBuffer(*session, []byte) error {
	return wire.FeatureUnavailable
}
