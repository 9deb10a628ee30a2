package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
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

// incarnation is k as the log's topic record holds it.
func (k topicKey) incarnation(name string) record.TopicIncarnation {
	return record.TopicIncarnation{Name: name, ID: k.id, Created: k.created}
}

// topicState is what the resync knows besides the log: the newest topic list read. Which
// incarnation a partition's offsets of a topic belong to is the partition's own, in its log
// (record.TypeTopic, folded by record.State), so a gateway that gains the partition knows it
// whatever list it read last; the list stands in only for a topic the log names no incarnation
// of (offsets written before the log held topic records). mu is held across a resync's read of
// the list and its drops, and across a commit's check, so what a partition holds only ever
// moves to later incarnations.
type topicState struct {
	now  chan struct{}
	mu   sync.Mutex
	last map[string]topicKey
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
// here, drops the offsets of each topic that is missing from it or is another incarnation than
// the one the partition's offsets belong to, then records in the partition's log the incarnation
// its remaining offsets belong to where the log does not say it yet, and that a gone topic's
// incarnation is no longer held.
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
	var firstErr error
	for _, pt := range parts {
		if pt == nil || !pt.serving() {
			continue
		}
		pt.mu.Lock()
		mgr := pt.mgr
		pt.mu.Unlock()
		if mgr == nil {
			continue
		}
		held, _ := pt.topicsHeld()
		gone := func(topic string) bool {
			k, ok := cur[topic]
			if !ok {
				return true
			}
			was, ok := held[topic]
			if !ok {
				was, ok = prevLast[topic]
			}
			return ok && was != k
		}
		err := mgr.DropTopics(ctx, gone)
		if err == nil {
			err = pt.recordTopics(ctx, cur)
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("log partition %d: %w", pt.id, err)
		}
	}
	return firstErr
}

// topicsHeld is what pt's log says its offsets belong to: the incarnation of each topic it names,
// and the topics it holds offsets of.
func (pt *partition) topicsHeld() (map[string]topicKey, map[string]bool) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if pt.st == nil {
		return nil, nil
	}
	held := make(map[string]topicKey)
	for _, t := range pt.st.Topics() {
		held[t.Name] = topicKey{id: t.ID, created: t.Created}
	}
	return held, pt.st.OffsetTopics()
}

// recordTopics appends to pt's log, after a resync's drops, the incarnation in cur of every topic
// pt holds offsets of where the log names another or none, and a gone record for every topic the
// log names that cur does not have.
func (pt *partition) recordTopics(ctx context.Context, cur map[string]topicKey) error {
	held, offs := pt.topicsHeld()
	var recs []record.Record
	for topic := range offs {
		if k, ok := cur[topic]; ok && held[topic] != k {
			t := k.incarnation(topic)
			recs = append(recs, record.Record{Type: record.TypeTopic, Topic: &t})
		}
	}
	for topic := range held {
		if _, ok := cur[topic]; !ok {
			recs = append(recs, record.Record{Type: record.TypeTopic, Topic: &record.TopicIncarnation{Name: topic}})
		}
	}
	slices.SortFunc(recs, func(a, b record.Record) int { return strings.Compare(a.Topic.Name, b.Topic.Name) })
	return journal{pt}.Append(ctx, recs...)
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
// of an earlier one first and recording k in pt's log; a k earlier than what pt holds is refused.
func (c *Coordinator) adoptTopic(ctx context.Context, pt *partition, m *group.Manager, topic string, k topicKey) error {
	c.topics.mu.Lock()
	defer c.topics.mu.Unlock()
	held, _ := pt.topicsHeld()
	was, recorded := held[topic]
	known := recorded
	if !known {
		was, known = c.topics.last[topic]
	}
	switch {
	case recorded && was == k:
		return nil
	case known && was.newer(k):
		return kerr.UnknownTopicOrPartition
	case known && was != k:
		if err := m.DropTopics(ctx, func(name string) bool { return name == topic }); err != nil {
			return err
		}
	}
	t := k.incarnation(topic)
	return journal{pt}.Append(ctx, record.Record{Type: record.TypeTopic, Topic: &t})
}
