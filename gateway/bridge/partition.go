package bridge

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
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
	// complete says the producer cache holds every producer that ever wrote to the
	// partition: a scan read the partition from offset 0, and nothing but this gateway's own
	// appends came after it. A producer the cache does not know then has no history here.
	complete bool

	hw       atomic.Int64 // highest high watermark seen; -1 unknown
	avgBytes atomic.Int64 // running estimate of a stored record's size, for fetch sizing
	// plainLeft carries converter.plainLeft from one fetch of the partition to the next.
	plainLeft atomic.Int32

	wmu    sync.Mutex
	notify chan struct{}

	tail tail // the batches this gateway appended lately (tail.go)

	maxTS maxTSScan // the partition's largest timestamp as far as read (maxts.go)
}

func (b *Bridge) part(topic string, partition int32) *partState {
	k := partKey{topic, partition}
	b.mu.RLock()
	st := b.parts[k]
	b.mu.RUnlock()
	if st != nil {
		return st
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if st = b.parts[k]; st == nil {
		st = &partState{producers: map[int64]*producerState{}, next: -1, notify: make(chan struct{})}
		st.hw.Store(-1)
		st.avgBytes.Store(1024)
		b.parts[k] = st
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
		}
	}
}

// dropProducers forgets the producer cache: appends this gateway did not make may hold
// batches it does not know.
func (st *partState) dropProducers() {
	st.producers = map[int64]*producerState{}
	st.complete = false
}

func (st *partState) sawHW(hw int64) {
	for {
		cur := st.hw.Load()
		if hw <= cur || st.hw.CompareAndSwap(cur, hw) {
			return
		}
	}
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
	st := b.part(topic, partition)
	ch := st.waitChan()
	if st.hw.Load() > offset {
		return
	}
	t := b.clock.NewTimer(rePoll)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C():
	case <-ctx.Done():
	}
}
