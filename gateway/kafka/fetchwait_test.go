package kafka

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// A long poll naming 40 empty partitions, each twice, watches maxFetchWaiters of them, once each,
// and answers when MaxWaitMillis has passed on the server's clock, not before.
func TestFetchLongPollBounded(t *testing.T) {
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	obs := &countingObserver{}
	ts := startServer(t, func(c *Config) { c.Clock = fc; c.Observer = obs })
	cl := ts.client(t)
	const parts = 40
	createTopic(t, cl, "lp", parts)
	var parked atomic.Int32
	ts.storage.onParked(func(string, int32) { parked.Add(1) })

	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, 10_000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "lp"
	for range 2 {
		for p := range int32(parts) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	req.Topics = append(req.Topics, rt)
	armed := fc.Added()
	answered := make(chan error, 1)
	go func() {
		resp, err := req.RequestWith(testCtx(t), cl)
		if err == nil && len(resp.Topics) != 1 {
			err = fmt.Errorf("%d topics answered", len(resp.Topics))
		}
		answered <- err
	}()
	select {
	case <-armed:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll set no timer")
	}
	checkfor.Eventually(t, 10*time.Second, "the long poll parked", func() error {
		return checkfor.True(parked.Load() >= maxFetchWaiters, "%d waits parked", parked.Load())
	})
	fc.Advance(9 * time.Second)
	select {
	case err := <-answered:
		t.Fatalf("answered before MaxWaitMillis passed: %v", err)
	default:
	}
	fc.Advance(time.Second)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer once MaxWaitMillis passed on the server's clock")
	}
	if n := parked.Load(); n != maxFetchWaiters {
		t.Fatalf("%d partition waits for one long poll of %d partitions named twice, want %d", n, parts, maxFetchWaiters)
	}
	obs.mu.Lock()
	capped := obs.waitsCapped
	obs.mu.Unlock()
	if capped != 1 {
		t.Fatalf("%d long polls reported capped, want 1", capped)
	}
}
