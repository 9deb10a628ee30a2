package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func producersBridge(t *testing.T) (*Bridge, *memStore, *clock.Fake) {
	t.Helper()
	m := newMemStore()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(context.Background(), m, Config{Clock: fc, ProducerIDExpiration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.createTopic(context.Background(), m, "t", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	return b, m, fc
}

// A client inventing producer ids on a partition longer than the scan bound costs one tail scan
// per trustWindow, not one per id.
func TestProducerScansRateLimited(t *testing.T) {
	b, m, fc := producersBridge(t)
	ctx := context.Background()
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("bulk", scanMaxMessages+100), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}
	scans, skipped := b.metrics.ProducerScans(), b.metrics.ProducerScansSkipped()
	for pid := int64(100); pid < 150; pid++ {
		if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("x", 1), pid, 0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.metrics.ProducerScans() - scans; n != 1 {
		t.Fatalf("%d tail scans for 50 new producers within the trust window, want 1", n)
	}
	if n := b.metrics.ProducerScansSkipped() - skipped; n != 49 {
		t.Fatalf("%d scans skipped, want 49", n)
	}
	fc.Advance(trustWindow)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("x", 1), 200, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if n := b.metrics.ProducerScans() - scans; n != 2 {
		t.Fatalf("%d tail scans once the trust window passed, want 2", n)
	}
}

// A producer's state expires ProducerIDExpiration after its last batch (it then starts afresh,
// as with Kafka), and a partition holds at most maxProducersPerPartition states however many
// ids a client invents.
func TestProducerStatesBounded(t *testing.T) {
	b, m, fc := producersBridge(t)
	ctx := context.Background()
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("a", 1), 7, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("a", 1), 7, 0, 5)); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("a gap before the expiry: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
	dropped := b.metrics.ProducerStatesDropped()
	fc.Advance(time.Hour)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("a", 1), 7, 0, 5)); err != nil {
		t.Fatalf("the same batch once the state expired: %v", err)
	}
	if b.metrics.ProducerStatesDropped() != dropped+1 {
		t.Fatalf("dropped states went from %d to %d, want one more", dropped, b.metrics.ProducerStatesDropped())
	}

	for pid := int64(1000); pid < 1000+maxProducersPerPartition+500; pid++ {
		if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("h", 1), pid, 0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	st := b.part("t", 0)
	st.mu.Lock()
	n := len(st.producers)
	st.mu.Unlock()
	if n > maxProducersPerPartition {
		t.Fatalf("%d producer states on one partition, bound %d", n, maxProducersPerPartition)
	}
}

// A hostile client fetching and producing to topics and partitions that do not exist, and long
// polling on them, leaves no partition state behind: the bridge keeps state only for partitions
// Iggy holds, and answers the others UNKNOWN_TOPIC_OR_PARTITION.
func TestPartitionStatesBounded(t *testing.T) {
	b, m, _ := producersBridge(t)
	ctx := context.Background()
	if _, err := b.fetch(ctx, m, "t", 0, 0, 1<<20, 12); err != nil {
		t.Fatal(err)
	}
	before, states := len(b.parts), b.metrics.PartitionStates()
	for i := range 2000 {
		topic, partition := fmt.Sprintf("nope-%d", i), int32(0)
		if i%2 == 1 {
			topic, partition = "t", int32(i) // t has one partition
		}
		if _, err := b.fetch(ctx, m, topic, partition, 0, 1<<20, 12); !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("fetch of %s/%d: %v, want UNKNOWN_TOPIC_OR_PARTITION", topic, partition, err)
		}
		if _, err := b.produce(ctx, m, topic, partition, kafkaBatch(t, codecNone, valueRecs("x", 1), -1, -1, -1)); !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Fatalf("produce to %s/%d: %v, want UNKNOWN_TOPIC_OR_PARTITION", topic, partition, err)
		}
		wctx, cancel := context.WithCancel(ctx)
		cancel()
		b.Wait(wctx, topic, partition, 0)
	}
	if len(b.parts) != before || b.metrics.PartitionStates() != states {
		t.Fatalf("%d partition states after 2,000 invented partitions (gauge %d), were %d (gauge %d)", len(b.parts), b.metrics.PartitionStates(), before, states)
	}
}

// A producer's batch stored by another gateway that then died before answering is sent again
// here, next in the sequence this gateway's cache expects and within trustWindow of this
// gateway's own last append: the fleet's view changed in between (the partition's leader moved
// away and back), so the cache is checked against Iggy first and the resend is answered with the
// other gateway's offset, not stored twice. Without a change the window is trusted as before.
func TestIdempotentResendAfterLeadersMoved(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var moves atomic.Uint64
	here, err := newBridge(ctx, m, Config{Clock: fc, LeadersMoved: moves.Load})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { here.Close() })
	other, err := newBridge(ctx, m, Config{Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	if err := here.createTopic(ctx, m, "t", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := here.initProducerID(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(seq int32) []byte {
		return kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("s", seq), 1), pid, epoch, seq)
	}
	produce := func(b *Bridge, seq int32, want int64) {
		t.Helper()
		res, err := b.produce(ctx, m, "t", 0, batch(seq))
		if err != nil || res.BaseOffset != want {
			t.Fatalf("batch %d: base %d err %v, want base %d", seq, res.BaseOffset, err, want)
		}
	}
	produce(here, 0, 0)
	moves.Add(1) // the leader moves to the other gateway
	produce(other, 1, 1)
	// The other gateway is gone; the producer sends batch 1 again here, the clock not moved.
	produce(here, 1, 1)
	produce(here, 2, 2)
	// No change of the view: within the window the cache is trusted (no metadata read).
	topics := m.topicReads()
	produce(here, 3, 3)
	if n := m.topicReads() - topics; n != 0 {
		t.Fatalf("%d metadata reads within the trust window and no change of the view, want 0", n)
	}
	if got, _ := fetchAll(t, here, m, "t", 0, 0); len(got) != 4 {
		t.Fatalf("%d records stored, want 4", len(got))
	}
}

// A produce that waited for its partition behind a write stalled by a cut is not written once
// the write gives way if the gateway lost its lease on the store meanwhile (Config.Fenced): it
// is refused NOT_LEADER_OR_FOLLOWER, nothing stored, since its client may have sent it through
// another gateway by then.
func TestFencedProduceNotWrittenLate(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	var fenced atomic.Bool
	b, err := newBridge(ctx, m, Config{Fenced: fenced.Load})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.createTopic(ctx, m, "t", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	m.mu.Lock()
	m.sendHold = func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	m.mu.Unlock()
	first := make(chan error, 1)
	go func() {
		_, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("stalled", 1), 7, 0, 0))
		first <- err
	}()
	<-entered // the first write holds the partition, stalled
	second := make(chan error, 1)
	go func() {
		_, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("waiting", 1), 8, 0, 0))
		second <- err
	}()
	fenced.Store(true) // the lease is lost while both wait
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the write already on its way: %v", err)
	}
	if err := <-second; !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("the produce that waited for the partition: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if got, _ := fetchAll(t, b, m, "t", 0, 0); len(got) != 1 {
		t.Fatalf("%d records stored, want the first alone", len(got))
	}
	fenced.Store(false)
	if _, err := b.produce(ctx, m, "t", 0, kafkaBatch(t, codecNone, valueRecs("waiting", 1), 8, 0, 0)); err != nil {
		t.Fatalf("the resend once the lease is back: %v", err)
	}
}

// A pipelining producer's batch that the cache refuses (a batch before it was refused, so it
// comes out of order) makes the gateway ask Iggy whether someone else appended, and decide
// again from the partition's tail; when Iggy does not answer then (a slow link), the producer's
// next batch is still decided from what Iggy holds, not taken for a new producer's at any
// sequence: it is OUT_OF_ORDER_SEQUENCE_NUMBER, nothing stored, and the refused batches sent
// again are stored once each, in order. Taking it stored it ahead of the batches before it,
// which the producer, told OUT_OF_ORDER_SEQUENCE_NUMBER for those, then sent again under a new
// epoch (stored twice: scenario d of docs/reliability.md).
func TestRefusedBatchRescanFailureKeepsSequence(t *testing.T) {
	b, m, _ := producersBridge(t)
	ctx := context.Background()
	const pid = 7
	batch := func(seq int32) []byte {
		return kafkaBatch(t, codecNone, valueRecs(fmt.Sprint("s", seq), 1), pid, 0, seq)
	}
	produce := func(seq int32) (int64, error) {
		res, err := b.produce(ctx, m, "t", 0, batch(seq))
		return res.BaseOffset, err
	}
	for seq := range int32(2) {
		if base, err := produce(seq); err != nil || base != int64(seq) {
			t.Fatalf("batch %d: base %d err %v", seq, base, err)
		}
	}
	// Batch 2 was refused on the way (a retriable error); batch 3, sent behind it, arrives
	// while Iggy does not answer metadata reads.
	m.mu.Lock()
	m.topicErr = fmt.Errorf("%w: no answer", iggy.ErrConnectionLost)
	m.mu.Unlock()
	if _, err := produce(3); err == nil {
		t.Fatal("batch 3 ahead of batch 2 was stored")
	}
	m.mu.Lock()
	m.topicErr = nil
	m.mu.Unlock()
	if base, err := produce(4); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("batch 4 ahead of batch 2 once Iggy answers again: base %d err %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", base, err)
	}
	for seq := int32(2); seq < 5; seq++ {
		if base, err := produce(seq); err != nil || base != int64(seq) {
			t.Fatalf("batch %d sent again in order: base %d err %v, want base %d", seq, base, err, seq)
		}
	}
	got, _ := fetchAll(t, b, m, "t", 0, 0)
	if len(got) != 5 {
		t.Fatalf("%d records stored, want 5", len(got))
	}
	for i, r := range got {
		if want := fmt.Sprintf("s%d-0", i); string(r.Value) != want {
			t.Fatalf("offset %d holds %s, want %s", i, r.Value, want)
		}
	}
}
