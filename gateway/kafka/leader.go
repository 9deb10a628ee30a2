package kafka

import (
	"slices"
	"sync"

	"github.com/iggy-kafka/iggy-kafka/gateway/rendezvous"
)

// partitionLeaders is the node Metadata names as leader of each of the partitions of topic,
// among leaders: the fleet's rendezvous rule (package rendezvous) over the leaders' node ids,
// each partition scored with the topic's name, so every topic's partitions are spread as evenly
// as they can be (⌊p/n⌋ or ⌈p/n⌉ each) and a gateway that leaves the view hands over its own
// partitions and few others. Any gateway can serve any partition, so the choice only spreads
// client load and lets clients keep their connections when the fleet changes; every gateway
// with the same view computes the same leaders, whatever the order of leaders.
func partitionLeaders(topic string, partitions int32, leaders []Broker) []int32 {
	if partitions <= 0 || len(leaders) == 0 {
		return nil
	}
	nodes := make([]uint32, len(leaders))
	for i, b := range leaders {
		nodes[i] = uint32(b.NodeID)
	}
	h := topicHash(topic)
	held := rendezvous.Assign(int(partitions), nodes, func(p int, node uint32) uint64 {
		return rendezvous.Mix(rendezvous.Mix(h^uint64(p)) ^ uint64(node))
	})
	out := make([]int32, len(held))
	for i, n := range held {
		out[i] = int32(n)
	}
	return out
}

// topicHash is FNV-1a (64-bit) of the topic name.
func topicHash(topic string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(topic); i++ {
		h ^= uint64(topic[i])
		h *= 1099511628211
	}
	return h
}

// leaderCache keeps partitionLeaders' answer per topic for the view it was computed in, so that
// Metadata of a topic with many partitions costs one computation per change of the fleet.
type leaderCache struct {
	mu sync.Mutex
	m  map[string]leaderEntry
}

type leaderEntry struct {
	partitions int32
	nodes      []int32
	leaders    []int32
}

// leaderCacheTopics bounds the cache: past it, it starts again empty.
const leaderCacheTopics = 4096

// get returns the leaders of topic's partitions among leaders; the slice is shared, not to be
// changed.
func (c *leaderCache) get(topic string, partitions int32, leaders []Broker) []int32 {
	nodes := make([]int32, len(leaders))
	for i, b := range leaders {
		nodes[i] = b.NodeID
	}
	slices.Sort(nodes)
	c.mu.Lock()
	e, ok := c.m[topic]
	c.mu.Unlock()
	if ok && e.partitions == partitions && slices.Equal(e.nodes, nodes) {
		return e.leaders
	}
	e = leaderEntry{partitions: partitions, nodes: nodes, leaders: partitionLeaders(topic, partitions, leaders)}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= leaderCacheTopics {
		c.m = make(map[string]leaderEntry)
	}
	c.m[topic] = e
	c.mu.Unlock()
	return e.leaders
}
