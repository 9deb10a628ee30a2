package bridge

import (
	"sync"
	"sync/atomic"
)

// rebuiltChunks is how many chunks a rebuiltCache's memory is cut into: it evicts a chunk at a
// time, so a sixteenth of it is the most that one eviction forgets.
const rebuiltChunks = 16

// rebuiltKey names one rebuilt batch: the partition state it was read for (a topic deleted and
// re-created gets a new one), that state's cache generation (bumped when a check finds the
// partition is no longer the one read), the offset of its first record, which is the offset of
// the first message of the Iggy batch it was rebuilt from, and the codec asked for.
type rebuiltKey struct {
	st    *partState
	gen   uint32
	base  int64
	codec fetchCodec
}

// rebuiltEntry is where a rebuilt batch lies in the cache, with what a fetch needs to chain it:
// its record count (the next batch's key is base + n) and the Iggy id of its first message, which
// a fetch checks against Iggy before handing cached bytes out.
type rebuiltEntry struct {
	chunk    int32
	off, len int32
	n        int32
	id       [16]byte
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
// reader's pass goes through.
type rebuiltCache struct {
	chunkSize int

	mu     sync.RWMutex
	chunks [rebuiltChunks]rebuiltChunk
	cur    int // the chunk being filled
	index  map[rebuiltKey]rebuiltEntry
	closed bool
}

type rebuiltChunk struct {
	mem  []byte // nil until first filled
	used int
	keys []rebuiltKey // the entries in this chunk, dropped from the index when it is emptied
	hit  atomic.Bool  // a fetch was answered from this chunk since it was filled
}

// newRebuiltCache returns a cache of about limit bytes, nil when limit is too small for a chunk
// of 64 KiB.
func newRebuiltCache(limit int64) *rebuiltCache {
	size := limit / rebuiltChunks
	if size < 64<<10 {
		return nil
	}
	return &rebuiltCache{chunkSize: int(min(size, 1<<30)), index: map[rebuiltKey]rebuiltEntry{}}
}

// get appends the batch under k to dst, unless it is longer than limit (negative: any length).
func (c *rebuiltCache) get(dst []byte, k rebuiltKey, limit int) ([]byte, rebuiltEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.index[k]
	if !ok || (limit >= 0 && int(e.len) > limit) {
		return dst, e, false
	}
	ch := &c.chunks[e.chunk]
	ch.hit.Store(true)
	return append(dst, ch.mem[e.off:e.off+e.len]...), e, true
}

// put keeps batch under k: n records, id the Iggy id of its first message. A batch larger than a
// chunk is not kept.
func (c *rebuiltCache) put(k rebuiltKey, batch []byte, n int32, id [16]byte) {
	if len(batch) == 0 || len(batch) > c.chunkSize {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if _, ok := c.index[k]; ok {
		return
	}
	ch := &c.chunks[c.cur]
	if ch.mem != nil && ch.used+len(batch) > c.chunkSize {
		c.advanceLocked()
		ch = &c.chunks[c.cur]
	}
	if ch.mem == nil {
		mem, err := regionAlloc(c.chunkSize)
		if err != nil {
			return
		}
		ch.mem = mem
	}
	off := ch.used
	copy(ch.mem[off:], batch)
	ch.used += len(batch)
	ch.keys = append(ch.keys, k)
	c.index[k] = rebuiltEntry{chunk: int32(c.cur), off: int32(off), len: int32(len(batch)), n: n, id: id}
	rebuiltStored.Add(uint64(len(batch)))
}

// advanceLocked moves to the next chunk to fill, emptying it: the next one not answered from
// since it was filled, clearing the marks of those passed over, or the next one when every
// chunk was.
func (c *rebuiltCache) advanceLocked() {
	next := (c.cur + 1) % rebuiltChunks
	for range rebuiltChunks - 1 {
		ch := &c.chunks[next]
		if ch.mem == nil || !ch.hit.Swap(false) {
			break
		}
		next = (next + 1) % rebuiltChunks
	}
	if next == c.cur {
		next = (c.cur + 1) % rebuiltChunks
	}
	ch := &c.chunks[next]
	for _, k := range ch.keys {
		delete(c.index, k)
	}
	clear(ch.keys)
	ch.keys, ch.used = ch.keys[:0], 0
	ch.hit.Store(false)
	c.cur = next
}

// close gives the memory back; the cache keeps nothing more.
func (c *rebuiltCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	clear(c.index)
	for i := range c.chunks {
		ch := &c.chunks[i]
		if ch.mem != nil {
			regionFree(ch.mem)
		}
		*ch = rebuiltChunk{}
	}
}

// resident is how many bytes of memory the cache holds.
func (c *rebuiltCache) resident() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var n int64
	for i := range c.chunks {
		n += int64(cap(c.chunks[i].mem))
	}
	return n
}

// Process-wide counters, as tailFetches is.
var (
	rebuiltFetches atomic.Uint64
	rebuiltStored  atomic.Uint64
)

// RebuiltFetches is how many partition reads were answered, at least in part, with batches an
// earlier fetch had rebuilt from Iggy (Config.FetchCacheBytes).
func RebuiltFetches() uint64 { return rebuiltFetches.Load() }

// RebuiltBytesStored is how many bytes of rebuilt batches were put in the fetch caches.
func RebuiltBytesStored() uint64 { return rebuiltStored.Load() }
