package bridge

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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

// A gateway whose config cache is fresh still honours a max.message.bytes another gateway set
// a moment ago: a record over the cached limit is decided again from the log before refusal.
func TestRaisedMaxMessageBytesSeenBeforeRefusal(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1, b2 := newMemBridge(t, m), newMemBridge(t, m)
	if _, err := b2.topicConf(ctx, "large"); err != nil { // b2's cache: loaded now, no limit
		t.Fatal(err)
	}
	limit := "10485760"
	if err := b1.createTopic(ctx, m, "large", 1, map[string]*string{"max.message.bytes": &limit}, false); err != nil {
		t.Fatal(err)
	}
	big := kafkaBatch(t, codecZstd, []trec{{Value: make([]byte, 5<<20), TS: 1}}, -1, -1, -1)
	if _, err := b2.produce(ctx, m, "large", 0, big); err != nil {
		t.Fatalf("5 MiB record right after another gateway allowed 10 MiB: %v", err)
	}
	huge := kafkaBatch(t, codecZstd, []trec{{Value: make([]byte, 11<<20), TS: 1}}, -1, -1, -1)
	if _, err := b2.produce(ctx, m, "large", 0, huge); !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("11 MiB record over the 10 MiB limit: %v", err)
	}
}
