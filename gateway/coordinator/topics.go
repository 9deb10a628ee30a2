package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// topicKey tells two topics of one name apart: the store reuses a deleted topic's id slot, so
// the id alone does not, but with its creation time it does.
type topicKey struct {
	id      uint32
	created uint64
}

// newer reports whether k is a later incarnation of its topic than was.
func (k topicKey) newer(was topicKey) bool {
	return k.created > was.created || k.created == was.created && k.id != was.id
}

// topicState is what the resync knows: per served partition, the incarnation of each topic its
// offsets belong to (as of its last resync, or of a commit since: commitTopic), and the newest
// list read, which a newly gained partition starts from. mu is held across a resync's read of
// the list and its drops, so what a partition saw only ever moves to later incarnations.
type topicState struct {
	now  chan struct{}
	mu   sync.Mutex
	last map[string]topicKey
	seen map[*partition]map[string]topicKey
}

// TopicsDeleted makes the resync run now (a DeleteTopics went through); other gateways find the
// deletion at their next TopicResync.
func (c *Coordinator) TopicsDeleted() {
	select {
	case c.topics.now <- struct{}{}:
	default:
	}
}

// topicLoop resyncs the Kafka stream's topic list every TopicResync and when told of a
// deletion.
func (c *Coordinator) topicLoop() {
	c.every(c.cfg.TopicResync, c.cfg.TopicResync, c.topics.now, func() bool {
		if err := c.resyncTopics(c.ctx); err != nil && c.ctx.Err() == nil {
			c.log.Warn("topic resync failed; retried at the next one", "err", err)
		}
		return true
	})
}

// resyncTopics reads the whole topic list of the Kafka stream and, in every partition served
// here, drops the offsets of each topic that is missing from it or was recreated since the
// partition's last resync.
func (c *Coordinator) resyncTopics(ctx context.Context) error {
	c.topics.mu.Lock()
	defer c.topics.mu.Unlock()
	list, err := c.cfg.Client.GetTopics(ctx, wire.NamedID(c.cfg.Stream))
	if err != nil {
		return fmt.Errorf("listing the topics of %s: %w", c.cfg.Stream, err)
	}
	cur := make(map[string]topicKey, len(list))
	for _, t := range list {
		cur[t.Name] = topicKey{id: t.ID, created: t.CreatedAt}
	}
	c.mu.Lock()
	parts := c.parts
	c.mu.Unlock()

	prevLast := c.topics.last
	c.topics.last = cur
	held := make(map[*partition]bool)
	var firstErr error
	for _, pt := range parts {
		if pt == nil {
			continue
		}
		held[pt] = true
		if !pt.serving() {
			continue
		}
		pt.mu.Lock()
		mgr := pt.mgr
		pt.mu.Unlock()
		if mgr == nil {
			continue
		}
		prev, ok := c.topics.seen[pt]
		if !ok {
			prev = prevLast
		}
		gone := func(topic string) bool {
			k, ok := cur[topic]
			if !ok {
				return true
			}
			was, ok := prev[topic]
			return ok && was != k
		}
		if err := mgr.DropTopics(ctx, gone); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("log partition %d: %w", pt.id, err)
			}
			if !ok {
				c.topics.seen[pt] = prev
			}
			continue
		}
		c.topics.seen[pt] = cur
	}
	for pt := range c.topics.seen {
		if !held[pt] {
			delete(c.topics.seen, pt)
		}
	}
	return firstErr
}

// commitTopic is the group.Config.CommitTopic of partition pt. The resync drops a topic's
// offsets when the topic's incarnation differs from the one pt saw at its last resync; a commit
// to a topic deleted and created again since then would be dropped with them, although it
// belongs to the new incarnation. That is the fleet's case: only the gateway that deleted the
// topic resyncs at once, every other one finds the recreation up to TopicResync later, and a
// consumer group coordinated there had its commits to the new topic dropped in between, so
// its next generation read those records again. So before a commit lands, the topic is read
// (one GetTopic); when pt saw an earlier incarnation, that one's offsets are dropped now, ahead
// of the commit in the log, and pt is marked as holding the new one. A read older than what pt
// saw means the topic was created again while this commit was checked: the commit is for a
// topic that no longer exists, UNKNOWN_TOPIC_OR_PARTITION.
func (c *Coordinator) commitTopic(pt *partition) func(ctx context.Context, m *group.Manager, topic string) error {
	return func(ctx context.Context, m *group.Manager, topic string) error {
		t, err := c.cfg.Client.GetTopic(ctx, wire.NamedID(c.cfg.Stream), wire.NamedID(topic))
		if err != nil {
			if errors.Is(err, wire.TopicNameNotFound) || errors.Is(err, wire.TopicIDNotFound) ||
				errors.Is(err, wire.StreamNameNotFound) || errors.Is(err, wire.StreamIDNotFound) {
				return kerr.UnknownTopicOrPartition
			}
			return fmt.Errorf("coordinator: reading topic %s before a commit: %w", topic, err)
		}
		return c.adoptTopic(ctx, pt, m, topic, topicKey{id: t.ID, created: t.CreatedAt})
	}
}

// adoptTopic makes k the incarnation of topic whose offsets partition pt holds, dropping those
// of an earlier one first; a k earlier than what pt holds is refused.
func (c *Coordinator) adoptTopic(ctx context.Context, pt *partition, m *group.Manager, topic string, k topicKey) error {
	c.topics.mu.Lock()
	defer c.topics.mu.Unlock()
	prev, ok := c.topics.seen[pt]
	if !ok {
		prev = c.topics.last
	}
	was, known := prev[topic]
	switch {
	case known && was == k:
		return nil
	case known && was.newer(k):
		return kerr.UnknownTopicOrPartition
	case known:
		if err := m.DropTopics(ctx, func(name string) bool { return name == topic }); err != nil {
			return err
		}
	}
	next := maps.Clone(prev)
	if next == nil {
		next = make(map[string]topicKey)
	}
	next[topic] = k
	c.topics.seen[pt] = next
	return nil
}
