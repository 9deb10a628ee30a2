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
// KAFKA_STORAGE_ERROR; once it is back the topic is online again.
func TestOutageKeepsPartitions(t *testing.T) {
	ctx := context.Background()
	o := &outageStore{memStore: newMemStore()}
	b, err := newBridge(ctx, o, Config{AutoCreateTopics: true, DefaultPartitions: 2})
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
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || ti.Partitions != 3 || ti.Offline {
		t.Fatalf("after the outage: %+v %v", ti, err)
	}
	if _, err := b.produce(ctx, as, "t", 0, kafkaBatch(t, codecNone, valueRecs("o", 1), -1, -1, -1)); err != nil {
		t.Fatalf("produce after the outage: %v", err)
	}
}

// Once a call found the store unreachable, later calls wait at most offlineProbe on the bridge's
// clock, not the Iggy client's whole dial timeout; the first answer from the store lifts it.
func TestOutageProbeBound(t *testing.T) {
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

	o.hang.Store(true)
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
		t.Fatal("the lookup set no probe timer")
	}
	select {
	case err := <-done:
		t.Fatalf("the lookup returned before its probe ran out: %v", err)
	default:
	}
	fc.Advance(offlineProbe - time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the lookup returned before its probe ran out: %v", err)
	default:
	}
	fc.Advance(time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the lookup outlived its probe")
	}

	o.down.Store(false)
	if ti, err := b.topicInfo(ctx, as, "t", false); err != nil || ti.Offline {
		t.Fatalf("after the outage: %+v %v", ti, err)
	}
	if b.known.down.Load() {
		t.Fatal("the store answered, yet the bridge still takes it for unreachable")
	}
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
