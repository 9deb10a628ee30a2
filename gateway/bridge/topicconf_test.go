package bridge

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// stallingStore holds one read of the topic config log until released.
type stallingStore struct {
	*memStore
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *stallingStore) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	if topic == topicConfigsTopic && s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return s.memStore.poll(ctx, stream, topic, partition, offset, count)
}

// A refresh of the topic configs is an Iggy round trip; produces to other
// partitions must not queue behind it once the cache has been loaded.
func TestConfRefreshDoesNotStallProduce(t *testing.T) {
	ctx := context.Background()
	s := &stallingStore{memStore: newMemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	b, err := newBridge(ctx, s, Config{AutoCreateTopics: true, DefaultPartitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.topicInfo(ctx, s, "conf", true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.produce(ctx, s, "conf", 0, kafkaBatch(t, codecNone, valueRecs("a", 1), -1, -1, -1)); err != nil {
		t.Fatal(err)
	}

	b.conf.mu.Lock()
	b.conf.loaded = time.Now().Add(-2 * confRefresh)
	b.conf.mu.Unlock()
	s.armed.Store(true)
	refreshed := make(chan error, 1)
	go func() {
		_, err := b.produce(ctx, s, "conf", 0, kafkaBatch(t, codecNone, valueRecs("b", 1), -1, -1, -1))
		refreshed <- err
	}()
	<-s.entered

	other := make(chan error, 1)
	go func() {
		_, err := b.produce(ctx, s, "conf", 1, kafkaBatch(t, codecNone, valueRecs("c", 1), -1, -1, -1))
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Errorf("produce during a config refresh: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a produce to another partition waited for the config refresh")
	}
	close(s.release)
	if err := <-refreshed; err != nil {
		t.Errorf("produce that refreshed the configs: %v", err)
	}
	b.conf.mu.Lock()
	stale := time.Since(b.conf.loaded) >= confRefresh
	b.conf.mu.Unlock()
	if stale {
		t.Error("the refresh did not mark the cache loaded")
	}
}
