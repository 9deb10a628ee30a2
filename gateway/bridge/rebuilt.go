package bridge

import (
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// rebuiltChunks is how many chunks a rebuiltCache's memory is cut into: it evicts a chunk at a
// time, so a sixteenth of it is the most that one eviction forgets.
const rebuiltChunks = 16

// minRebuiltChunk is the smallest chunk a rebuiltCache is made of.
const minRebuiltChunk = 64 << 10

// rebuiltKey names one rebuilt batch: the partition state it was read for (a topic deleted and
// re-created gets a new one), that state's cache generation (bumped when a check finds the
// partition is no longer the one read), the offset of its first record, which is the offset of
// the first message of the Iggy batch it was rebuilt from, and the codec asked for.
type rebuiltKey struct {
	st    *partState
	gen   uint32
	base  int64
	codec fetchForm
}

// rebuiltEntry is where a rebuilt batch lies in the cache, with what a fetch needs to chain it:
// its record count (the next batch's key is base + n) and the Iggy id of its first message, which
// a fetch checks against Iggy before handing cached bytes out.
type rebuiltEntry struct {
	chunk    int32
	off, len int32
	n        int32
	id       [16]byte
	codec    int8 // the batch's codec, which a fetch checks it may hand out (kept batches)
}

// rebuiltCache keeps the Kafka batches that fetches rebuilt from Iggy, so that other consumers
// of the same partition (other groups, the same group after a restart) are answered with those
// bytes instead of reading, rebuilding and compressing the same records again. Offsets in Iggy
// never change once written, so a batch stays true for as long as its partition exists; a fetch
// checks that with one message read from Iggy at the first cached batch it hands out.
//
// Its memory is limit bytes in rebuiltChunks chunks, taken from the operating system apart from
// the Go heap when first written (region_*.go): cached bytes neither count towards the
// collector's goal nor get scanned, and a gateway whose consumers never read behind the tail
// never touches them. Chunks are filled in turn; when all are full the oldest one is emptied,
// unless a fetch was answered from it since it was filled: then it gets a second chance and the
// next is taken (a clock over chunks), so batches several groups read stay while a single
// reader's pass goes through. Once the cache is full, a batch below the highest offset its
// partition has cached (a group reading a partition again from its start) evicts nothing: a
// second pass over more than the cache holds would otherwise empty, one chunk ahead of the
// reader, every chunk it was about to read.
type rebuiltCache struct {
	chunkSize int

	mu     sync.RWMutex
	chunks [rebuiltChunks]rebuiltChunk
	cur    int // the chunk being filled
	index  map[rebuiltKey]rebuiltEntry
	closed atomic.Bool
	// kept says the cache holds producers' own batches the tail cache let go (tailCache.spill)
	// rather than batches fetches rebuilt: they come in offset order as they were produced, so
	// the rule that spares a partition's older batches does not apply, and the codec of each is
	// its producer's (the key's is the zero fetchForm).
	kept bool
	// dir, when set, is the directory whose files hold the chunks instead of memory: the kept
	// share on disk (keptdisk.go).
	dir string
	// metrics counts the bytes stored.
	metrics *Metrics
}

type rebuiltChunk struct {
	mem []byte // nil until first filled
	// file holds the chunk instead of mem on disk (rebuiltCache.dir), nil until first filled;
	// path is its name while it has one (keptdisk.go).
	file *os.File
	path string
	// mapped is file mapped read-only (mapFile), nil where mapping is not offered: a kept
	// batch is checked and answered as it lies there instead of read into a buffer.
	mapped []byte
	used   int
	keys   []rebuiltKey // the entries in this chunk, dropped from the index when it is emptied
	hit    atomic.Bool  // a fetch was answered from this chunk since it was filled
	// pins counts the answers handed out that point into mem and are not released yet: a
	// pinned chunk is not emptied, nor its memory given back.
	pins atomic.Int32
}

// filled reports whether the chunk was filled since it was created or given back.
func (ch *rebuiltChunk) filled() bool { return ch.mem != nil || ch.file != nil }

// newRebuiltCache returns a cache of about limit bytes, nil when limit is too small for a chunk
// of 64 KiB.
func newRebuiltCache(limit int64, m *Metrics) *rebuiltCache {
	size := limit / rebuiltChunks
	if size < minRebuiltChunk {
		return nil
	}
	return &rebuiltCache{chunkSize: int(min(size, 1<<30)), index: map[rebuiltKey]rebuiltEntry{}, metrics: m}
}

// rebuiltBatch is one batch a fetch rebuilt, at src[start:end] of its answer, for putRun.
type rebuiltBatch struct {
	k          rebuiltKey
	start, end int
	n          int32
	id         [16]byte // Iggy id of its first message
	codec      int
}

// putRun keeps the batches one fetch rebuilt, one after the other in one chunk when they fit in
// one, so that a later fetch of the same run is answered with one slice of the cache's memory.
// A batch larger than a chunk is not kept.
func (c *rebuiltCache) putRun(src []byte, run []rebuiltBatch) {
	if len(run) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() {
		return
	}
	total := run[len(run)-1].end - run[0].start
	if ch := &c.chunks[c.cur]; ch.filled() && ch.used+total > c.chunkSize && total <= c.chunkSize && !c.olderLocked(run[0].k) {
		if !c.advanceLocked() {
			return
		}
	}
	for _, rb := range run {
		size := rb.end - rb.start
		if _, ok := c.index[rb.k]; ok || size == 0 || size > c.chunkSize {
			continue
		}
		ch := &c.chunks[c.cur]
		if ch.filled() && ch.used+size > c.chunkSize {
			if c.olderLocked(rb.k) {
				continue // an older batch again: what the cache holds stays
			}
			if !c.advanceLocked() {
				return
			}
			ch = &c.chunks[c.cur]
		}
		off := ch.used
		if c.dir != "" {
			if c.writeChunk(ch, src[rb.start:rb.end], off) != nil {
				c.metrics.keptDiskFaults.Add(1)
				return // not kept; what the chunk holds stays as it was
			}
		} else {
			if ch.mem == nil {
				mem, err := regionAlloc(c.chunkSize)
				if err != nil {
					return
				}
				ch.mem = mem
			}
			copy(ch.mem[off:], src[rb.start:rb.end])
		}
		ch.used += size
		ch.keys = append(ch.keys, rb.k)
		c.index[rb.k] = rebuiltEntry{chunk: int32(c.cur), off: int32(off), len: int32(size), n: rb.n, id: rb.id, codec: int8(rb.codec)}
		if c.kept {
			c.metrics.keptStored.Add(uint64(size))
			continue
		}
		c.metrics.rebuiltStored.Add(uint64(size))
		if top := &rb.k.st.rebuiltTop; rb.k.base > top.Load() {
			top.Store(rb.k.base)
		}
	}
}

// olderLocked reports whether every chunk holds memory, so that the next chunk to fill must be
// emptied first, and k is below the highest base its partition has put: such a batch evicts
// nothing.
func (c *rebuiltCache) olderLocked(k rebuiltKey) bool {
	if c.kept || k.base >= k.st.rebuiltTop.Load() {
		return false
	}
	for i := range c.chunks {
		if !c.chunks[i].filled() {
			return false
		}
	}
	return true
}

// advanceLocked moves to the next chunk to fill, emptying it: the next one neither answered
// from since it was filled nor pinned, clearing the marks of the unpinned ones passed over;
// else the next one not pinned. It reports false when every chunk is pinned.
func (c *rebuiltCache) advanceLocked() bool {
	pick := -1
	for i := 1; i <= rebuiltChunks && pick < 0; i++ {
		j := (c.cur + i) % rebuiltChunks
		ch := &c.chunks[j]
		if !ch.filled() || (ch.pins.Load() == 0 && !ch.hit.Swap(false)) {
			pick = j
		}
	}
	for i := 1; i <= rebuiltChunks && pick < 0; i++ {
		if j := (c.cur + i) % rebuiltChunks; c.chunks[j].pins.Load() == 0 {
			pick = j
		}
	}
	if pick < 0 {
		return false
	}
	ch := &c.chunks[pick]
	for _, k := range ch.keys {
		delete(c.index, k)
	}
	clear(ch.keys)
	ch.keys, ch.used = ch.keys[:0], 0
	ch.hit.Store(false)
	c.cur = pick
	return true
}

// rebuiltSpan is a run of cached batches of one partition, one after the other in offsets, that
// a fetch hands out: pinned in the cache until released.
type rebuiltSpan struct {
	c     *rebuiltCache
	base  int64 // the first batch's
	parts []rebuiltEntry
	n     int // records
	size  int // bytes
}

// chain pins the batch under k and the ones after it (each next key is base + records) while
// they are cached, in a codec allows takes (every one when nil), and fit in room with the ones
// before, the first one whatever its size when first is set. full reports that the span ends
// because the next cached batch would not fit.
func (c *rebuiltCache) chain(k rebuiltKey, room int, first bool, allows func(int) bool) (sp rebuiltSpan, full bool) {
	sp.c, sp.base = c, k.base
	c.mu.RLock()
	defer c.mu.RUnlock()
	for {
		e, ok := c.index[k]
		if !ok || (allows != nil && !allows(int(e.codec))) {
			return sp, false
		}
		if !(first && sp.n == 0) && sp.size+int(e.len) > room {
			return sp, true
		}
		ch := &c.chunks[e.chunk]
		c.pin(ch)
		ch.hit.Store(true)
		sp.parts = append(sp.parts, e)
		sp.n += int(e.n)
		sp.size += int(e.len)
		k.base += int64(e.n)
	}
}

// memOf is the memory chunk i's batches lie in: its own, or on disk its file's mapping; nil for
// a file that is not mapped (read it with readParts).
func (c *rebuiltCache) memOf(i int32) []byte {
	if c.dir != "" {
		return c.chunks[i].mapped
	}
	return c.chunks[i].mem
}

// view is the span's bytes as one slice of the cache's memory (or of its file's mapping), when
// its batches lie one after the other in one chunk; valid until release. Batches on disk are
// checked first (checkMapped); a span that fails has no view, and appendTo drops it.
func (sp *rebuiltSpan) view() ([]byte, bool) {
	if len(sp.parts) == 0 {
		return nil, false
	}
	first := sp.parts[0]
	end := first.off + first.len
	for _, e := range sp.parts[1:] {
		if e.chunk != first.chunk || e.off != end {
			return nil, false
		}
		end += e.len
	}
	m := sp.c.memOf(first.chunk)
	if m == nil {
		return nil, false
	}
	if sp.c.dir != "" {
		if _, ok := sp.checkMapped(); !ok {
			return nil, false
		}
	}
	return m[first.off:end], true
}

// appendTo appends the span's bytes to dst. Kept on disk, they may fail to check (checkMapped,
// readParts): then it returns dst as it was and false, and the failing chunk's batches are
// dropped from the cache.
func (sp *rebuiltSpan) appendTo(dst []byte) ([]byte, bool) {
	if sp.c.dir != "" && !sp.mapped() {
		dst = slices.Grow(dst, sp.size)
		out, bad, err := sp.readParts(dst)
		if err != nil {
			sp.c.dropChunkOf(bad)
			return out, false
		}
		return out, true
	}
	if sp.c.dir != "" {
		if bad, ok := sp.checkMapped(); !ok {
			sp.c.dropChunkOf(bad)
			return dst, false
		}
	}
	for _, e := range sp.parts {
		dst = append(dst, sp.c.memOf(e.chunk)[e.off:e.off+e.len]...)
	}
	return dst, true
}

// release unpins the span; its bytes may be overwritten after. Once the cache is closed the
// last release of a chunk gives its memory back. The span is empty after: releasing it again
// does nothing (fetchRead.release owns the rule that counts a second release).
func (sp *rebuiltSpan) release() {
	if sp.c != nil && sp.c.dir != "" {
		sp.dropPages()
	}
	last := false
	for _, e := range sp.parts {
		if sp.c.unpin(&sp.c.chunks[e.chunk]) {
			last = true
		}
	}
	sp.parts = nil
	if last && sp.c.closed.Load() {
		sp.c.freeUnpinned()
	}
}

// pin takes a pin on ch for an answer pointing into its memory.
func (c *rebuiltCache) pin(ch *rebuiltChunk) {
	if ch.pins.Add(1) == 1 {
		c.metrics.pinnedChunks.Add(1)
	}
}

// unpin gives one of ch's pins back and reports whether it was the last. A chunk without pins
// is left as it is and the fault counted: taking its count below zero would let a later pin
// look like none, and the chunk be emptied under the answer that took it.
func (c *rebuiltCache) unpin(ch *rebuiltChunk) bool {
	for {
		p := ch.pins.Load()
		if p <= 0 {
			c.metrics.releaseFaults.Add(1)
			return false
		}
		if ch.pins.CompareAndSwap(p, p-1) {
			if p == 1 {
				c.metrics.pinnedChunks.Add(-1)
			}
			return p == 1
		}
	}
}

// close drops every batch and gives back the memory of the chunks no answer is pinning; the
// others go with their last release.
func (c *rebuiltCache) close() {
	c.mu.Lock()
	c.closed.Store(true)
	clear(c.index)
	c.mu.Unlock()
	c.freeUnpinned()
}

func (c *rebuiltCache) freeUnpinned() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.chunks {
		ch := &c.chunks[i]
		if ch.filled() && ch.pins.Load() == 0 {
			if ch.mem != nil {
				regionFree(ch.mem)
			}
			closeChunkFile(ch)
			ch.mem, ch.keys, ch.used = nil, nil, 0
		}
	}
}

// rebuilds are the rebuilds from Iggy under way, by the key of the batch they start at, so that
// readers arriving at the same offset meanwhile wait for that one instead of reading and
// rebuilding the same records next to it.
type rebuilds struct {
	mu      sync.Mutex
	m       map[rebuiltKey]chan struct{}
	waiting atomic.Int32 // readers waiting now, for the tests
}

// join returns, when a rebuild from k is under way, a channel closed when it ends; otherwise
// done, which the caller, now rebuilding from k, calls once its batches are in the cache (or it
// failed).
func (r *rebuilds) join(k rebuiltKey) (wait <-chan struct{}, done func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.m[k]; ok {
		return ch, nil
	}
	if r.m == nil {
		r.m = map[rebuiltKey]chan struct{}{}
	}
	ch := make(chan struct{})
	r.m[k] = ch
	return nil, func() {
		r.mu.Lock()
		delete(r.m, k)
		r.mu.Unlock()
		close(ch)
	}
}
