package coordinator

import (
	"context"
	"fmt"
	"sync"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// topicKey tells two topics of one name apart: the store reuses a deleted topic's id slot, so
// the id alone does not, but with its creation time it does.
type topicKey struct {
	id      uint32
	created uint64
}

// topicState is what the resync knows: per served partition, the topics as of its last
// successful drop, and the newest list read, which a newly gained partition starts from.
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

	c.topics.mu.Lock()
	defer c.topics.mu.Unlock()
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
