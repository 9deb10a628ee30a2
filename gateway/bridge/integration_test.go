package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// startStore runs the embedded Iggy store on a loopback port for one test
// and returns a client logged in as root.
func startStore(t testing.TB) (*store.Server, func() *iggy.Client) {
	t.Helper()
	srv, err := store.New(store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Fsync: partlog.FsyncNever, PasswordIterations: teststore.PasswordIterations})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
	})
	dial := func() *iggy.Client {
		c, err := iggy.Dial(context.Background(), iggy.Config{Addrs: []string{srv.Addr().String()}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return srv, dial
}

func TestBridgeOverEmbeddedStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, dial := startStore(t)
	c1, c2 := dial(), dial()
	b1, err := New(ctx, c1, Config{AutoCreateTopics: true, DefaultPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Close()
	b2, err := New(ctx, c2, Config{AutoCreateTopics: true, DefaultPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()

	ti, err := b1.As(c1).Topic(ctx, "events", true)
	if err != nil || ti.Partitions != 2 {
		t.Fatalf("auto-create: %+v %v", ti, err)
	}
	if _, err := b1.As(c1).Topic(ctx, "nope", false); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("missing topic: %v", err)
	}

	// Every codec, every record shape, through the real client and store.
	var want []trec
	for _, codec := range []int{codecNone, codecGzip, codecSnappy, codecXerial, codecLZ4, codecZstd} {
		recs := mixedRecords()
		res, err := b1.As(c1).Produce(ctx, "events", 0, kafkaBatch(t, codec, recs, -1, -1, -1))
		if err != nil || res.BaseOffset != int64(len(want)) {
			t.Fatalf("codec %d: produce %+v %v", codec, res, err)
		}
		want = append(want, recs...)
	}
	big := []trec{{Key: []byte("big"), Value: bytes.Repeat([]byte("x"), 1<<20+1000), TS: 9}}
	b1.cfg.MaxMessageBytes = 2 << 20
	if _, err := b1.As(c1).Produce(ctx, "events", 0, kafkaBatch(t, codecZstd, big, -1, -1, -1)); err != nil {
		t.Fatalf("1 MiB record: %v", err)
	}
	want = append(want, big...)
	var got []fetched
	for off := int64(0); off < int64(len(want)); {
		r, err := b2.As(c2).Fetch(ctx, "events", 0, off, 1<<20, 12)
		if err != nil {
			t.Fatalf("fetch at %d: %v", off, err)
		}
		if r.HighWatermark != int64(len(want)) {
			t.Fatalf("high watermark %d, want %d", r.HighWatermark, len(want))
		}
		page := readBatches(t, r.Records)
		r.Release()
		if len(page) == 0 {
			t.Fatalf("empty fetch at %d", off)
		}
		got = append(got, page...)
		off = page[len(page)-1].Offset + 1
	}
	checkRecords(t, got, want, 0)

	ls, hw, err := b2.As(c2).Offsets(ctx, "events", 0)
	if err != nil || ls != 0 || hw != int64(len(want)) {
		t.Errorf("Offsets = %d %d %v", ls, hw, err)
	}
	if _, hw, _ := b2.As(c2).Offsets(ctx, "events", 1); hw != 0 {
		t.Errorf("empty partition high watermark %d", hw)
	}
	r, err := b2.As(c2).Fetch(ctx, "events", 1, 0, 1<<20, 12)
	if err != nil || len(r.Records) != 0 || r.HighWatermark != 0 {
		t.Errorf("fetch of empty partition: %d bytes hw %d err %v", len(r.Records), r.HighWatermark, err)
	}
	if _, err := b2.As(c2).Fetch(ctx, "events", 1, 1, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Errorf("fetch past the end of an empty partition: %v", err)
	}
	if _, err := b2.As(c2).Fetch(ctx, "events", 9, 0, 1<<20, 12); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("fetch of a missing partition: %v", err)
	}
	if _, err := b1.As(c1).Produce(ctx, "events", 9, kafkaBatch(t, codecNone, valueRecs("x", 1), -1, -1, -1)); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("produce to a missing partition: %v", err)
	}
	bad := kafkaBatch(t, codecNone, valueRecs("x", 1), -1, -1, -1)
	bad[len(bad)-1] ^= 1
	if _, err := b1.As(c1).Produce(ctx, "events", 1, bad); !errors.Is(err, kerr.CorruptMessage) {
		t.Errorf("corrupt CRC: %v", err)
	}
}

func TestIdempotenceAcrossGateways(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, dial := startStore(t)
	c1, c2 := dial(), dial()
	b1, err := New(ctx, c1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b1.As(c1).CreateTopic(ctx, "idem", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := b1.As(c1).InitProducerID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(seq int32) []byte {
		return kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("s", seq), 2), pid, epoch, seq)
	}
	for seq := int32(0); seq < 6; seq += 2 {
		if res, err := b1.As(c1).Produce(ctx, "idem", 0, batch(seq)); err != nil || res.BaseOffset != int64(seq) {
			t.Fatalf("produce seq %d: %+v %v", seq, res, err)
		}
	}
	// The first gateway is gone; the client resends its last batch to a
	// second gateway, which has never seen this producer.
	b1.Close()
	b2, err := New(ctx, c2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if res, err := b2.As(c2).Produce(ctx, "idem", 0, batch(4)); err != nil || res.BaseOffset != 4 {
		t.Fatalf("resend to second gateway: %+v %v", res, err)
	}
	if _, err := b2.As(c2).Produce(ctx, "idem", 0, batch(10)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("sequence gap: %v", err)
	}
	if res, err := b2.As(c2).Produce(ctx, "idem", 0, batch(6)); err != nil || res.BaseOffset != 6 {
		t.Fatalf("next batch: %+v %v", res, err)
	}
	if _, hw, _ := b2.As(c2).Offsets(ctx, "idem", 0); hw != 8 {
		t.Errorf("high watermark %d, want 8 (nothing stored twice)", hw)
	}
	pid2, _, err := b2.As(c2).InitProducerID(ctx)
	if err != nil || pid2 == pid {
		t.Errorf("producer ids %d and %d, err %v", pid, pid2, err)
	}
}

func TestNativeIggyClientInterop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, dial := startStore(t)
	c := dial()
	b, err := New(ctx, c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.As(c).CreateTopic(ctx, "mixed", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1_700_000_000_123)
	if _, err := c.SendMessages(ctx, wire.NamedID("kafka"), wire.NamedID("mixed"), 0, []iggy.Message{{Payload: []byte("from iggy"), Timestamp: ts}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.As(c).Produce(ctx, "mixed", 0, kafkaBatch(t, codecNone, []trec{{Key: []byte("k"), Value: []byte("from kafka"), TS: 5}}, -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	r, err := b.As(c).Fetch(ctx, "mixed", 0, 0, 1<<20, 12)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	checkRecords(t, readBatches(t, r.Records), []trec{
		{Value: []byte("from iggy"), TS: ts.UnixMilli()},
		{Key: []byte("k"), Value: []byte("from kafka"), TS: 5},
	}, 0)
	// A native reader sees the Kafka record's value as the payload.
	p, err := c.Poll(ctx, iggy.PollRequest{Stream: wire.NamedID("kafka"), Topic: wire.NamedID("mixed"), Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 1}, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	rec, _, ok := splitRecord(p.Batches)
	f, ok2 := firstFrame(rec)
	if !ok || !ok2 || string(f.Payload) != "from kafka" {
		t.Errorf("native poll payload %q", f.Payload)
	}
}

// Topic ids come from what Iggy keeps about the topic, so two gateways agree on them without a
// word, a restart changes nothing, and a topic deleted and re-created under the same name gets
// a new one.
func TestTopicIDsFromIggy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, dial := startStore(t)
	c1, c2 := dial(), dial()
	b1, err := New(ctx, c1, Config{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Close()
	b2, err := New(ctx, c2, Config{AutoCreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	s1, s2 := b1.As(c1), b2.As(c2)
	idOf := func(s kafka.Storage, name string) [16]byte {
		t.Helper()
		ti, err := s.Topic(ctx, name, false)
		if err != nil {
			t.Fatal(err)
		}
		listed, err := s.ListTopics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range listed {
			if l.Name == name && l.ID != ti.ID {
				t.Fatalf("%s: listed with id %x, described with %x", name, l.ID, ti.ID)
			}
		}
		return ti.ID
	}
	for _, name := range []string{"a", "b"} {
		if err := s1.CreateTopic(ctx, name, 1, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	a, b := idOf(s1, "a"), idOf(s1, "b")
	if a == ([16]byte{}) || b == ([16]byte{}) || a == b {
		t.Fatalf("topic ids %x and %x: want two distinct non-zero ids", a, b)
	}
	if got := idOf(s2, "a"); got != a {
		t.Fatalf("the other gateway says %x for a, this one %x", got, a)
	}
	if err := s2.DeleteTopic(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s2.CreateTopic(ctx, "a", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	again := idOf(s1, "a")
	if again == a || again == ([16]byte{}) || again != idOf(s2, "a") {
		t.Fatalf("re-created a: id %x (before %x, other gateway %x); want a new id both agree on", again, a, idOf(s2, "a"))
	}
	if idOf(s2, "b") != b {
		t.Fatal("b's id changed when a was re-created")
	}
}
