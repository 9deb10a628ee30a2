package bridge

import (
	"encoding/binary"
	"sort"
	"sync"
)

// tailBatches bounds the batches a partition's tail remembers. An entry is a few dozen bytes
// (plus the cached Kafka bytes, which the tailCache budget bounds), so a busy partition keeps
// the boundaries of its last gigabyte or so of 1 MB batches.
const tailBatches = 1024

// tailBatch is one batch this gateway appended: where it sits in the partition, the Iggy id of
// its first message (which tells this incarnation of the partition from any other), and, while
// the tail cache holds it, the producer's own Kafka batch with the Iggy base offset written in.
type tailBatch struct {
	base  int64
	n     int32
	size  int      // bytes of the Iggy batch as sent
	id    [16]byte // Iggy message id of the batch's first message
	codec int
	kafka []byte // guarded by the owning tail's mu; nil once evicted
	owner *tail
	st    *partState // the partition owner belongs to, for the kept batches' keys
	// charged is what the tail cache counts for kafka until it evicts the batch (guarded by
	// the cache's mu), even if the tail dropped the bytes first.
	charged int
	// pins counts the fetch answers that hand kafka out as it lies (lend), guarded by the
	// owning tail's mu: the cache does not reuse the buffer of a batch it evicts while pinned.
	pins int32
}

func (tb *tailBatch) end() int64 { return tb.base + int64(tb.n) }

// tail is what a gateway remembers of the batches it appended to one partition lately: their
// boundaries, so that a fetch asks Iggy for whole batches, and through the tail cache their Kafka
// bytes, so that a consumer at the tail is answered with exactly what its producer sent. Offsets
// in Iggy never change once written, so an entry stays true for as long as the partition it was
// written to exists; fetchTail checks that it still does.
type tail struct {
	mu      sync.Mutex
	batches []*tailBatch // ascending base
}

// add records tb, appended to the partition just now.
func (t *tail) add(tb *tailBatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.batches); n > 0 && tb.base < t.batches[n-1].end() {
		// An append below what this tail knows: the partition was purged or re-created.
		t.dropLocked()
	}
	if len(t.batches) >= tailBatches {
		// The bytes of the batches forgotten here stay with the tail cache, which counts them
		// until it evicts them (and keeps them beyond the tail then: spill).
		k := copy(t.batches, t.batches[tailBatches/2:])
		clear(t.batches[k:])
		t.batches = t.batches[:k]
	}
	tb.owner = t
	t.batches = append(t.batches, tb)
}

// reset forgets every batch: the partition is not the one they were written to.
func (t *tail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropLocked()
}

func (t *tail) dropLocked() {
	for _, tb := range t.batches {
		tb.kafka = nil
	}
	clear(t.batches)
	t.batches = t.batches[:0]
}

// holding returns the index of the batch that holds offset, or -1.
func (t *tail) holding(offset int64) int {
	i := sort.Search(len(t.batches), func(i int) bool { return t.batches[i].end() > offset })
	if i < len(t.batches) && t.batches[i].base <= offset {
		return i
	}
	return -1
}

// holds reports whether a remembered batch holds offset.
func (t *tail) holds(offset int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holding(offset) >= 0
}

// span plans a poll of whole batches: from the start of the batch that holds offset, count
// messages of it and of the contiguous batches after it while their bytes stay within maxBytes
// (the first one whatever its size). ok is false when no remembered batch holds offset.
func (t *tail) span(offset int64, maxBytes int) (from, count int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.holding(offset)
	if i < 0 {
		return 0, 0, false
	}
	first := t.batches[i]
	end, bytes := first.end(), first.size
	for _, tb := range t.batches[i+1:] {
		if tb.base != end || bytes+tb.size > maxBytes {
			break
		}
		end, bytes = tb.end(), bytes+tb.size
	}
	return first.base, end - first.base, true
}

// cached appends to dst the cached Kafka bytes of the batch holding offset and of the contiguous
// cached batches after it, while they stay within maxBytes (the first one whatever its size), if
// the codec of each is one the fetch may hand out. It returns the last batch appended (nil for
// none), the number of records appended, and whether it stopped because the next batch, cached
// and contiguous, would not fit (the answer is then complete, as Kafka answers whole batches up
// to the limit).
func (t *tail) cached(dst []byte, offset int64, maxBytes int, codecOK func(int) bool) ([]byte, *tailBatch, int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.holding(offset)
	if i < 0 {
		return dst, nil, 0, false
	}
	var last *tailBatch
	start, n := len(dst), 0
	for _, tb := range t.batches[i:] {
		if tb.kafka == nil || !codecOK(tb.codec) || (last != nil && tb.base != last.end()) {
			break
		}
		if last != nil && len(dst)-start+len(tb.kafka) > maxBytes {
			return dst, last, n, true
		}
		dst = append(dst, tb.kafka...)
		last, n = tb, n+int(tb.n)
	}
	return dst, last, n, false
}

// lend returns, pinned, the cached bytes of the batch holding offset when a fetch from offset
// would answer that batch alone (the first whatever its size): the next batch is not cached,
// not contiguous, in a codec the fetch may not hand out, or would not fit in maxBytes with it
// (full). The answer then goes out from the cache's buffer, not a copy of it; unpin gives it
// back. nil when no such batch is cached.
func (t *tail) lend(offset int64, maxBytes int, codecOK func(int) bool) (tb *tailBatch, kafka []byte, full bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.holding(offset)
	if i < 0 {
		return nil, nil, false
	}
	tb = t.batches[i]
	if tb.kafka == nil || !codecOK(tb.codec) {
		return nil, nil, false
	}
	if i+1 < len(t.batches) {
		next := t.batches[i+1]
		if next.kafka != nil && codecOK(next.codec) && next.base == tb.end() {
			if len(tb.kafka)+len(next.kafka) <= maxBytes {
				return nil, nil, false // an answer of several batches: cached copies them
			}
			full = true
		}
	}
	tb.pins++
	return tb, tb.kafka, full
}

// unpin ends a lend of tb.
func (t *tail) unpin(tb *tailBatch) {
	t.mu.Lock()
	tb.pins--
	t.mu.Unlock()
}

// tailCache bounds, across every partition of a Bridge, the bytes of Kafka batches the tails
// hold. The oldest batch is evicted first, wherever it lives; evicted buffers are reused. An
// evicted batch goes on to kept, when set: the share of the fetch cache's memory that keeps
// producers' batches beyond the tail (spill).
type tailCache struct {
	limit int
	kept  *rebuiltCache

	mu   sync.Mutex
	used int
	fifo []*tailBatch // oldest first, from head
	head int
	free [][]byte // evicted buffers, for reuse
}

// maxCachedBatch keeps one producer batch from taking more than a quarter of the cache.
func (c *tailCache) maxBatch() int { return c.limit / 4 }

// admit gives tb a copy of raw, the producer's Kafka batch, with its Iggy base offset written in
// and the leader epoch the gateway hands out (0), in a buffer an eviction freed when one fits;
// track then evicts what the limit no longer holds. The copy is made before tb is published
// (tail.add), so no lock is needed for it.
func (c *tailCache) admit(tb *tailBatch, raw []byte) {
	if c == nil || len(raw) > c.maxBatch() || len(raw) < kbHeaderLen {
		return
	}
	c.mu.Lock()
	buf := c.takeLocked(len(raw))
	c.mu.Unlock()
	// With no free buffer, append allocates one whose copied part the runtime does not zero
	// first (a make would: 3.5% of the gateway's samples producing 1 KiB random values).
	buf = append(buf, raw...)
	binary.BigEndian.PutUint64(buf[0:], uint64(tb.base))
	binary.BigEndian.PutUint32(buf[12:], 0)
	tb.kafka = buf
}

// track accounts for tb once it is published, evicting the oldest batches beyond the limit.
// size is the capacity admit gave tb (0: nothing cached), read before tb was published.
func (c *tailCache) track(tb *tailBatch, size int) {
	if c == nil || size == 0 {
		return
	}
	var evictedBuf [4]evicted
	out := evictedBuf[:0]
	c.mu.Lock()
	tb.charged = size
	c.fifo = append(c.fifo, tb)
	c.used += tb.charged
	for c.used > c.limit && c.head < len(c.fifo) {
		old := c.fifo[c.head]
		c.fifo[c.head] = nil
		c.head++
		old.owner.mu.Lock()
		b := old.kafka
		old.kafka = nil
		lent := old.pins > 0
		old.owner.mu.Unlock()
		// A batch its tail reset has no bytes left to reuse, but was counted until now.
		c.used -= old.charged
		if b != nil {
			out = append(out, evicted{old, b, lent})
		}
	}
	if c.head > len(c.fifo)/2 && c.head > 64 {
		k := copy(c.fifo, c.fifo[c.head:])
		clear(c.fifo[k:])
		c.fifo, c.head = c.fifo[:k], 0
	}
	c.mu.Unlock()
	if len(out) == 0 {
		return
	}
	for _, e := range out {
		c.spill(e.tb, e.kafka)
	}
	c.mu.Lock()
	for _, e := range out {
		if len(c.free) < 8 && !e.lent {
			c.free = append(c.free, e.kafka)
		}
	}
	c.mu.Unlock()
}

// evicted is a batch the tail cache let go, with the bytes it held; lent ones are still being
// written to a client and are left to the collector, not reused.
type evicted struct {
	tb    *tailBatch
	kafka []byte
	lent  bool
}

// spill copies a batch the tail cache let go into kept, under the key a fetch from its base
// looks for (keptSource): the bytes are the ones admit made, base offset written in, and a
// fetch checks the partition with the batch's first message before handing them out, as it
// does for the tail's.
func (c *tailCache) spill(tb *tailBatch, kafka []byte) {
	if c.kept == nil || tb.st == nil {
		return
	}
	k := rebuiltKey{st: tb.st, gen: tb.st.rebuiltGen.Load(), base: tb.base}
	c.kept.putRun(kafka, []rebuiltBatch{{k: k, end: len(kafka), n: tb.n, id: tb.id, codec: tb.codec}})
}

// takeLocked returns an empty buffer of capacity at least n when a free one has it, else nil.
func (c *tailCache) takeLocked(n int) []byte {
	for i, b := range c.free {
		if cap(b) >= n {
			last := len(c.free) - 1
			c.free[i] = c.free[last]
			c.free[last] = nil
			c.free = c.free[:last]
			return b[:0]
		}
	}
	return nil
}
