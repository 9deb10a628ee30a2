package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// startNoLog makes the lowest node id the coordinator of every group, with offsets kept as Iggy
// consumer offsets.
func (c *Coordinator) startNoLog() {
	if c.lowestNode() != c.cfg.NodeID {
		return
	}
	gcfg := c.cfg.Groups
	gcfg.Clock = c.clk
	gcfg.Journal = offsetJournal{c: c.cfg.Client, stream: wire.NamedID(c.cfg.Stream)}
	gcfg.Logger = c.log
	c.nolog = group.NewManager(gcfg)
	c.nolog.Restore(nil, nil)
}

// nologLoad is the loading of one group's Iggy offsets into the manager without the log.
type nologLoad struct {
	mu   sync.Mutex
	done bool
}

// nologRestore loads, before a group's first request, every offset Iggy holds for it (the
// consumer named like the group, then the Iggy consumer group of that name, on every partition
// of every topic of the stream) into the manager, so an OffsetFetch of every topic answers
// after a restart what was committed before it. No request of the group reaches the manager
// before this ends, so nothing newer is overwritten.
func (c *Coordinator) nologRestore(name string) error {
	c.nologMu.Lock()
	l := c.nologLoads[name]
	if l == nil {
		l = &nologLoad{}
		c.nologLoads[name] = l
	}
	c.nologMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	topics, err := c.cfg.Client.GetTopics(ctx, wire.NamedID(c.cfg.Stream))
	if err != nil && !errors.Is(err, wire.StreamIDNotFound) {
		return err
	}
	var offsets []record.OffsetCommit
	for _, t := range topics {
		for p := range int32(t.PartitionsCount) {
			off, ok, err := c.cfg.Groups.FallbackOffset(ctx, kafka.Identity{}, name, t.Name, p)
			if err != nil {
				return err
			}
			if ok {
				offsets = append(offsets, record.OffsetCommit{Group: name, Topic: t.Name, Partition: p, Offset: off, LeaderEpoch: -1})
			}
		}
	}
	if len(offsets) > 0 {
		c.nolog.Restore(nil, offsets)
	}
	l.done = true
	return nil
}

// offsetJournal is the Journal without the log: a commit of Kafka offset k (the next record to
// read) is stored as Iggy consumer offset k-1 (the last record consumed) of the Iggy consumer
// named like the Kafka group; a commit of 0 deletes it. A single consumer, not an Iggy consumer
// group: Iggy lets only a member that owns the partition store a group's offset. Group snapshots
// and group deletions have no Iggy counterpart and stay in memory.
type offsetJournal struct {
	c      *iggy.Client
	stream wire.Identifier
}

func (j offsetJournal) Append(ctx context.Context, recs ...record.Record) error {
	for _, r := range recs {
		switch r.Type {
		case record.TypeOffsetCommit:
			o := r.OffsetCommit
			if err := j.store(ctx, o.Group, o.Topic, o.Partition, o.Offset); err != nil {
				return err
			}
		case record.TypeOffsetDeleted:
			o := r.OffsetDeleted
			if err := j.store(ctx, o.Group, o.Topic, o.Partition, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func (j offsetJournal) store(ctx context.Context, groupName, topic string, partition int32, offset int64) error {
	if partition < 0 {
		return fmt.Errorf("coordinator: partition %d: %w", partition, wire.PartitionNotFound)
	}
	tid := wire.NamedID(topic)
	cons := offsetConsumer(groupName)
	if offset <= 0 {
		err := j.c.DeleteOffset(ctx, cons, j.stream, tid, uint32(partition))
		if err == nil || errors.Is(err, wire.ConsumerOffsetNotFound) {
			return nil
		}
		return err
	}
	return j.c.StoreOffset(ctx, cons, j.stream, tid, uint32(partition), uint64(offset-1))
}

func offsetConsumer(group string) wire.Consumer {
	return wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID(group)}
}

// IggyOffsets reads the offset Iggy holds for a Kafka group's partition, as a Kafka committed
// offset (stored + 1): first the consumer named like the group (where the gateway keeps offsets
// without the log), then the Iggy consumer group of that name, so a Kafka group picks up where a
// native Iggy group left off.
func IggyOffsets(c *iggy.Client, stream string) func(ctx context.Context, id kafka.Identity, group, topic string, partition int32) (int64, bool, error) {
	sid := wire.NamedID(stream)
	return func(ctx context.Context, _ kafka.Identity, groupName, topic string, partition int32) (int64, bool, error) {
		if partition < 0 {
			return 0, false, nil
		}
		for _, cons := range []wire.Consumer{offsetConsumer(groupName), {Kind: wire.ConsumerKindGroup, ID: wire.NamedID(groupName)}} {
			off, ok, err := c.GetOffset(ctx, cons, sid, wire.NamedID(topic), uint32(partition))
			if err != nil {
				if errors.Is(err, wire.ResourceNotFound) || errors.Is(err, wire.ConsumerGroupIDNotFound) ||
					errors.Is(err, wire.TopicIDNotFound) || errors.Is(err, wire.StreamIDNotFound) || errors.Is(err, wire.PartitionNotFound) {
					continue
				}
				return 0, false, err
			}
			if ok {
				return int64(off.StoredOffset) + 1, true, nil
			}
		}
		return 0, false, nil
	}
}
