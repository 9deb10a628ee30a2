package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func newMemBridge(t testing.TB, m *memStore) *Bridge {
	t.Helper()
	b, err := newBridge(context.Background(), m, Config{AutoCreateTopics: true, DefaultPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func valueRecs(prefix string, n int) []trec {
	out := make([]trec, n)
	for i := range out {
		out[i] = trec{Value: fmt.Appendf(nil, "%s-%d", prefix, i), TS: 1_700_000_000_000 + int64(i)}
	}
	return out
}

func fetchAll(t testing.TB, b *Bridge, as iggyAPI, topic string, p int32, from int64) ([]fetched, kafka.FetchResult) {
	t.Helper()
	r, err := b.fetch(context.Background(), as, topic, p, from, 1<<20, 12)
	if err != nil {
		t.Fatalf("fetch %s/%d@%d: %v", topic, p, from, err)
	}
	defer r.Release()
	return readBatches(t, r.Records), r
}

func TestProduceFetchThroughStore(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "orders", true); err != nil {
		t.Fatal(err)
	}
	first, second := valueRecs("a", 3), mixedRecords()
	in := append(kafkaBatch(t, codecLZ4, first, -1, -1, -1), kafkaBatch(t, codecGzip, second, -1, -1, -1)...)
	res, err := b.produce(ctx, m, "orders", 1, in)
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("produce: %+v %v", res, err)
	}
	res, err = b.produce(ctx, m, "orders", 1, kafkaBatch(t, codecNone, valueRecs("b", 2), -1, -1, -1))
	if err != nil || res.BaseOffset != int64(len(first)+len(second)) {
		t.Fatalf("second produce: %+v %v", res, err)
	}
	got, r := fetchAll(t, b, m, "orders", 1, 0)
	want := append(append(append([]trec{}, first...), second...), valueRecs("b", 2)...)
	checkRecords(t, got, want, 0)
	if r.HighWatermark != int64(len(want)) {
		t.Errorf("high watermark %d, want %d", r.HighWatermark, len(want))
	}
	// Reading at the end is empty, past it is out of range.
	if got, r := fetchAll(t, b, m, "orders", 1, int64(len(want))); len(got) != 0 || r.HighWatermark != int64(len(want)) {
		t.Errorf("fetch at end: %d records hw %d", len(got), r.HighWatermark)
	}
	if _, err := b.fetch(ctx, m, "orders", 1, int64(len(want))+5, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Errorf("fetch past end: %v", err)
	}
	if _, err := b.fetch(ctx, m, "orders", 0, 1, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Errorf("fetch past end of empty partition: %v", err)
	}
	if _, err := b.produce(ctx, m, "missing", 0, kafkaBatch(t, codecNone, first, -1, -1, -1)); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("produce to missing topic: %v", err)
	}
	if _, err := b.produce(ctx, m, "orders", 7, kafkaBatch(t, codecNone, first, -1, -1, -1)); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("produce to missing partition: %v", err)
	}
	if _, err := b.fetch(ctx, m, "missing", 0, 0, 1<<20, 12); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("fetch from missing topic: %v", err)
	}
}

func TestFetchMaxBytes(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "t", true)
	for i := range 10 {
		recs := []trec{{Value: make([]byte, 1000), TS: int64(i)}}
		if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := b.fetch(ctx, m, "t", 0, 0, 2500, 12)
	if err != nil {
		t.Fatal(err)
	}
	got := readBatches(t, r.Records)
	r.Release()
	if len(got) < 2 || len(got) > 4 {
		t.Errorf("maxBytes 2500 returned %d records of 1000 bytes", len(got))
	}
	// A limit smaller than one batch still returns one whole batch.
	r, err = b.fetch(ctx, m, "t", 0, 3, 10, 12)
	if err != nil {
		t.Fatal(err)
	}
	got = readBatches(t, r.Records)
	r.Release()
	if len(got) != 1 || got[0].Offset != 3 {
		t.Errorf("maxBytes 10 returned %d records", len(got))
	}
}

func TestIdempotentProducer(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "idem", true)
	pid, epoch, err := b.initProducerID(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(seq int32, n int) []byte {
		return kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("s", seq), n), pid, epoch, seq)
	}
	mustProduce := func(b *Bridge, in []byte, want int64) {
		t.Helper()
		res, err := b.produce(ctx, m, "idem", 0, in)
		if err != nil || res.BaseOffset != want {
			t.Fatalf("produce: base %d err %v, want base %d", res.BaseOffset, err, want)
		}
	}
	mustProduce(b, batch(0, 3), 0)
	mustProduce(b, batch(3, 2), 3)
	mustProduce(b, batch(0, 3), 0) // resend of an older batch
	mustProduce(b, batch(3, 2), 3)
	if got, _ := fetchAll(t, b, m, "idem", 0, 0); len(got) != 5 {
		t.Fatalf("%d records stored, want 5", len(got))
	}
	if _, err := b.produce(ctx, m, "idem", 0, batch(9, 1)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Errorf("sequence gap: %v", err)
	}
	if _, err := b.produce(ctx, m, "idem", 0, kafkaBatch(t, codecNone, valueRecs("old", 1), pid, epoch-1, 5)); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Errorf("fenced epoch: %v", err)
	}

	// A second gateway over the same store, with no cache, recognises the
	// resend from Iggy alone and continues the sequence.
	b2 := newMemBridge(t, m)
	mustProduce(b2, batch(3, 2), 3)
	mustProduce(b2, batch(0, 3), 0)
	if _, err := b2.produce(ctx, m, "idem", 0, batch(6, 1)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Errorf("sequence gap on second gateway: %v", err)
	}
	mustProduce(b2, batch(5, 1), 5)
	// Back on the first gateway: it notices the foreign append only after
	// its own next write, so a resend of b2's batch must still be found.
	mustProduce(b, batch(6, 4), 6)
	mustProduce(b, batch(5, 1), 5)
	if got, _ := fetchAll(t, b, m, "idem", 0, 0); len(got) != 10 {
		t.Fatalf("%d records stored, want 10", len(got))
	}

	// Past the trust window a gateway checks Iggy before accepting: b2
	// appends, and a resend of that batch to b is recognised although b's
	// own cache expects exactly that sequence next.
	mustProduce(b2, batch(10, 2), 10)
	b.part("idem", 0).confirmed = time.Time{}
	mustProduce(b, batch(10, 2), 10)
	if got, _ := fetchAll(t, b, m, "idem", 0, 0); len(got) != 12 {
		t.Fatalf("%d records stored, want 12", len(got))
	}

	// Two gateways hand out different producer ids.
	pid2, _, err := b2.initProducerID(ctx, m)
	if err != nil || pid2 == pid {
		t.Errorf("second producer id %d (first %d), err %v", pid2, pid, err)
	}
}

func TestIdempotentAfterLostReply(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "lost", true)
	in := kafkaBatch(t, codecNone, valueRecs("x", 2), 7, 0, 0)
	m.sendErr, m.sendLost = errInjected, true
	if _, err := b.produce(ctx, m, "lost", 0, in); !errors.Is(err, errInjected) {
		t.Fatalf("want injected error, got %v", err)
	}
	// The batch landed although the reply was lost; the retry must be
	// answered from Iggy, not stored again.
	res, err := b.produce(ctx, m, "lost", 0, in)
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("retry: %+v %v", res, err)
	}
	if got, _ := fetchAll(t, b, m, "lost", 0, 0); len(got) != 2 {
		t.Errorf("%d records stored, want 2", len(got))
	}
}

func TestNativeMessagesThroughBridge(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "native", true)
	if err := m.appendNative("kafka", "native", 0, "one", "two"); err != nil {
		t.Fatal(err)
	}
	got, _ := fetchAll(t, b, m, "native", 0, 0)
	checkRecords(t, got, []trec{{Value: []byte("one"), TS: 1_700_000_000_000}, {Value: []byte("two"), TS: 1_700_000_000_001}}, 0)
}

func TestListOffset(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "lo", true)
	if off, _, err := b.listOffset(ctx, m, "lo", 0, -1); err != nil || off != 0 {
		t.Fatalf("latest of empty: %d %v", off, err)
	}
	for i := range 5 {
		recs := []trec{{Value: []byte("a"), TS: int64(100 * (2*i + 1))}, {Value: []byte("b"), TS: int64(100 * (2*i + 2))}}
		if _, err := b.produce(ctx, m, "lo", 0, kafkaBatch(t, codecNone, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct{ ts, off, gotTS int64 }{
		{-1, 10, -1}, {-2, 0, -1}, {-3, 9, 1000}, {0, 0, 100}, {100, 0, 100}, {101, 1, 200}, {550, 5, 600}, {1000, 9, 1000}, {1001, -1, -1},
	}
	for _, c := range cases {
		off, ts, err := b.listOffset(ctx, m, "lo", 0, c.ts)
		if err != nil || off != c.off || ts != c.gotTS {
			t.Errorf("ListOffset(%d) = %d, %d, %v; want %d, %d", c.ts, off, ts, err, c.off, c.gotTS)
		}
	}
	if ls, hw, err := b.offsets(ctx, m, "lo", 0); ls != 0 || hw != 10 || err != nil {
		t.Errorf("Offsets = %d %d %v", ls, hw, err)
	}
}

// TestWaitWakesOnProduce runs the bridge on a fake clock that never moves, so the re-poll timer
// never fires: only the produce's wake-up can end the wait.
func TestWaitWakesOnProduce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newMemStore()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(ctx, m, Config{AutoCreateTopics: true, DefaultPartitions: 2, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.topicInfo(ctx, m, "w", true); err != nil {
		t.Fatal(err)
	}

	armed := fc.Added()
	woke := make(chan struct{})
	go func() {
		b.Wait(ctx, "w", 0, 0)
		close(woke)
	}()
	// The re-poll timer is made after Wait took the partition's wake-up channel, so from here on
	// a produce must wake it.
	select {
	case <-armed:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait never armed its re-poll timer")
	}
	if _, err := b.produce(ctx, m, "w", 0, kafkaBatch(t, codecNone, valueRecs("w", 1), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait was not woken by the produce")
	}
	if n := fc.Timers(); n != 0 {
		t.Errorf("%d re-poll timers left pending after the wake-up", n)
	}

	// Data already there: Wait returns at once, without a timer.
	done := make(chan struct{})
	go func() {
		b.Wait(ctx, "w", 0, 0)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait with data present did not return")
	}
}

func TestTopicAdmin(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	v := func(s string) *string { return &s }
	if err := b.createTopic(ctx, m, "t1", 3, map[string]*string{"retention.ms": v("60000"), "cleanup.policy": v("delete")}, false); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		parts int32
		cfg   map[string]*string
		want  error
	}{
		{"t1", 1, nil, kerr.TopicAlreadyExists},
		{"bad/name", 1, nil, kerr.InvalidTopicException},
		{"t2", 0, nil, kerr.InvalidPartitions},
		{"t2", 1, map[string]*string{"cleanup.policy": v("compacted")}, kerr.InvalidConfig},
		{"t2", 1, map[string]*string{"no.such.config": v("1")}, kerr.InvalidConfig},
	}
	for _, c := range cases {
		if err := b.createTopic(ctx, m, c.name, c.parts, c.cfg, false); !errors.Is(err, c.want) {
			t.Errorf("create %s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := b.createTopic(ctx, m, "t1", 1, nil, true); !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Errorf("validate-only existing: %v", err)
	}
	if err := b.createTopic(ctx, m, "t3", -1, nil, true); err != nil {
		t.Errorf("validate-only new: %v", err)
	}
	if _, err := b.topicInfo(ctx, m, "t3", false); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("validate-only created the topic: %v", err)
	}
	ti, err := b.topicInfo(ctx, m, "t1", false)
	if err != nil || ti.Partitions != 3 || ti.Name != "t1" {
		t.Errorf("topic t1: %+v %v", ti, err)
	}
	if err := b.createPartitions(ctx, m, "t1", 2, false); !errors.Is(err, kerr.InvalidPartitions) {
		t.Errorf("shrink: %v", err)
	}
	if err := b.createPartitions(ctx, m, "t1", 5, false); err != nil {
		t.Errorf("grow: %v", err)
	}
	if ti, _ := b.topicInfo(ctx, m, "t1", false); ti.Partitions != 5 {
		t.Errorf("after grow %d partitions", ti.Partitions)
	}
	cfgs, err := b.topicConfigs(ctx, m, "t1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cfgs {
		if c.Name == "retention.ms" {
			found = c.Value == "60000" && !c.Default
		}
	}
	if !found {
		t.Errorf("retention.ms not reported as 60000: %+v", cfgs)
	}
	ts, err := b.listTopics(ctx, m)
	if err != nil || len(ts) != 1 {
		t.Errorf("list: %+v %v", ts, err)
	}
	if err := b.deleteTopic(ctx, m, "t1"); err != nil {
		t.Fatal(err)
	}
	if err := b.deleteTopic(ctx, m, "t1"); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("delete missing: %v", err)
	}
	b.cfg.AutoCreateTopics = false
	if _, err := b.topicInfo(ctx, m, "auto", true); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("auto-create disabled: %v", err)
	}
}

func TestTopicMaxMessageBytes(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1, b2 := newMemBridge(t, m), newMemBridge(t, m)
	big := kafkaBatch(t, codecZstd, []trec{{Value: make([]byte, 5<<20), TS: 1}}, -1, -1, -1)
	limit := "10485760"
	if err := b1.createTopic(ctx, m, "large", 1, map[string]*string{"max.message.bytes": &limit}, false); err != nil {
		t.Fatal(err)
	}
	if err := b1.createTopic(ctx, m, "small", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	// The limit is stored in Iggy: a second gateway honours it too.
	for _, b := range []*Bridge{b1, b2} {
		if _, err := b.produce(ctx, m, "large", 0, big); err != nil {
			t.Errorf("5 MiB record to a topic allowing 10 MiB: %v", err)
		}
		if _, err := b.produce(ctx, m, "small", 0, big); !errors.Is(err, kerr.MessageTooLarge) {
			t.Errorf("5 MiB record to a default topic: %v", err)
		}
	}
	cfgs, err := b2.topicConfigs(ctx, m, "large")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		if c.Name == "max.message.bytes" && (c.Value != limit || c.Default) {
			t.Errorf("max.message.bytes reported as %+v", c)
		}
	}
	// A re-created topic of the same name starts from the defaults.
	if err := b1.deleteTopic(ctx, m, "large"); err != nil {
		t.Fatal(err)
	}
	if err := b1.createTopic(ctx, m, "large", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	b2.conf.loaded = time.Time{}
	if _, err := b2.produce(ctx, m, "large", 0, big); !errors.Is(err, kerr.MessageTooLarge) {
		t.Errorf("5 MiB record after re-creation without the config: %v", err)
	}
}

// TestNewProducerNeedsNoScan: once a scan has read a partition from offset 0, and only this
// gateway appended since, a producer the cache does not know has no history there and is
// accepted without reading Iggy; after another gateway appends, the next unknown producer is
// looked up in Iggy again, and a resend that gateway stored is still recognised.
func TestNewProducerNeedsNoScan(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "idem", true); err != nil {
		t.Fatal(err)
	}
	batch := func(pid int64, seq int32) []byte {
		return kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("p", pid, "s", seq), 2), pid, 0, seq)
	}
	polls := func() int { m.mu.Lock(); defer m.mu.Unlock(); return m.polls }
	if _, err := b.produce(ctx, m, "idem", 0, batch(1, 0)); err != nil {
		t.Fatal(err)
	}
	for pid := int64(2); pid < 6; pid++ {
		before := polls()
		if _, err := b.produce(ctx, m, "idem", 0, batch(pid, 0)); err != nil {
			t.Fatal(err)
		}
		if polls() != before {
			t.Fatalf("producer %d: %d polls for a producer with no history", pid, polls()-before)
		}
	}
	// Another gateway stores producer 9's first batch; the first gateway sees the resend.
	other := newMemBridge(t, m)
	res, err := other.produce(ctx, m, "idem", 0, batch(9, 0))
	if err != nil {
		t.Fatal(err)
	}
	st := b.part("idem", 0)
	st.mu.Lock()
	st.confirmed = time.Time{} // past the trust window
	st.mu.Unlock()
	again, err := b.produce(ctx, m, "idem", 0, batch(9, 0))
	if err != nil || again.BaseOffset != res.BaseOffset {
		t.Fatalf("resend after a foreign append: base %d err %v, want %d", again.BaseOffset, err, res.BaseOffset)
	}
	if got, _ := fetchAll(t, b, m, "idem", 0, 0); len(got) != 12 {
		t.Fatalf("%d records stored, want 12", len(got))
	}
}

// ListOffsets -3 (MAX_TIMESTAMP) is the record with the largest timestamp, the first of them on
// a tie, wherever it lies: records at t+100 s, t+300 s, t+200 s answer offset 1. What a gateway
// learnt of a partition is checked against Iggy before it is used again, so a topic another
// gateway re-created is read afresh.
func TestListOffsetMaxTimestamp(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b, other := newMemBridge(t, m), newMemBridge(t, m)
	const t0 = int64(1_700_000_000_000)
	produce := func(b *Bridge, tss ...int64) {
		t.Helper()
		var recs []trec
		for _, ts := range tss {
			recs = append(recs, trec{Value: []byte("v"), TS: t0 + ts})
		}
		if _, err := b.produce(ctx, m, "mx", 0, kafkaBatch(t, codecNone, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	want := func(off, ts int64) {
		t.Helper()
		gotOff, gotTS, err := b.listOffset(ctx, m, "mx", 0, -3)
		if err != nil || gotOff != off || gotTS != ts {
			t.Fatalf("max timestamp: offset %d, timestamp %d, %v; want %d, %d", gotOff, gotTS, err, off, ts)
		}
	}
	if _, err := b.topicInfo(ctx, m, "mx", true); err != nil {
		t.Fatal(err)
	}
	want(-1, -1)
	produce(b, 100_000)
	produce(b, 300_000)
	produce(b, 200_000)
	want(1, t0+300_000)
	produce(b, 250_000, 300_000) // a tie keeps the first
	want(1, t0+300_000)
	produce(other, 50_000, 400_000, 10_000) // in one batch, appended by another gateway
	want(6, t0+400_000)

	if err := other.deleteTopic(ctx, m, "mx"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.topicInfo(ctx, m, "mx", true); err != nil {
		t.Fatal(err)
	}
	produce(other, 1, 2, 3, 4, 5, 6, 7, 9, 8)
	want(7, t0+9)
}

// TestWatermarksFromAFreshEnd: a read of a partition's watermarks only, within 50 ms of a read
// that told Iggy's high watermark, is answered from it without polling Iggy; later, or after
// an append through this gateway, Iggy is asked again.
func TestWatermarksFromAFreshEnd(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b, clk := newClockedBridge(t, m)
	if err := b.createTopic(ctx, m, "wm", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.produce(ctx, m, "wm", 0, kafkaBatch(t, codecNone, valueRecs("a", 10), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	polls := func() int { m.mu.Lock(); defer m.mu.Unlock(); return m.polls }
	watermarks := func(offset int64) (int64, int) {
		t.Helper()
		before := polls()
		res, err := b.fetch(ctx, m, "wm", 0, offset, 0, 12)
		if err != nil {
			t.Fatal(err)
		}
		res.Release()
		return res.HighWatermark, polls() - before
	}
	res, err := b.fetch(ctx, m, "wm", 0, 0, 4<<10, 12)
	if err != nil {
		t.Fatal(err)
	}
	res.Release()
	if hw, n := watermarks(3); hw != 10 || n != 0 {
		t.Fatalf("watermarks within 50 ms of a read: high watermark %d after %d polls, want 10 after none", hw, n)
	}
	clk.Advance(endFresh)
	if hw, n := watermarks(3); hw != 10 || n == 0 {
		t.Fatalf("watermarks 50 ms after the read: high watermark %d after %d polls, want 10 from a poll", hw, n)
	}
	if _, err := b.produce(ctx, m, "wm", 0, kafkaBatch(t, codecNone, valueRecs("b", 5), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	if hw, n := watermarks(3); hw != 15 || n == 0 {
		t.Fatalf("watermarks after an append: high watermark %d after %d polls, want 15 from a poll", hw, n)
	}
}
