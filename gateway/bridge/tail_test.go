package bridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// tailBridge is a bridge over m with a tail cache of limit bytes and one topic "t" of one
// partition.
func tailBridge(t *testing.T, m *memStore, limit int64) *Bridge {
	t.Helper()
	return topicBridge(t, m, Config{TailCacheBytes: limit})
}

// topicBridge is a bridge over m with cfg, topics created on first use, and one topic "t" of one
// partition.
func topicBridge(t *testing.T, m *memStore, cfg Config) *Bridge {
	t.Helper()
	cfg.AutoCreateTopics = true
	b, err := newBridge(context.Background(), m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.topicInfo(context.Background(), m, "t", true); err != nil {
		t.Fatal(err)
	}
	return b
}

// asStored is a produced Kafka batch as the tail cache hands it out: the Iggy base offset and
// leader epoch 0 written in, nothing else changed (both fields lie outside the CRC).
func asStored(batch []byte, base int64) []byte {
	out := bytes.Clone(batch)
	binary.BigEndian.PutUint64(out[0:], uint64(base))
	binary.BigEndian.PutUint32(out[12:], 0)
	return out
}

// TestTailCacheServesProducedBytes: a consumer at the tail gets the producers' batches byte for
// byte (at their Iggy offsets), from the batch holding its offset, and the records read the
// same as batches rebuilt from Iggy by a gateway without the cache.
func TestTailCacheServesProducedBytes(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, 1<<20)
	first := kafkaBatch(t, codecSnappy, valueRecs("a", 3), -1, -1, -1)
	second := kafkaBatch(t, codecLZ4, mixedRecords(), 7, 0, 0)
	for _, in := range [][]byte{first, second} {
		if _, err := b.produce(ctx, m, "t", 0, in); err != nil {
			t.Fatal(err)
		}
	}
	want := append(asStored(first, 0), asStored(second, 3)...)
	for _, from := range []int64{0, 2} {
		before := b.metrics.TailFetches()
		res, err := b.fetch(ctx, m, "t", 0, from, 1<<20, 12)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Records, want) {
			t.Errorf("from %d: the answer is not the produced batches as they came", from)
		}
		if res.HighWatermark != int64(3+len(mixedRecords())) {
			t.Errorf("from %d: high watermark %d", from, res.HighWatermark)
		}
		if b.metrics.TailFetches() != before+1 {
			t.Errorf("from %d: tail fetches went from %d to %d", from, before, b.metrics.TailFetches())
		}
		res.Release()
	}
	other := tailBridge(t, m, -1)
	rebuilt, _ := fetchAll(t, other, m, "t", 0, 0)
	cached, _ := fetchAll(t, b, m, "t", 0, 0)
	wantRecs := append(valueRecs("a", 3), mixedRecords()...)
	checkRecords(t, rebuilt, wantRecs, 0)
	checkRecords(t, cached, wantRecs, 0)
}

// TestTailCacheAnswerFillsMaxBytes: when the next cached batch would not fit in maxBytes, the
// tail's answer is complete, as Kafka's whole batches up to the limit: the next batch is not
// read and rebuilt from Iggy only to go past it. With room for it, it is taken too.
func TestTailCacheAnswerFillsMaxBytes(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, 1<<20)
	var batches [][]byte
	for i := range 3 {
		recs := valueRecs(fmt.Sprint("f", i), 4)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 100) // compressible: the stored records are far larger
		}
		in := kafkaBatch(t, codecSnappy, recs, -1, -1, -1)
		batches = append(batches, asStored(in, int64(4*i)))
		if _, err := b.produce(ctx, m, "t", 0, in); err != nil {
			t.Fatal(err)
		}
	}
	two := len(batches[0]) + len(batches[1])
	for _, tc := range []struct {
		maxBytes int
		want     []byte
	}{
		{two + len(batches[2]) - 1, append(bytes.Clone(batches[0]), batches[1]...)},
		{two + len(batches[2]), bytes.Join(batches, nil)},
	} {
		before := polledMessages(m)
		res, err := b.fetch(ctx, m, "t", 0, 0, int32(tc.maxBytes), 12)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Records, tc.want) {
			t.Errorf("maxBytes %d: answered %d bytes, want the %d of the produced batches that fit", tc.maxBytes, len(res.Records), len(tc.want))
		}
		if read := polledMessages(m) - before; read != 1 {
			t.Errorf("maxBytes %d: read %d messages from Iggy, want the one that checks the tail", tc.maxBytes, read)
		}
		res.Release()
	}
}

// TestTailCacheRecreatedPartition: another gateway deletes the topic and writes new records at
// the same offsets; the first gateway must answer with the new records, not its cached ones.
func TestTailCacheRecreatedPartition(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, 1<<20)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("old", 4), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	if err := m.deleteTopic(ctx, defaultStream, "t"); err != nil {
		t.Fatal(err)
	}
	other := tailBridge(t, m, -1)
	if _, err := other.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("new", 4), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	got, _ := fetchAll(t, b, m, "t", 0, 0)
	checkRecords(t, got, valueRecs("new", 4), 0)
	// The check dropped the stale tail: the next fetch is rebuilt from Iggy at once.
	before := b.metrics.TailFetches()
	got, _ = fetchAll(t, b, m, "t", 0, 2)
	checkRecords(t, got, valueRecs("new", 4)[2:], 2)
	if b.metrics.TailFetches() != before {
		t.Error("a fetch was answered from a tail that belongs to a deleted partition")
	}
}

// TestTailCacheBound: the cache keeps at most its limit and evicts the oldest batches first;
// evicted batches are still answered, rebuilt from Iggy, and an oversized batch is not cached.
func TestTailCacheBound(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	const limit = 64 << 10
	b := tailBridge(t, m, limit)
	var all []trec
	for i := range 40 {
		recs := valueRecs(fmt.Sprint("b", i), 4)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 200) // about 4 KiB per batch
		}
		all = append(all, recs...)
		if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
		if used := b.cache.used; used > limit {
			t.Fatalf("after batch %d the cache holds %d bytes, limit %d", i, used, limit)
		}
	}
	st := b.part("t", 0)
	st.tail.mu.Lock()
	oldest, newest := st.tail.batches[0].kafka, st.tail.batches[len(st.tail.batches)-1].kafka
	st.tail.mu.Unlock()
	if oldest != nil || newest == nil {
		t.Fatalf("oldest batch cached %v, newest cached %v: want only the newest", oldest != nil, newest != nil)
	}
	got, _ := fetchAll(t, b, m, "t", 0, 0)
	checkRecords(t, got, all, 0)

	big := valueRecs("big", 1)
	big[0].Value = bytes.Repeat([]byte("x"), limit/2)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, big, -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	st.tail.mu.Lock()
	cachedBig := st.tail.batches[len(st.tail.batches)-1].kafka != nil
	st.tail.mu.Unlock()
	if cachedBig {
		t.Error("a batch of half the cache was cached")
	}
}

// TestTailSpanAligns: a gateway that knows the batches asks Iggy for whole ones, so a fetch
// limited by bytes ends on a batch boundary and the next one starts on one.
func TestTailSpanAligns(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, -1) // no cache: every answer is rebuilt from Iggy
	for i := range 3 {
		recs := valueRecs(fmt.Sprint("s", i), 10)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 20) // worth compressing
		}
		if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecSnappy, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := b.fetch(ctx, m, "t", 0, 0, 1, 12) // room for one batch only
	if err != nil {
		t.Fatal(err)
	}
	got, codecs := readBatchesCodecs(t, res.Records)
	res.Release()
	if len(got) != 10 || len(codecs) != 1 || codecs[0] != codecSnappy {
		t.Fatalf("got %d records in batches of codecs %v, want one whole snappy batch of 10", len(got), codecs)
	}
	res, err = b.fetch(ctx, m, "t", 0, 13, 1, 12)
	if err != nil {
		t.Fatal(err)
	}
	got, codecs = readBatchesCodecs(t, res.Records)
	res.Release()
	if len(got) != 10 || got[0].Offset != 10 || codecs[0] != codecSnappy {
		t.Fatalf("from 13: got %d records from %d, codecs %v; want the whole batch from 10", len(got), got[0].Offset, codecs)
	}
}

// TestIncompressibleGoesPlain: batches rebuilt from Iggy are compressed again with their
// producer's codec only while that pays: after a batch that snappy could not shrink, the next
// plainRun batches go out uncompressed and then compression is tried again; compressible
// batches stay compressed, and a codec the operator chose is always used.
func TestIncompressibleGoesPlain(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []trec {
		recs := make([]trec, n)
		for i := range recs {
			v := make([]byte, 512)
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			recs[i] = trec{Value: v, TS: 1_700_000_000_000}
		}
		return recs
	}
	for _, tc := range []struct {
		setting string
		want    func(i int) int // codec of batch i
	}{
		{"producer", func(i int) int {
			if i%(plainRun+1) == 0 {
				return codecSnappy
			}
			return codecNone
		}},
		{"snappy", func(int) int { return codecSnappy }},
	} {
		m := newMemStore()
		b, err := newBridge(ctx, m, Config{AutoCreateTopics: true, TailCacheBytes: -1, FetchCodec: tc.setting})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if _, err := b.topicInfo(ctx, m, "t", true); err != nil {
			t.Fatal(err)
		}
		const batches = 2*plainRun + 3
		for range batches {
			if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecSnappy, random(4), -1, -1, -1)); err != nil {
				t.Fatal(err)
			}
		}
		var codecs []int
		for off := int64(0); off < 4*batches; {
			res, err := b.fetch(ctx, m, "t", 0, off, 1, 12) // one batch per fetch
			if err != nil {
				t.Fatal(err)
			}
			got, cs := readBatchesCodecs(t, res.Records)
			res.Release()
			codecs = append(codecs, cs...)
			off = got[len(got)-1].Offset + 1
		}
		for i, c := range codecs {
			if c != tc.want(i) {
				t.Fatalf("%s: codecs of the fetched batches %v: batch %d has %d, want %d", tc.setting, codecs, i, c, tc.want(i))
			}
		}
	}
}

// TestWatermarksOnly: a fetch asked for no records (maxBytes 0) answers the high watermark and
// nothing else, and an offset past the log is still out of range.
func TestWatermarksOnly(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, 1<<20)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("w", 5), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 3, 5} {
		res, err := b.fetch(ctx, m, "t", 0, off, 0, 12)
		if err != nil {
			t.Fatalf("offset %d: %v", off, err)
		}
		if len(res.Records) != 0 || res.HighWatermark != 5 {
			t.Fatalf("offset %d: %d bytes of records, high watermark %d; want none and 5", off, len(res.Records), res.HighWatermark)
		}
		res.Release()
	}
	if _, err := b.fetch(ctx, m, "t", 0, 6, 0, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("offset past the log: %v", err)
	}
}

// TestTailLendsTheLastBatch: a consumer at the tail whose answer is the newest batch alone gets
// the tail cache's own buffer, not a copy; the cache does not reuse that buffer while the answer
// holds it, however many batches are evicted meanwhile, and reuses evicted buffers again once
// the answer is released.
func TestTailLendsTheLastBatch(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	const limit = 64 << 10
	b := tailBridge(t, m, limit)
	batch := func(i int) []byte {
		recs := valueRecs(fmt.Sprintf("b%02d", i), 4) // every batch of one size: buffers fit each other
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 200) // about 4 KiB per batch
		}
		return kafkaBatch(t, codecNone, recs, -1, -1, -1)
	}
	first := batch(0)
	if _, err := b.produce(ctx, m, "t", 0, first); err != nil {
		t.Fatal(err)
	}
	res, err := b.fetch(ctx, m, "t", 0, 0, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	want := asStored(first, 0)
	if !bytes.Equal(res.Records, want) {
		t.Fatal("the answer is not the produced batch")
	}
	st := b.part("t", 0)
	st.tail.mu.Lock()
	lent := st.tail.batches[0]
	same := &lent.kafka[0] == &res.Records[0]
	st.tail.mu.Unlock()
	if !same {
		t.Fatal("the answer is a copy of the cached batch, not the cache's buffer")
	}
	// Enough batches of the same size to evict the lent one and reuse every freed buffer.
	for i := 1; i < 40; i++ {
		if _, err := b.produce(ctx, m, "t", 0, batch(i)); err != nil {
			t.Fatal(err)
		}
	}
	st.tail.mu.Lock()
	evicted := lent.kafka == nil
	st.tail.mu.Unlock()
	if !evicted {
		t.Fatal("the lent batch is still cached: the test evicted nothing")
	}
	if !bytes.Equal(res.Records, want) {
		t.Fatal("a lent batch's buffer was reused while its answer held it")
	}
	res.Release()
	st.tail.mu.Lock()
	pins := lent.pins
	st.tail.mu.Unlock()
	if pins != 0 {
		t.Fatalf("the released batch still has %d pins", pins)
	}
}

// TestFetchAtEndWhileAppending: while this gateway's append to a partition is stored in Iggy but
// not yet in the tail, a consumer at the end is answered with nothing at that end without asking
// Iggy, and one reading the tail gets the tail's batches up to there, not the new batch rebuilt
// from Iggy; once the append is done the new batch comes from the tail as the producer sent it.
func TestFetchAtEndWhileAppending(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	clk := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	b := topicBridge(t, m, Config{TailCacheBytes: 1 << 20, Clock: clk})
	first, second, release, produced := appendHeld(t, b, m)
	m.mu.Lock()
	m.sendStored = nil
	polls := m.polls
	m.mu.Unlock()
	res, err := b.fetch(ctx, m, "t", 0, 2, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	polled := m.polls - polls
	m.mu.Unlock()
	if len(res.Records) != 0 || res.HighWatermark != 2 || polled != 0 {
		t.Errorf("fetch at the end during the append: %d bytes, high watermark %d, %d polls of Iggy; want none, 2, none",
			len(res.Records), res.HighWatermark, polled)
	}
	res.Release()
	// From the tail's batch on: that batch, and not the one under way rebuilt from Iggy.
	res, err = b.fetch(ctx, m, "t", 0, 0, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Records, asStored(first, 0)) || res.HighWatermark != 2 {
		t.Errorf("fetch from the tail during the append: %d batches, high watermark %d; want the first batch alone, 2",
			len(readBatches(t, res.Records)), res.HighWatermark)
	}
	res.Release()
	// Iggy told that read a high watermark past the batch under way; a wait at the end still
	// lasts until the append is done, or the consumer would read again at once, and again.
	added, waited := clk.Added(), make(chan struct{})
	go func() {
		b.Wait(ctx, "t", 0, 2)
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("a wait at the end returned while the append was under way")
	case <-added:
	}
	close(release)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	<-waited // woken by the append: the fake clock does not move
	before := b.metrics.TailFetches()
	res, err = b.fetch(ctx, m, "t", 0, 2, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if !bytes.Equal(res.Records, asStored(second, 2)) || res.HighWatermark != 5 || b.metrics.TailFetches() != before+1 {
		t.Errorf("fetch after the append: high watermark %d, tail fetches %d more; want the produced batch from the tail, 5",
			res.HighWatermark, b.metrics.TailFetches()-before)
	}
}

// TestFetchTailAgainAfterAppend: an append of this gateway that ends while a read is checking
// the tail's batches with Iggy (stillThere) leaves its batch in the tail by the time the read
// goes on: the read takes it from there, not rebuilt from Iggy.
func TestFetchTailAgainAfterAppend(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := tailBridge(t, m, 1<<20)
	first, second, release, produced := appendHeld(t, b, m)
	var wide int // polls of more than one message: reads of Iggy to rebuild from
	ended := false
	m.mu.Lock()
	m.sendStored = nil
	m.pollHook = func(count uint32) {
		if count > 1 {
			wide++
			return
		}
		if !ended { // the tail's check: the append ends now
			close(release)
			ended = true
			if err := <-produced; err != nil {
				t.Error(err)
			}
		}
	}
	m.mu.Unlock()
	before := b.metrics.TailFetches()
	res, err := b.fetch(ctx, m, "t", 0, 0, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	if !ended {
		t.Fatal("the read did not check the tail's batch with Iggy")
	}
	want := append(asStored(first, 0), asStored(second, 2)...)
	if !bytes.Equal(res.Records, want) || res.HighWatermark != 5 || wide != 0 || b.metrics.TailFetches() != before+2 {
		t.Errorf("got %d batches, high watermark %d, %d wide polls, %d tail reads; want both batches from the tail, 5, none, 2",
			len(readBatches(t, res.Records)), res.HighWatermark, wide, b.metrics.TailFetches()-before)
	}
}

// appendHeld produces a batch of 2 records to partition 0 of "t", then starts a second of 3 and
// holds it once Iggy stored it, before the tail remembers it, until release is closed; produced
// receives the second produce's error once it ends.
func appendHeld(t *testing.T, b *Bridge, m *memStore) (first, second []byte, release chan struct{}, produced chan error) {
	t.Helper()
	ctx := context.Background()
	first = kafkaBatch(t, codecNone, valueRecs("a", 2), -1, -1, -1)
	if _, err := b.produce(ctx, m, "t", 0, first); err != nil {
		t.Fatal(err)
	}
	stored, release := make(chan struct{}), make(chan struct{})
	m.mu.Lock()
	m.sendStored = func() {
		close(stored)
		<-release
	}
	m.mu.Unlock()
	second = kafkaBatch(t, codecNone, valueRecs("b", 3), -1, -1, -1)
	produced = make(chan error, 1)
	go func() {
		_, err := b.produce(ctx, m, "t", 0, second)
		produced <- err
	}()
	<-stored
	return first, second, release, produced
}
