package bridge

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// rePoll is how long Wait sleeps at most before letting the caller look at
// Iggy again: writes by other gateways or native Iggy clients wake nobody
// here, so they are noticed by this bounded re-poll.
const rePoll = 100 * time.Millisecond

// partState is what one gateway keeps about one partition: the lock that
// serializes its produces, the idempotent-producer cache, the last known high
// watermark and the channel that wakes waiting fetches.
type partState struct {
	mu        sync.Mutex // held across the sequence check and the append
	producers map[int64]*producerState
	next      int64 // offset our next append should get; -1 unknown
	// confirmed is when the producer cache was last known to cover every
	// append to the partition.
	confirmed time.Time
	// confirmedMoves is Config.LeadersMoved as of confirmed, read before that confirmation.
	confirmedMoves uint64
	// complete says the producer cache holds every producer that ever wrote to the
	// partition: a scan read the partition from offset 0, and nothing but this gateway's own
	// appends came after it. A producer the cache does not know then has no history here.
	complete bool
	// boundedAt is when a scan last read the partition's tail to its bound with nothing but this
	// gateway's appends since the cache started; within trustWindow of it a producer the cache
	// does not know has no batch within the bound, and needs no scan of its own (producers.go).
	boundedAt time.Time

	// txns is what READ_COMMITTED readers need of the partition's transactions (txnindex.go).
	txns txnIndex

	hw atomic.Int64 // highest high watermark seen; -1 unknown
	// appendAt is the offset this gateway's append to the partition under way (produceBatch)
	// should get, -1 when none is or where it lands is not known. From the moment Iggy stores
	// such a batch until the tail remembers it, a read from there would find it in Iggy and
	// rebuild it, where a moment later the tail hands the producer's own bytes out: reads stop
	// there until the append wakes them (appendingAt).
	appendAt atomic.Int64
	// end is the high watermark a read of Iggy last told and when (endFresh).
	endMu    sync.Mutex
	end      int64
	endAt    time.Time
	avgBytes atomic.Int64 // running estimate of a stored record's size, for fetch sizing
	// plainLeft carries converter.plainLeft from one fetch of the partition to the next.
	plainLeft atomic.Int32
	// rebuiltGen is the generation of the partition's batches in the fetch cache (rebuilt.go):
	// bumped when a check finds the partition is not the one they were read from.
	rebuiltGen atomic.Uint32
	// rebuiltTop is the highest base offset of the partition's batches put in the fetch cache:
	// once the cache is full, a batch below it (a reader going over older records again) does
	// not evict anything.
	rebuiltTop atomic.Int64

	wmu    sync.Mutex
	notify chan struct{}

	tail tail // the batches this gateway appended lately (tail.go)

	ls    logStartState // the Kafka log start offset (logstart.go)
	maxTS maxTSScan     // the partition's largest timestamp as far as read (maxts.go)
}

// partOf is the state of a partition that exists: the topic and partition names come from
// clients, so a state is made only once Iggy listed the partition (b.known, or one lookup of
// a topic this gateway does not know that many partitions of); a name that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION and leaves nothing behind.
func (b *Bridge) partOf(ctx context.Context, as iggyAPI, topic string, partition int32) (*partState, error) {
	if st := b.lookupPart(topic, partition); st != nil {
		return st, nil
	}
	n, ok := b.known.get(topic)
	if !ok || partition >= n {
		t, err := b.lookupTopic(ctx, as, topic)
		if err != nil {
			return nil, kafkaErr(err)
		}
		n = int32(len(t.Partitions))
	}
	if partition < 0 || partition >= n {
		return nil, fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, n)
	}
	return b.part(topic, partition), nil
}

// lookupPart is the partition's state, nil when there is none.
func (b *Bridge) lookupPart(topic string, partition int32) *partState {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.parts[partKey{topic, partition}]
}

// part is the partition's state, made when there is none: only for a partition Iggy listed
// (partOf, or after Iggy answered for it).
func (b *Bridge) part(topic string, partition int32) *partState {
	if st := b.lookupPart(topic, partition); st != nil {
		return st
	}
	k := partKey{topic, partition}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.parts[k]
	if st == nil {
		st = &partState{producers: map[int64]*producerState{}, next: -1, notify: make(chan struct{})}
		st.hw.Store(-1)
		st.appendAt.Store(-1)
		st.avgBytes.Store(1024)
		b.parts[k] = st
		b.metrics.partStates.Add(1)
	}
	return st
}

// forget drops every cached partition of topic, so a deleted and re-created
// topic starts from what Iggy says.
func (b *Bridge) forget(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, st := range b.parts {
		if k.topic == topic {
			st.wake()
			delete(b.parts, k)
			b.metrics.partStates.Add(-1)
		}
	}
	b.known.drop(topic)
}

// dropProducers forgets the producer cache: appends this gateway did not make may hold
// batches it does not know.
func (st *partState) dropProducers() {
	st.producers = map[int64]*producerState{}
	st.complete = false
	st.boundedAt = time.Time{}
}

// forgetProducer drops one producer's state from the cache. The cache then no longer holds every
// producer with batches in the partition, or within the last scan's bound, so the producer's next
// batch is decided from a scan of the tail, never taken for a new producer's at any sequence.
func (st *partState) forgetProducer(pid int64) {
	delete(st.producers, pid)
	st.complete = false
	st.boundedAt = time.Time{}
}

func (st *partState) sawHW(hw int64) {
	for {
		cur := st.hw.Load()
		if hw <= cur || st.hw.CompareAndSwap(cur, hw) {
			return
		}
	}
}

// endFresh is how long a fetch at the end of a partition is answered from what the last read of
// Iggy told, without asking again: a record another gateway or a native client appends meanwhile
// shows that much later (this gateway's own appends move the end at once).
const endFresh = 50 * time.Millisecond

// readEnd notes that Iggy told hw as the partition's high watermark at now.
func (st *partState) readEnd(hw int64, now time.Time) {
	st.sawHW(hw)
	st.endMu.Lock()
	st.end, st.endAt = hw, now
	st.endMu.Unlock()
}

// knownEnd is the partition's end as Iggy told it within endFresh of now, with no append
// through this gateway since; ok is false when there is none.
func (st *partState) knownEnd(now time.Time) (end int64, ok bool) {
	st.endMu.Lock()
	end, at := st.end, st.endAt
	st.endMu.Unlock()
	return end, end == st.hw.Load() && !at.IsZero() && now.Sub(at) < endFresh
}

// appendingAt reports whether this gateway's append under way is to land at offset.
func (st *partState) appendingAt(offset int64) bool {
	return offset >= 0 && st.appendAt.Load() == offset
}

func (st *partState) wake() {
	st.wmu.Lock()
	close(st.notify)
	st.notify = make(chan struct{})
	st.wmu.Unlock()
}

func (st *partState) waitChan() <-chan struct{} {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	return st.notify
}

// Wait returns when new data may be available in (topic, partition) at or
// past offset, or ctx ends. A produce through this bridge wakes it at once;
// otherwise it returns after at most 100 ms (rePoll, on Config.Clock) so the
// caller polls Iggy again.
func (b *Bridge) Wait(ctx context.Context, topic string, partition int32, offset int64) {
	if b.closed.Load() {
		return
	}
	var ch <-chan struct{}
	st := b.lookupPart(topic, partition)
	if n, ok := b.known.get(topic); st == nil && ok && partition >= 0 && partition < n {
		st = b.part(topic, partition)
	}
	if st != nil {
		// A partition Iggy never listed has no state, and nothing of ours wakes it.
		ch = st.waitChan()
		if st.hw.Load() > offset && !st.appendingAt(offset) {
			return
		}
	}
	t := b.clock.NewTimer(rePoll)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C():
	case <-ctx.Done():
	}
}
