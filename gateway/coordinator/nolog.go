package coordinator

import (
	"container/list"
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

// Bounds of the loads of groups' Iggy offsets without the log, each keyed by a group name a
// client sent: a load costs a GetTopics and two GetOffset per partition of every topic of the
// stream.
const (
	// maxNologLoads is how many group names whose load ended are remembered, the least recently
	// requested forgotten past it. A forgotten group the manager holds is not loaded again (its
	// memory is newer than Iggy); one it does not hold is, at its next request.
	maxNologLoads = 1024
	// nologLoadsAtOnce is how many loads run at once; the others wait for a turn.
	nologLoadsAtOnce = 4
)

// nologLoads is what a gateway without the log knows of the loads of groups' Iggy offsets.
type nologLoads struct {
	mu     sync.Mutex
	byName map[string]*nologLoad
	// ended holds the names whose load ended, least recently requested first; a name whose
	// load runs or failed is in byName only, which the requests waiting for it bound.
	ended *list.List
	turns chan struct{}
	// metrics counts the loads: the coordinator's Config.Metrics.
	metrics *Metrics
}

// nologLoad is the loading of one group's Iggy offsets into the manager without the log.
type nologLoad struct {
	mu   sync.Mutex
	done bool
	elem *list.Element // in ended once done
}

func newNologLoads(m *Metrics) *nologLoads {
	return &nologLoads{byName: make(map[string]*nologLoad), ended: list.New(), turns: make(chan struct{}, nologLoadsAtOnce), metrics: m}
}

// entry is name's load, made and counted when there is none, and moved to the most recently
// requested end.
func (ls *nologLoads) entry(name string) *nologLoad {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	l := ls.byName[name]
	switch {
	case l == nil:
		l = &nologLoad{}
		ls.byName[name] = l
		ls.metrics.nologRemembered.Add(1)
	case l.elem != nil:
		ls.ended.MoveToBack(l.elem)
	}
	return l
}

// loaded records that l's load ended, forgetting the least recently requested names past
// maxNologLoads.
func (ls *nologLoads) loaded(name string, l *nologLoad) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byName[name] != l {
		return
	}
	l.elem = ls.ended.PushBack(name)
	for ls.ended.Len() > maxNologLoads {
		front := ls.ended.Front()
		ls.ended.Remove(front)
		delete(ls.byName, front.Value.(string))
		ls.metrics.nologRemembered.Add(-1)
		ls.metrics.nologForgotten.Add(1)
	}
}

// failed forgets l, so that a store outage leaves no entry behind for every name tried.
func (ls *nologLoads) failed(name string, l *nologLoad) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byName[name] == l {
		delete(ls.byName, name)
		ls.metrics.nologRemembered.Add(-1)
	}
}

// close forgets everything, for the gateway's count.
func (ls *nologLoads) close() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.metrics.nologRemembered.Add(-int64(len(ls.byName)))
	clear(ls.byName)
	ls.ended.Init()
}

// len is how many names are remembered (loads ended, running or waiting).
func (ls *nologLoads) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.byName)
}

// nologRestore loads, before a group's first request, every offset Iggy holds for it (the
// consumer named like the group, then the Iggy consumer group of that name, on every partition
// of every topic of the stream) into the manager, so an OffsetFetch of every topic answers
// after a restart what was committed before it. No request of the group reaches the manager
// before this ends, so nothing newer is overwritten; a group the manager holds is not loaded,
// and a load after its name was forgotten keeps every offset the manager holds (AddOffsets).
func (c *Coordinator) nologRestore(name string) error {
	if c.nolog.Holds(name) {
		return nil
	}
	l := c.nologLoads.entry(name)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return nil
	}
	if err := c.nologLoad(name); err != nil {
		c.nologLoads.failed(name, l)
		return err
	}
	l.done = true
	c.nologLoads.loaded(name, l)
	return nil
}

func (c *Coordinator) nologLoad(name string) error {
	ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
	defer cancel()
	select {
	case c.nologLoads.turns <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.nologLoads.turns }()
	c.cfg.Metrics.nologLoaded.Add(1)
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
		c.nolog.AddOffsets(offsets)
	}
	return nil
}

// offsetJournal is the Journal without the log: a commit of Kafka offset k (the next record to
// read) is stored as Iggy consumer offset k-1 (the last record consumed) of the Iggy consumer
// named like the Kafka group; a commit of 0 deletes it, and a group deletion deletes the
// group's offsets on every partition. A single consumer, not an Iggy consumer group: Iggy lets
// only a member that owns the partition store a group's offset. Group snapshots have no Iggy
// counterpart and stay in memory.
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
		case record.TypeGroupDeleted:
			if err := j.deleteGroup(ctx, r.GroupDeleted.Group); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteGroup deletes the group's consumer offsets on every partition of every topic: a deleted
// group's offsets must not come back when its name is loaded again (after a restart, or once
// its load was forgotten).
func (j offsetJournal) deleteGroup(ctx context.Context, groupName string) error {
	topics, err := j.c.GetTopics(ctx, j.stream)
	if err != nil {
		if errors.Is(err, wire.StreamIDNotFound) {
			return nil
		}
		return err
	}
	for _, t := range topics {
		for p := range int32(t.PartitionsCount) {
			if err := j.store(ctx, groupName, t.Name, p, 0); err != nil && !errors.Is(err, wire.TopicIDNotFound) && !errors.Is(err, wire.PartitionNotFound) {
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
