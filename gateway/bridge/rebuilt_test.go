package bridge

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// cacheBridge is a bridge over m without the tail cache (every fetch is rebuilt from Iggy or
// answered from the fetch cache) and one topic "t" of one partition; fetchCache as in Config.
func cacheBridge(t *testing.T, m *memStore, fetchCache int64) *Bridge {
	t.Helper()
	return topicBridge(t, m, Config{TailCacheBytes: -1, FetchCacheBytes: fetchCache})
}

// polledMessages is how many messages m has handed out so far.
func polledMessages(m *memStore) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.polled
}

// fetchRaw fetches t/0 from offset (magic 2) and returns a copy of the record bytes and how many
// messages the fetch read from m.
func fetchRaw(t *testing.T, b *Bridge, m *memStore, offset int64, maxBytes int32) ([]byte, int) {
	t.Helper()
	before := polledMessages(m)
	res, err := b.fetch(context.Background(), m, "t", 0, offset, maxBytes, 12)
	if err != nil {
		t.Fatalf("fetch at %d: %v", offset, err)
	}
	defer res.Release()
	return bytes.Clone(res.Records), polledMessages(m) - before
}

// produceCached stores three batches of 4 records each in t/0 (lz4, none and snappy) and returns
// their records.
func produceCached(t *testing.T, b *Bridge, m *memStore, prefix string) []trec {
	t.Helper()
	var all []trec
	for i, codec := range []int{codecLZ4, codecNone, codecSnappy} {
		recs := valueRecs(fmt.Sprint(prefix, i), 4)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 40) // compressible
		}
		all = append(all, recs...)
		if _, err := b.produce(context.Background(), m, "t", 0, kafkaBatch(t, codec, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// TestFetchCacheServesOtherReaders: once one fetch rebuilt the batches, another reader from the
// same offset (or from a later batch's start) gets the same bytes after reading one message from
// Iggy, not the records again; a read from inside a batch is rebuilt, and reads the same records.
func TestFetchCacheServesOtherReaders(t *testing.T) {
	m := newMemStore()
	b := cacheBridge(t, m, 0)
	all := produceCached(t, b, m, "v")

	first, read := fetchRaw(t, b, m, 0, 1<<20)
	if read != len(all) {
		t.Fatalf("the first fetch read %d messages, want %d", read, len(all))
	}
	checkRecords(t, readBatches(t, first), all, 0)
	for _, tc := range []struct {
		offset int64
		want   []byte
	}{{0, first}, {1, first}, {4, first[len(batchAt(t, first, 0)):]}} {
		hits := b.metrics.RebuiltFetches()
		got, read := fetchRaw(t, b, m, tc.offset, 1<<20)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("from %d: cached answer differs from the rebuilt one", tc.offset)
		}
		if read != 1 || b.metrics.RebuiltFetches() != hits+1 {
			t.Errorf("from %d: read %d messages from Iggy and %d cached answers, want 1 and 1", tc.offset, read, b.metrics.RebuiltFetches()-hits)
		}
	}
	// An answer of one cached run is the cache's own memory, not a copy.
	res, err := b.fetch(context.Background(), m, "t", 0, 0, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	if !inCache(b.rebuilt, res.Records) {
		t.Error("a fetch answered from one run of the cache was copied")
	}
	res.Release()
	// maxBytes 1: one whole batch, as a rebuilt fetch answers.
	got, _ := fetchRaw(t, b, m, 0, 1)
	if want := batchAt(t, first, 0); !bytes.Equal(got, want) {
		t.Errorf("maxBytes 1 answered %d bytes, want the first batch (%d)", len(got), len(want))
	}
	// A gateway that did not write the batches does not know where they start: from inside one
	// it rebuilds the records from the offset on (and reads the batch's first message, which
	// says its transaction), and caches that.
	other := cacheBridge(t, m, 0)
	for i, want := range []int{len(all) - 1 + 1, 1} {
		got, read := fetchRaw(t, other, m, 1, 1<<20)
		checkRecords(t, readBatches(t, got), all[1:], 1)
		if read != want {
			t.Errorf("fetch %d from inside a batch at a gateway that did not write it read %d messages, want %d", i, read, want)
		}
	}

	// A gateway without the cache reads the same records.
	plain := cacheBridge(t, m, -1)
	got, _ = fetchRaw(t, plain, m, 0, 1<<20)
	checkRecords(t, readBatches(t, got), all, 0)
}

// TestFetchCacheSecondPass: a second reader going through the partition with a fetch size of
// about one batch is answered from the fetch cache every time (one message read from Iggy per
// fetch) with the records the first reader got; at the gateway that wrote the batches (which
// knows where they start) and at one that did not.
func TestFetchCacheSecondPass(t *testing.T) {
	m := newMemStore()
	writer := cacheBridge(t, m, 0)
	all := append(produceCached(t, writer, m, "v"), produceCached(t, writer, m, "w")...)
	probe, _ := fetchRaw(t, cacheBridge(t, m, -1), m, 0, 1)
	maxBytes := int32(len(probe) + 10) // room for a little more after the first batch
	for _, b := range []*Bridge{writer, cacheBridge(t, m, 0)} {
		for pass := range 2 {
			var got []fetched
			for off := int64(0); off < int64(len(all)); {
				raw, read := fetchRaw(t, b, m, off, maxBytes)
				recs := readBatches(t, raw)
				if len(recs) == 0 {
					t.Fatalf("no records at %d", off)
				}
				if pass == 1 && read != 1 {
					t.Errorf("second pass at %d read %d messages from Iggy, want 1", off, read)
				}
				for _, r := range recs {
					if r.Offset >= off {
						got = append(got, r)
					}
				}
				off = recs[len(recs)-1].Offset + 1
			}
			checkRecords(t, got, all, 0)
		}
	}
}

// batchAt is the magic-2 batch at the start of b.
func batchAt(t *testing.T, b []byte, at int) []byte {
	t.Helper()
	if len(b) < at+12 {
		t.Fatalf("no batch at %d of %d bytes", at, len(b))
	}
	n := int(uint32(b[at+8])<<24 | uint32(b[at+9])<<16 | uint32(b[at+10])<<8 | uint32(b[at+11]))
	return b[at : at+12+n]
}

// TestFetchCacheRecreatedPartition: another gateway deletes the topic and writes new records at
// the same offsets; the first gateway must answer with the new records, not the batches it
// rebuilt before.
func TestFetchCacheRecreatedPartition(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := cacheBridge(t, m, 0)
	produceCached(t, b, m, "old")
	fetchRaw(t, b, m, 0, 1<<20)
	if err := m.deleteTopic(ctx, defaultStream, "t"); err != nil {
		t.Fatal(err)
	}
	other := cacheBridge(t, m, -1)
	fresh := produceCached(t, other, m, "new")
	got, _ := fetchRaw(t, b, m, 0, 1<<20)
	checkRecords(t, readBatches(t, got), fresh, 0)
}

// TestFetchCacheOldestDeleted: Iggy's retention removed the first batch behind the gateway's
// back; the cached batches starting there are not handed out, and the answer is what a gateway
// without the cache gives.
func TestFetchCacheOldestDeleted(t *testing.T) {
	m := newMemStore()
	b := cacheBridge(t, m, 0)
	produceCached(t, b, m, "v")
	fetchRaw(t, b, m, 0, 1<<20)
	p, err := m.part(defaultStream, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	p.batches = p.batches[1:]
	m.mu.Unlock()
	hits := b.metrics.RebuiltFetches()
	got, _ := fetchRaw(t, b, m, 0, 1<<20)
	want, _ := fetchRaw(t, cacheBridge(t, m, -1), m, 0, 1<<20)
	if !bytes.Equal(got, want) || b.metrics.RebuiltFetches() != hits {
		t.Errorf("after the first batch was deleted the gateway answered %d bytes (%d cached answers), one without the cache %d", len(got), b.metrics.RebuiltFetches()-hits, len(want))
	}
}

// smallCache is a cache of 16 chunks of 64 KiB, closed when t ends, with keys of one partition
// by base offset and a batch of 20 KiB (three fit in a chunk).
func smallCache(t *testing.T) (*rebuiltCache, func(int) rebuiltKey, []byte) {
	c := newRebuiltCache(smallLimit, new(Metrics))
	t.Cleanup(c.close)
	st := &partState{}
	return c, func(i int) rebuiltKey { return rebuiltKey{st: st, base: int64(i)} }, bytes.Repeat([]byte("b"), 20<<10)
}

const smallLimit = rebuiltChunks * 64 << 10

// TestRebuiltCacheBound: the cache never holds more than its limit, evicts a chunk at a time,
// oldest first, gives a chunk that answered a read a second chance, and does not keep a batch
// larger than a chunk.
func TestRebuiltCacheBound(t *testing.T) {
	c, key, batch := smallCache(t)
	for i := range 3 * rebuiltChunks {
		c.put(key(i), batch, 1, [16]byte{byte(i)})
	}
	sp, _ := c.chain(key(0), 0, true, nil)
	if sp.n != 1 {
		t.Fatal("a full cache lost its first batch before it needed the room")
	}
	sp.release()
	// Chunk 0 (keys 0-2) answered a read: the next chunk to fill is chunk 1, which is emptied.
	c.put(key(1000), batch, 1, [16]byte{})
	for i, want := range map[int]bool{0: true, 2: true, 3: false, 5: false, 6: true, 1000: true} {
		if ok := holds(c, key(i)); ok != want {
			t.Errorf("batch %d cached %v, want %v", i, ok, want)
		}
	}
	// Going on, every chunk is filled again; chunk 0's mark was used up, so it goes as well.
	for i := range 3 * rebuiltChunks {
		c.put(key(2000+i), batch, 1, [16]byte{})
		if r := c.resident(); r > smallLimit {
			t.Fatalf("resident %d bytes, limit %d", r, smallLimit)
		}
	}
	if holds(c, key(2)) {
		t.Error("a chunk kept its second chance for ever")
	}
	c.mu.RLock()
	entries := len(c.index)
	c.mu.RUnlock()
	if entries > 3*rebuiltChunks {
		t.Errorf("%d entries indexed, room for %d", entries, 3*rebuiltChunks)
	}
	c.put(key(9999), make([]byte, smallLimit/rebuiltChunks+1), 1, [16]byte{})
	if holds(c, key(9999)) {
		t.Error("a batch larger than a chunk was kept")
	}
}

// holds reports whether c has k, without marking its chunk as read.
func holds(c *rebuiltCache, k rebuiltKey) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.index[k]
	return ok
}

// TestRebuiltCachePins: a span handed out points into the cache's memory while it lies in one
// run, and its chunk is neither emptied nor given back until it is released, even when the
// cache is closed meanwhile.
func TestRebuiltCachePins(t *testing.T) {
	const limit = rebuiltChunks * 64 << 10
	c := newRebuiltCache(limit, new(Metrics))
	st := &partState{}
	key := func(i int) rebuiltKey { return rebuiltKey{st: st, base: int64(i)} }
	batch := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 20<<10) }
	c.put(key(0), batch(0), 1, [16]byte{})
	c.put(key(1), batch(1), 1, [16]byte{})
	sp, _ := c.chain(key(0), 40<<10, true, nil)
	view, ok := sp.view()
	if !ok || sp.n != 2 || !bytes.Equal(view, append(batch(0), batch(1)...)) {
		t.Fatalf("span of %d records, one run %v: want both batches as they were put", sp.n, ok)
	}
	if got, ok := sp.appendTo(nil); !ok || !bytes.Equal(got, view) {
		t.Fatal("appendTo differs from view")
	}
	// Fill every chunk many times over: chunk 0 is pinned, so it keeps its bytes.
	for i := 2; i < 10*3*rebuiltChunks; i++ {
		c.put(key(i), batch(i), 1, [16]byte{})
	}
	if !bytes.Equal(view, append(batch(0), batch(1)...)) {
		t.Fatal("a pinned chunk was overwritten")
	}
	c.close()
	if !bytes.Equal(view, append(batch(0), batch(1)...)) {
		t.Fatal("a pinned chunk was given back at close")
	}
	sp.release()
	if r := c.resident(); r != 0 {
		t.Errorf("after close and the last release the cache still holds %d bytes", r)
	}
}

// inCache reports whether b lies in c's memory.
func inCache(c *rebuiltCache, b []byte) bool {
	if len(b) == 0 {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	p := uintptr(unsafe.Pointer(&b[0]))
	for i := range c.chunks {
		if mem := c.chunks[i].mem; len(mem) > 0 {
			lo := uintptr(unsafe.Pointer(&mem[0]))
			if p >= lo && p < lo+uintptr(len(mem)) {
				return true
			}
		}
	}
	return false
}

// TestRebuiltCacheSecondPass: once the cache is full, a partition read again from its start
// does not evict what the cache holds of it (each miss would empty the chunk the reader needs
// next), while a batch past what it holds still takes the oldest chunk.
func TestRebuiltCacheSecondPass(t *testing.T) {
	c, key, batch := smallCache(t)
	const n = 3*rebuiltChunks + 3 // a first pass over more than the cache holds
	for i := range n {
		c.put(key(i), batch, 1, [16]byte{})
	}
	if holds(c, key(0)) || !holds(c, key(3)) {
		t.Fatal("the first pass did not leave its last cache-full")
	}
	// The second pass misses batch 0 and rebuilds it: nothing it is about to read goes.
	c.put(key(0), batch, 1, [16]byte{})
	for i := 3; i < n; i++ {
		if !holds(c, key(i)) {
			t.Fatalf("batch %d was evicted by a second pass's miss", i)
		}
	}
	if holds(c, key(0)) {
		t.Error("a second pass's miss was admitted into a full cache")
	}
	c.put(key(n), batch, 1, [16]byte{})
	if !holds(c, key(n)) || holds(c, key(3)) {
		t.Error("a batch past the partition's cached top did not take the oldest chunk")
	}
}

// TestFetchCacheOneRebuild: readers arriving at an offset while another fetch rebuilds the
// batches there wait for it and are answered from the cache: the records are read from Iggy
// once.
func TestFetchCacheOneRebuild(t *testing.T) {
	m := newMemStore()
	writer := cacheBridge(t, m, -1)
	all := produceCached(t, writer, m, "v")
	b := cacheBridge(t, m, 0)
	gate := make(chan struct{})
	m.mu.Lock()
	m.pollGate = gate
	m.mu.Unlock()
	before := polledMessages(m)
	const readers = 4
	got := make([][]byte, readers)
	errs := make([]error, readers)
	var wg sync.WaitGroup
	read := func(i int) {
		res, err := b.fetch(context.Background(), m, "t", 0, 0, 1<<20, 12)
		if err == nil {
			got[i] = bytes.Clone(res.Records)
			res.Release()
		}
		errs[i] = err
	}
	wg.Go(func() { read(0) })
	checkfor.Eventually(t, 10*time.Second, "the first reader to start its rebuild", func() error {
		b.rebuilds.mu.Lock()
		defer b.rebuilds.mu.Unlock()
		if n := len(b.rebuilds.m); n != 1 {
			return fmt.Errorf("%d rebuilds under way", n)
		}
		return nil
	})
	for i := 1; i < readers; i++ {
		wg.Go(func() { read(i) })
	}
	checkfor.Eventually(t, 10*time.Second, "the other readers to wait", func() error {
		if n := b.rebuilds.waiting.Load(); n != readers-1 {
			return fmt.Errorf("%d readers waiting", n)
		}
		return nil
	})
	close(gate)
	wg.Wait()
	for i := range readers {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
		checkRecords(t, readBatches(t, got[i]), all, 0)
	}
	// The records once, and one message per waiting reader for its check.
	if read := polledMessages(m) - before; read != len(all)+readers-1 {
		t.Errorf("%d readers read %d messages from Iggy, want %d", readers, read, len(all)+readers-1)
	}
}

// TestFetchAtEndFromMemory: a consumer at the end of a partition, which Iggy told within endFresh,
// is answered without asking Iggy again; a record this gateway appends shows at once, one another
// writer appends once endFresh has passed.
func TestFetchAtEndFromMemory(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b, clk := newClockedBridge(t, m)
	if err := m.createTopic(ctx, defaultStream, "t", 1, topicOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("a", 2), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	fetchAt := func(offset int64) (kafka.FetchResult, int) {
		t.Helper()
		m.mu.Lock()
		before := m.polls
		m.mu.Unlock()
		res, err := b.fetch(ctx, m, "t", 0, offset, 1<<20, 12)
		if err != nil {
			t.Fatalf("fetch at %d: %v", offset, err)
		}
		res.Release()
		m.mu.Lock()
		defer m.mu.Unlock()
		return res, m.polls - before
	}
	if res, polls := fetchAt(2); polls == 0 || res.HighWatermark != 2 {
		t.Fatalf("first fetch at the end: %d polls, high watermark %d; want Iggy asked and 2", polls, res.HighWatermark)
	}
	if res, polls := fetchAt(2); polls != 0 || res.HighWatermark != 2 || len(res.Records) != 0 {
		t.Fatalf("fetch at the end just after: %d polls, high watermark %d, %d bytes; want none, 2, none", polls, res.HighWatermark, len(res.Records))
	}
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("b", 1), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	if res, _ := fetchAt(2); len(readBatches(t, res.Records)) == 0 {
		t.Fatal("a record this gateway appended did not show at once")
	}
	fetchAt(3) // at the end again, told by Iggy
	if err := m.appendNative(defaultStream, "t", 0, "native"); err != nil {
		t.Fatal(err)
	}
	if res, polls := fetchAt(3); polls != 0 || res.HighWatermark != 3 {
		t.Fatalf("within endFresh: %d polls, high watermark %d; want the end as told", polls, res.HighWatermark)
	}
	clk.Advance(endFresh)
	if res, polls := fetchAt(3); polls == 0 || res.HighWatermark != 4 {
		t.Fatalf("after endFresh: %d polls, high watermark %d; want Iggy asked and 4", polls, res.HighWatermark)
	}
}

// put keeps batch under k as a run of one: n records, id the Iggy id of its first message.
func (c *rebuiltCache) put(k rebuiltKey, batch []byte, n int32, id [16]byte) {
	c.putRun(batch, []rebuiltBatch{{k: k, end: len(batch), n: n, id: id}})
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
