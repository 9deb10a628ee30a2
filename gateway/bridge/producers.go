package bridge

import (
	"context"
	"sort"
	"time"
)

// What a client can make the producer cache hold and cost is bounded:
//   - A producer's state on a partition expires ProducerIDExpiration after this gateway's last
//     append of it there (Kafka's producer.id.expiration.ms, 1 day by default); a partition
//     holds at most maxProducersPerPartition states, and past that the least recently used
//     quarter is dropped (the cache is then no longer complete, so a dropped producer's next
//     batch is decided from a scan, not taken for new).
//   - A tail scan for an unknown producer reads up to scanMaxMessages or scanMaxBytes. At most
//     maxScans run at once, and within trustWindow of a scan that read a partition to its bound
//     an unknown producer there is taken for new without a scan of its own: the scan saw every
//     producer with a batch within the bound, and any append since that was not this gateway's
//     clears it (dropProducers). A client inventing producer ids costs one scan per partition
//     per trustWindow. A batch the cache refuses is decided again from a scan only when the
//     partition's end shows appends by someone else (appendedElsewhere).
const (
	defaultProducerIDExpiration = 24 * time.Hour
	maxProducersPerPartition    = 4096
	maxScans                    = 4
)

// appendedElsewhere reports whether the partition may hold appends this gateway did not make
// since its cache started: only then can a refusal the cache decided be wrong and is worth a
// rescan. It costs one metadata read and one poll; a client sending batches with gaps costs no
// scans.
func (b *Bridge) appendedElsewhere(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32) bool {
	if st.next < 0 {
		return true
	}
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil || int(partition) >= len(t.Partitions) {
		return true
	}
	hw, err := b.exactEnd(ctx, as, topic, partition, t.Partitions[partition].highWatermark())
	return err != nil || hw != st.next
}

// scannedRecently reports whether a scan read st's tail to its bound within trustWindow.
func (b *Bridge) scannedRecently(st *partState) bool {
	return !st.boundedAt.IsZero() && b.clock.Now().Sub(st.boundedAt) < trustWindow
}

// expired reports whether ps was last appended here ProducerIDExpiration ago or more.
func (b *Bridge) expired(ps *producerState) bool {
	return !ps.last.IsZero() && b.clock.Now().Sub(ps.last) >= b.cfg.ProducerIDExpiration
}

// pruneProducers keeps st within maxProducersPerPartition: expired states go first, then the
// least recently used down to three quarters of the bound. Called with st.mu held, after an
// addition, so it runs once per maxProducersPerPartition/4 new producers at most.
func (b *Bridge) pruneProducers(st *partState) {
	if len(st.producers) <= maxProducersPerPartition {
		return
	}
	for id, ps := range st.producers {
		if b.expired(ps) {
			delete(st.producers, id)
			b.metrics.producerStatesDropped.Add(1)
		}
	}
	keep := maxProducersPerPartition * 3 / 4
	if len(st.producers) <= keep {
		return
	}
	type aged struct {
		id   int64
		last time.Time
	}
	all := make([]aged, 0, len(st.producers))
	for id, ps := range st.producers {
		all = append(all, aged{id, ps.last})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].last.Before(all[j].last) })
	for _, a := range all[:len(all)-keep] {
		delete(st.producers, a.id)
		b.metrics.producerStatesDropped.Add(1)
	}
	st.complete = false
}
