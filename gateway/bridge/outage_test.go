package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// outageStore is a memStore that can be taken away: while down, every call fails at once with
// iggy.ErrUnavailable, or, with hang set, waits for its context as a call to a store that
// accepts nothing does.
type outageStore struct {
	*memStore
	down, hang atomic.Bool
}

func (o *outageStore) gone(ctx context.Context) error {
	if !o.down.Load() {
		return nil
	}
	if o.hang.Load() {
		<-ctx.Done()
	}
	return fmt.Errorf("%w: dial refused", iggy.ErrUnavailable)
}

func (o *outageStore) topic(ctx context.Context, stream, name string) (topicMeta, error) {
	if err := o.gone(ctx); err != nil {
		return topicMeta{}, err
	}
	return o.memStore.topic(ctx, stream, name)
}

func (o *outageStore) topics(ctx context.Context, stream string) ([]topicMeta, error) {
	if err := o.gone(ctx); err != nil {
		return nil, err
	}
	return o.memStore.topics(ctx, stream)
}

func (o *outageStore) send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error) {
	if err := o.gone(ctx); err != nil {
		return 0, err
	}
	return o.memStore.send(ctx, stream, topic, partition, batch)
}

func (o *outageStore) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	if err := o.gone(ctx); err != nil {
		return polled{}, err
	}
	return o.memStore.poll(ctx, stream, topic, partition, offset, count)
}

// While the store is unreachable a topic keeps its partitions (Offline), produce and fetch
// answer NOT_LEADER_OR_FOLLOWER, a topic never seen is LEADER_NOT_AVAILABLE, and no answer is
// KAFKA_STORAGE_ERROR; once it is back the topic is online again at the next probe.
func TestOutageKeepsPartitions(t *testing.T) {
	ctx := context.Background()
	o := &outageStore{memStore: newMemStore()}
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(ctx, o, Config{AutoCreateTopics: true, DefaultPartitions: 2, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// other is a second gateway, started before the topic was created: its clients take
	// metadata from b, and it only serves a produce.
	other, err := newBridge(ctx, o, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	as := b.guard(o)
	if err := b.createTopic(ctx, as, "t", 3, nil, false); err != nil {
		t.Fatal(err)
	}
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || ti.Partitions != 3 || ti.Offline {
		t.Fatalf("before the outage: %+v %v", ti, err)
	}
	otherAs := boundStorage{b: other, as: other.guard(o)}
	if _, err := otherAs.Produce(ctx, "t", 1, kafkaBatch(t, codecNone, valueRecs("p", 1), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}

	o.down.Store(true)
	ti, err := b.topicInfo(ctx, as, "t", true)
	if err != nil || ti.Partitions != 3 || !ti.Offline {
		t.Fatalf("during the outage: %+v %v, want 3 partitions offline", ti, err)
	}
	if ti, err := otherAs.Topic(ctx, "t", false); err != nil || ti.Partitions != 3 || !ti.Offline {
		t.Fatalf("during the outage, at the gateway that only served a produce: %+v %v, want 3 partitions offline", ti, err)
	}
	all, err := b.listTopics(ctx, as)
	if err != nil || len(all) != 1 || all[0].Name != "t" || all[0].Partitions != 3 || !all[0].Offline {
		t.Fatalf("listing during the outage: %+v %v", all, err)
	}
	if _, err := b.topicInfo(ctx, as, "never-seen", true); !errors.Is(err, kerr.LeaderNotAvailable) {
		t.Fatalf("unknown topic during the outage: %v, want LEADER_NOT_AVAILABLE", err)
	}
	if _, err := b.produce(ctx, as, "t", 0, kafkaBatch(t, codecNone, valueRecs("o", 1), -1, -1, -1)); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("produce during the outage: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if _, err := b.fetch(ctx, as, "t", 0, 0, 1<<20, 12); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("fetch during the outage: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	if err := b.createTopic(ctx, as, "u", 1, nil, false); !errors.Is(err, kerr.RequestTimedOut) {
		t.Fatalf("create during the outage: %v, want REQUEST_TIMED_OUT", err)
	}

	o.down.Store(false)
	// Lookups go to the store again once per offlineProbe.
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || ti.Partitions != 3 || !ti.Offline {
		t.Fatalf("back within offlineProbe of the last probe: %+v %v, want the memory's answer", ti, err)
	}
	fc.Advance(offlineProbe)
	online(t, b, as, 3)
	if _, err := b.produce(ctx, as, "t", 0, kafkaBatch(t, codecNone, valueRecs("o", 1), -1, -1, -1)); err != nil {
		t.Fatalf("produce after the outage: %v", err)
	}
}

// online waits until a lookup of t answers from the store (Offline unset): the lookups after an
// outage fail at once while a background read of the topic list runs, and its answer ends it.
func online(t *testing.T, b *Bridge, as iggyAPI, partitions int32) {
	t.Helper()
	checkfor.Eventually(t, 10*time.Second, "the topic online again", func() error {
		ti, err := b.topicInfo(context.Background(), as, "t", false)
		if err != nil {
			return err
		}
		return checkfor.True(!ti.Offline && ti.Partitions == partitions, "%+v", ti)
	})
	if b.known.down.Load() || b.known.unanswered.Load() {
		t.Fatal("the store answered, yet the bridge still takes it for unreachable")
	}
}

// Once a call found the store unreachable, lookups answer from memory at once, and the bridge
// reads the topic list in the background, once per offlineProbe on its clock, each read bounded
// by it (not by the Iggy client's whole dial timeout); the first answer from the store ends the
// outage.
func TestOutageProbesInBackground(t *testing.T) {
	ctx := context.Background()
	o := &outageStore{memStore: newMemStore()}
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(ctx, o, Config{Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	as := b.guard(o)
	if err := b.createTopic(ctx, as, "t", 2, nil, false); err != nil {
		t.Fatal(err)
	}
	o.down.Store(true)
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || !ti.Offline {
		t.Fatalf("first lookup of the outage: %+v %v", ti, err)
	}

	// offlineProbe later a lookup has the list read in the background, which hangs: the lookup
	// is answered from memory at once.
	fc.Advance(offlineProbe)
	o.hang.Store(true)
	armed := fc.Added()
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || !ti.Offline || ti.Partitions != 2 {
		t.Fatalf("a lookup during the outage: %+v %v, want 2 partitions from memory", ti, err)
	}
	select {
	case <-armed:
	case <-time.After(5 * time.Second):
		t.Fatal("no background read with its bound started")
	}
	for range 3 {
		if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || !ti.Offline {
			t.Fatalf("a lookup while the background read runs: %+v %v", ti, err)
		}
	}
	if n := fc.Timers(); n != 1 {
		t.Fatalf("%d timers, want the one background read's bound", n)
	}
	fc.Advance(offlineProbe)
	checkfor.Eventually(t, 5*time.Second, "the background read given up at its bound", func() error {
		return checkfor.True(fc.Timers() == 0, "%d timers", fc.Timers())
	})
	if !b.known.down.Load() {
		t.Fatal("a read that got no answer ended the outage")
	}

	o.hang.Store(false)
	o.down.Store(false)
	fc.Advance(offlineProbe)
	online(t, b, as, 2)
	if n := fc.Timers(); n != 0 {
		t.Fatalf("%d probe timers left pending", n)
	}
}

// The first lookup of an outage (a store that accepts nothing, found unreachable by no call yet)
// waits offlineProbe on the bridge's clock, not the Iggy client's dial timeout, and is answered
// from memory; that alone does not take the store for gone, but the next lookups are answered
// from memory at once, produces get a retriable error at once, until a background read finds the
// store back.
func TestOutageFirstLookupBound(t *testing.T) {
	ctx := context.Background()
	o := &outageStore{memStore: newMemStore()}
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(ctx, o, Config{Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	as := b.guard(o)
	if err := b.createTopic(ctx, as, "t", 2, nil, false); err != nil {
		t.Fatal(err)
	}
	o.hang.Store(true)
	o.down.Store(true)
	armed := fc.Added()
	done := make(chan error, 1)
	go func() {
		ti, err := b.topicInfo(ctx, as, "t", false)
		if err == nil && (!ti.Offline || ti.Partitions != 2) {
			err = fmt.Errorf("answered %+v", ti)
		}
		done <- err
	}()
	select {
	case <-armed:
	case <-time.After(5 * time.Second):
		t.Fatal("the first lookup of the outage set no probe timer")
	}
	fc.Advance(offlineProbe)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first lookup of the outage outlived offlineProbe")
	}
	if b.known.down.Load() {
		t.Fatal("a lookup that ran out of time took the store for gone")
	}
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || !ti.Offline {
		t.Fatalf("a lookup after one that got no answer: %+v %v, want the memory's answer at once", ti, err)
	}
	o.hang.Store(false) // the produce's own call to the store fails at once
	if _, err := b.produce(ctx, as, "t", 0, kafkaBatch(t, codecNone, valueRecs("o", 1), -1, -1, -1)); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("produce during the outage: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}

	o.down.Store(false)
	fc.Advance(offlineProbe)
	online(t, b, as, 2)
	if n := fc.Timers(); n != 0 {
		t.Fatalf("%d probe timers left pending", n)
	}
}

// countingStore counts topic lookups.
type countingStore struct {
	*memStore
	lookups atomic.Int32
}

func (c *countingStore) topic(ctx context.Context, stream, name string) (topicMeta, error) {
	c.lookups.Add(1)
	return c.memStore.topic(ctx, stream, name)
}

// The producer cache is trusted for trustWindow after this gateway's own append, on the bridge's
// clock: within it an idempotent batch costs no metadata read, past it one.
func TestTrustWindowOnClock(t *testing.T) {
	ctx := context.Background()
	cs := &countingStore{memStore: newMemStore()}
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	b, err := newBridge(ctx, cs, Config{Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.createTopic(ctx, cs, "t", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	seq := int32(0)
	produce := func() int32 {
		t.Helper()
		before := cs.lookups.Load()
		if _, err := b.produce(ctx, cs, "t", 0, kafkaBatch(t, codecNone, valueRecs("w", 1), 7, 0, seq)); err != nil {
			t.Fatal(err)
		}
		seq++
		return cs.lookups.Load() - before
	}
	produce()
	if n := produce(); n != 0 {
		t.Fatalf("%d metadata reads within the trust window", n)
	}
	fc.Advance(trustWindow)
	if n := produce(); n != 1 {
		t.Fatalf("%d metadata reads once the trust window passed on the clock, want 1", n)
	}
}

// laggingStatsStore reports every partition's counters as an Iggy cluster node that has not yet
// seen its messages does: empty. Polls answer as the partition's owner does.
type laggingStatsStore struct{ *memStore }

func (l laggingStatsStore) topic(ctx context.Context, stream, name string) (topicMeta, error) {
	t, err := l.memStore.topic(ctx, stream, name)
	ps := make([]partMeta, len(t.Partitions))
	for i, p := range t.Partitions {
		p.Messages, p.CurrentOffset = 0, 0
		ps[i] = p
	}
	t.Partitions = ps
	return t, err
}

// A consumer at the end of a partition that holds offset 0 alone fetches offset 1: the answer
// is the end, from polls, whatever a topic's counters say. Answered OFFSET_OUT_OF_RANGE from
// counters a cluster node had not yet updated, a consumer reset to the start and read offset 0
// twice.
func TestFetchEndIgnoresLaggingCounters(t *testing.T) {
	ctx := context.Background()
	ls := laggingStatsStore{newMemStore()}
	b := bridgeWithTopic(t, ls, 2)
	if _, err := b.produce(ctx, ls, "t", 0, kafkaBatch(t, codecNone, valueRecs("v", 1), -1, 0, 0)); err != nil {
		t.Fatal(err)
	}
	res, err := b.fetch(ctx, ls, "t", 0, 1, 1<<20, 12)
	if err != nil {
		t.Fatalf("fetch at the end of a partition holding offset 0: %v", err)
	}
	res.Release()
	if res.HighWatermark != 1 {
		t.Fatalf("high watermark %d, want 1", res.HighWatermark)
	}
	// An empty partition still refuses an offset past its end.
	if _, err := b.fetch(ctx, ls, "t", 1, 1, 1<<20, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("fetch at offset 1 of an empty partition: %v, want OFFSET_OUT_OF_RANGE", err)
	}
}

// ListOffsets' end offset is the exact one, whatever a topic's counters say.
func TestListOffsetsEndIgnoresLaggingCounters(t *testing.T) {
	ctx := context.Background()
	ls := laggingStatsStore{newMemStore()}
	b := bridgeWithTopic(t, ls, 2)
	for i := range 3 {
		if _, err := b.produce(ctx, ls, "t", 0, kafkaBatch(t, codecNone, valueRecs("v", 1+i), -1, 0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	for p, want := range []int64{6, 0} {
		if hw, _, err := b.listOffset(ctx, ls, "t", int32(p), -1); err != nil || hw != want {
			t.Fatalf("partition %d: end %d (%v), want %d", p, hw, err, want)
		}
	}
}

// lostReplyStore stores a batch and then fails its send once, as a write to an Iggy leader that
// died after replicating it does.
type lostReplyStore struct {
	laggingStatsStore
	lose atomic.Bool
}

func (l *lostReplyStore) send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error) {
	off, err := l.memStore.send(ctx, stream, topic, partition, batch)
	if err == nil && l.lose.CompareAndSwap(true, false) {
		return 0, errors.New("connection lost after the write")
	}
	return off, err
}

// An idempotent batch whose write landed but whose reply was lost is found by the resend's scan
// of the partition's tail, whose end comes from polls: with a topic's lagging counters as its
// end, the scan saw nothing and the resend was stored twice.
func TestResendAfterLostReplyFoundDespiteLaggingCounters(t *testing.T) {
	ctx := context.Background()
	ls := &lostReplyStore{laggingStatsStore: laggingStatsStore{newMemStore()}}
	b := bridgeWithTopic(t, ls, 1)
	if _, err := b.produce(ctx, ls, "t", 0, kafkaBatch(t, codecNone, valueRecs("a", 2), 9, 0, 0)); err != nil {
		t.Fatal(err)
	}
	second := kafkaBatch(t, codecNone, valueRecs("b", 3), 9, 0, 2)
	ls.lose.Store(true)
	if _, err := b.produce(ctx, ls, "t", 0, second); err == nil {
		t.Fatal("a send whose reply was lost reported success")
	}
	res, err := b.produce(ctx, ls, "t", 0, second)
	if err != nil || res.BaseOffset != 2 {
		t.Fatalf("the resend: base %d (%v), want 2, the first write's", res.BaseOffset, err)
	}
	if hw, _, err := b.listOffset(ctx, ls, "t", 0, -1); err != nil || hw != 5 {
		t.Fatalf("end %d (%v), want 5: the resend stored again", hw, err)
	}
}

// bridgeWithTopic is a bridge over as, closed when the test ends, with topic "t" of partitions
// partitions created.
func bridgeWithTopic(t *testing.T, as iggyAPI, partitions int32) *Bridge {
	t.Helper()
	ctx := context.Background()
	b, err := newBridge(ctx, as, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.createTopic(ctx, as, "t", partitions, nil, false); err != nil {
		t.Fatal(err)
	}
	return b
}
