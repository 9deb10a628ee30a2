package bridge

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// newClockedBridge is a bridge over m on its own fake clock: one gateway of several sharing m.
func newClockedBridge(t *testing.T, m *memStore) (*Bridge, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	b, err := newBridge(context.Background(), m, Config{DefaultPartitions: 2, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, clk
}

// DeleteRecords moves the log start forward for Kafka readers, at the gateway that deleted at
// once and at another within logStartTTL: Fetch below it is OFFSET_OUT_OF_RANGE, Fetch and
// Produce answer it as LogStartOffset, ListOffsets earliest and Offsets answer it, and a bridge
// started later (a restart) reads it from the store.
func TestDeleteRecordsMovesTheLogStart(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1, _ := newClockedBridge(t, m)
	b2, clk2 := newClockedBridge(t, m)
	if err := b1.createTopic(ctx, m, "dr", 2, nil, false); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := b1.produce(ctx, m, "dr", 0, kafkaBatch(t, codecNone, valueRecs("r", 1), -1, -1, -1)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	// The other gateway fetched before the deletion: it trusts its log start for logStartTTL.
	if _, r := fetchAll(t, b2, m, "dr", 0, 5); r.LogStartOffset != 0 {
		t.Fatalf("log start %d before any deletion", r.LogStartOffset)
	}

	if low, err := b1.deleteRecords(ctx, m, "dr", 0, 4); err != nil || low != 4 {
		t.Fatalf("DeleteRecords to 4: %d %v", low, err)
	}
	if _, err := b1.fetch(ctx, m, "dr", 0, 3, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("fetch below the log start: %v", err)
	}
	got, r := fetchAll(t, b1, m, "dr", 0, 4)
	if len(got) == 0 || got[0].Offset != 4 || r.LogStartOffset != 4 || r.HighWatermark != 10 {
		t.Fatalf("fetch at the log start: %d batches from %v, log start %d, high watermark %d", len(got), got, r.LogStartOffset, r.HighWatermark)
	}
	for _, b := range []*Bridge{b1, b2} {
		if off, _, err := b.listOffset(ctx, m, "dr", 0, -2); err != nil || off != 4 {
			t.Fatalf("ListOffsets earliest: %d %v", off, err)
		}
		if ls, hw, err := b.offsets(ctx, m, "dr", 0); err != nil || ls != 4 || hw != 10 {
			t.Fatalf("Offsets: %d %d %v", ls, hw, err)
		}
	}
	if off, _, err := b1.listOffset(ctx, m, "dr", 1, -2); err != nil || off != 0 {
		t.Fatalf("the other partition's log start: %d %v", off, err)
	}

	// Moved further through the first gateway: the second sees it once its read is older than
	// logStartTTL.
	if low, err := b1.deleteRecords(ctx, m, "dr", 0, 6); err != nil || low != 6 {
		t.Fatalf("DeleteRecords to 6: %d %v", low, err)
	}
	reads := m.offsetReads
	if _, err := b2.fetch(ctx, m, "dr", 0, 7, 1<<20, 12); err != nil {
		t.Fatal(err)
	}
	if m.offsetReads != reads {
		t.Fatalf("a fetch within logStartTTL read the log start again")
	}
	clk2.Advance(logStartTTL)
	if _, err := b2.fetch(ctx, m, "dr", 0, 5, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("the other gateway fetched below the log start after logStartTTL: %v", err)
	}

	// -1 is the high watermark; past it is out of range; a lower offset changes nothing.
	if low, err := b2.deleteRecords(ctx, m, "dr", 0, -1); err != nil || low != 10 {
		t.Fatalf("DeleteRecords to -1: %d %v", low, err)
	}
	for _, off := range []int64{11, -2} {
		if _, err := b2.deleteRecords(ctx, m, "dr", 0, off); !errors.Is(err, kerr.OffsetOutOfRange) {
			t.Fatalf("DeleteRecords to %d: %v", off, err)
		}
	}
	if low, err := b2.deleteRecords(ctx, m, "dr", 0, 2); err != nil || low != 10 {
		t.Fatalf("DeleteRecords to 2 after 10: %d %v", low, err)
	}
	if _, err := b2.deleteRecords(ctx, m, "dr", 5, 0); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("DeleteRecords of a partition past the count: %v", err)
	}
	res, err := b2.produce(ctx, m, "dr", 0, kafkaBatch(t, codecNone, valueRecs("s", 1), -1, -1, -1))
	if err != nil || res.BaseOffset != 10 || res.LogStartOffset != 10 {
		t.Fatalf("produce after the deletion: %+v %v", res, err)
	}

	// A restarted gateway reads the log start from the store.
	b3, _ := newClockedBridge(t, m)
	if off, _, err := b3.listOffset(ctx, m, "dr", 0, -2); err != nil || off != 10 {
		t.Fatalf("after a restart, ListOffsets earliest: %d %v", off, err)
	}
	if got, r := fetchAll(t, b3, m, "dr", 0, 10); len(got) != 1 || got[0].Offset != 10 || r.LogStartOffset != 10 {
		t.Fatalf("after a restart, fetch at the log start: %v, log start %d", got, r.LogStartOffset)
	}

	// Deleting needs the permission to manage the topic.
	m.manageErr = wire.Unauthorized
	if _, err := b3.deleteRecords(ctx, m, "dr", 1, 1); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("DeleteRecords without the permission: %v", err)
	}
	m.manageErr = nil

	// A topic deleted and created again starts at 0.
	if err := b3.deleteTopic(ctx, m, "dr"); err != nil {
		t.Fatal(err)
	}
	if err := b3.createTopic(ctx, m, "dr", 2, nil, false); err != nil {
		t.Fatal(err)
	}
	if off, _, err := b3.listOffset(ctx, m, "dr", 0, -2); err != nil || off != 0 {
		t.Fatalf("the recreated topic's log start: %d %v", off, err)
	}
}

// Over the embedded store: a DeleteRecords up to the high watermark has Iggy delete every sealed
// segment, one below it deletes none, and an Iggy reader finds the log start as the stored offset
// of consumer kafka-log-start (log start - 1).
func TestDeleteRecordsDeletesSealedSegments(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, dial := startStore(t)
	c := dial()
	b, err := New(ctx, c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := c.CreateTopic(ctx, wire.NamedID(b.cfg.Stream), "seg", 1, iggy.TopicOptions{
		Extra: []wire.TLVEntry{wire.Uint64Entry(wire.OptSegmentSize, 1<<20)}}); err != nil {
		t.Fatal(err)
	}
	s := b.As(c)
	big := bytes.Repeat([]byte("x"), 600<<10)
	for i := range 6 {
		if _, err := s.Produce(ctx, "seg", 0, kafkaBatch(t, codecNone, []trec{{Value: big, TS: int64(i)}}, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	segments := func() uint32 {
		t.Helper()
		td, err := c.GetTopic(ctx, wire.NamedID(b.cfg.Stream), wire.NamedID("seg"))
		if err != nil {
			t.Fatal(err)
		}
		return td.Partitions[0].SegmentsCount
	}
	firstIggy := func() uint64 {
		t.Helper()
		p, err := wrap(c).poll(ctx, b.cfg.Stream, "seg", 0, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Release()
		rec, _, ok := splitRecord(p.Records)
		if !ok {
			return p.CurrentOffset + 1
		}
		return batchBase(rec)
	}
	before := segments()
	if before < 3 {
		t.Fatalf("%d segments for 6 records of 600 KiB in 1 MiB segments", before)
	}

	if low, err := s.DeleteRecords(ctx, "seg", 0, 2); err != nil || low != 2 {
		t.Fatalf("DeleteRecords to 2: %d %v", low, err)
	}
	if n, first := segments(), firstIggy(); n != before || first != 0 {
		t.Fatalf("below the high watermark: %d segments (was %d), Iggy's first offset %d", n, before, first)
	}
	off, ok, err := c.GetOffset(ctx, wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID(logStartConsumer)},
		wire.NamedID(b.cfg.Stream), wire.NamedID("seg"), 0)
	if err != nil || !ok || off.StoredOffset != 1 {
		t.Fatalf("consumer %s holds %+v (stored %v, %v), want 1", logStartConsumer, off, ok, err)
	}

	if low, err := s.DeleteRecords(ctx, "seg", 0, -1); err != nil || low != 6 {
		t.Fatalf("DeleteRecords to the end: %d %v", low, err)
	}
	if n := segments(); n != 1 {
		t.Fatalf("%d segments after deleting up to the high watermark, want the active one", n)
	}
	if first := firstIggy(); first < 2 {
		t.Fatalf("Iggy's first offset %d after the sealed segments went", first)
	}
	if start, hw, err := s.Offsets(ctx, "seg", 0); err != nil || start != 6 || hw != 6 {
		t.Fatalf("Offsets after deleting everything: %d %d %v", start, hw, err)
	}
}
