package bridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// producerStates answers kafka.Storage.Producers (DescribeProducers) from what Iggy holds, not
// from this gateway's producer cache, which knows only the producers this gateway checked: any
// gateway answers the same for a partition.
//
//   - The producers are those with a batch or a transaction marker in the partition's last
//     scanMaxMessages messages, each with the epoch, last sequence and largest timestamp of its
//     newest batch; a marker at a higher epoch than that batch (the abort of a fenced or timed-out
//     transaction) gives its epoch and no sequence (-1), as Kafka's producer state has it after a
//     bump. A producer whose newest batch is older than ProducerIDExpiration is left out, as
//     Kafka expires it, unless its transaction is open.
//   - The open transaction's first offset comes from the partition's transaction index (the
//     one READ_COMMITTED reads, txnindex.go), which reads from the log start: a producer whose
//     transaction is open but whose batches are all older than the tail read is described from
//     its batches in the scanWindow messages from that first offset.
//   - The coordinator epoch is not kept: -1, which kafka-transactions prints as such.
func (b *Bridge) producerStates(ctx context.Context, as iggyAPI, topic string, partition int32) ([]kafka.ProducerState, error) {
	st, err := b.partOf(ctx, as, topic, partition)
	if err != nil {
		return nil, err
	}
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return nil, kafkaErr(err)
	}
	if int(partition) >= len(t.Partitions) {
		return nil, fmt.Errorf("bridge: %s/%d is gone", topic, partition)
	}
	hw, err := b.exactEnd(ctx, as, topic, partition, t.Partitions[partition].highWatermark())
	if err != nil {
		return nil, err
	}
	if _, _, err := b.stable(ctx, as, topic, partition, hw, hw); err != nil {
		return nil, err
	}
	st.txns.mu.Lock()
	open := make(map[int64]int64, len(st.txns.open))
	for pid, first := range st.txns.open {
		open[pid] = first
	}
	st.txns.mu.Unlock()

	logStart, err := b.cachedLogStart(ctx, as, st, topic, partition)
	if err != nil {
		return nil, err
	}
	states := map[int64]*kafka.ProducerState{}
	if err := b.scanProducers(ctx, as, topic, partition, max(logStart, hw-scanMaxMessages), hw, states); err != nil {
		return nil, err
	}
	for pid, first := range open {
		if states[pid] == nil {
			// Older than the tail read: its batches from its transaction's first on (one
			// window of them) say who it is.
			from := map[int64]*kafka.ProducerState{}
			if err := b.scanProducers(ctx, as, topic, partition, first, min(first+scanWindow, hw), from); err != nil {
				return nil, err
			}
			if ps := from[pid]; ps != nil {
				states[pid] = ps
			}
		}
	}
	expiredBefore := b.clock.Now().Add(-b.cfg.ProducerIDExpiration).UnixMilli()
	out := make([]kafka.ProducerState, 0, len(states))
	for pid, ps := range states {
		ps.TxnStartOffset = -1
		if first, ok := open[pid]; ok {
			ps.TxnStartOffset = first
		} else if ps.LastTimestamp < expiredBefore {
			continue
		}
		out = append(out, *ps)
	}
	slices.SortFunc(out, func(x, y kafka.ProducerState) int {
		switch {
		case x.ProducerID < y.ProducerID:
			return -1
		case x.ProducerID > y.ProducerID:
			return 1
		}
		return 0
	})
	return out, nil
}

// scanProducers reads the partition's messages from offset from up to end and notes in states,
// by producer, its newest batch or marker as producerStates describes. A batch cut by from
// (its first message below it) is left out.
func (b *Bridge) scanProducers(ctx context.Context, as iggyAPI, topic string, partition int32, from, end int64, states map[int64]*kafka.ProducerState) error {
	// cur is the producer whose batch the records belong to; nil for a batch of no producer,
	// a marker, or one whose start is below from.
	var cur *kafka.ProducerState
	return b.scan(ctx, as, topic, partition, from, end, func(r *scanned) {
		if !r.first {
			if cur != nil {
				cur.LastTimestamp = max(cur.LastTimestamp, r.ts)
			}
			return
		}
		cur = nil
		m := r.meta
		if !m.hasPID {
			return
		}
		ps := states[m.pid]
		if ps == nil {
			ps = &kafka.ProducerState{ProducerID: m.pid, Epoch: -1, LastSequence: -1}
			states[m.pid] = ps
		}
		if m.txn == txnCommit || m.txn == txnAbort {
			// A marker holds no sequence; at a higher epoch it is the bump of a fenced or
			// timed-out transaction's abort.
			if m.epoch > ps.Epoch {
				ps.Epoch, ps.LastSequence = m.epoch, -1
			}
			ps.LastTimestamp = r.ts
			return
		}
		ps.Epoch, ps.LastSequence, ps.LastTimestamp = m.epoch, nextSeq(m.seq, m.n-1), r.ts
		cur = ps
	})
}
