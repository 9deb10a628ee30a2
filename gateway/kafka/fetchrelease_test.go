package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// releaseCounter is a storage whose every fetch result has a Release that counts its calls, so
// that a test sees whether the Fetch handler released each result exactly once; stableErr, when
// set, is what Stable answers.
type releaseCounter struct {
	*memStorage
	mu        sync.Mutex
	releases  []int // per result handed out
	stableErr error
}

func (r *releaseCounter) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (FetchResult, error) {
	res, err := r.memStorage.Fetch(ctx, topic, partition, offset, maxBytes, version)
	if err != nil {
		return res, err
	}
	r.mu.Lock()
	id := len(r.releases)
	r.releases = append(r.releases, 0)
	r.mu.Unlock()
	res.Release = func() {
		r.mu.Lock()
		r.releases[id]++
		r.mu.Unlock()
	}
	return res, nil
}

func (r *releaseCounter) Stable(ctx context.Context, topic string, partition int32, offset, hw int64) (int64, []AbortedTxn, error) {
	r.mu.Lock()
	err := r.stableErr
	r.mu.Unlock()
	if err != nil {
		return 0, nil, err
	}
	return r.memStorage.Stable(ctx, topic, partition, offset, hw)
}

// balanced waits until every result handed out since from was released (the handler releases
// them once the answer is written, which may be after the client read it), and fails t if one
// was released more than once.
func (r *releaseCounter) balanced(t *testing.T, from int, what string) int {
	t.Helper()
	var n int
	checkfor.Eventually(t, 10*time.Second, what+": every fetch result released", func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		n = len(r.releases)
		if n == from {
			return errors.New("no fetch result handed out")
		}
		for i, c := range r.releases[from:] {
			if c > 1 {
				t.Fatalf("%s: result %d released %d times", what, from+i, c)
			}
			if c == 0 {
				return fmt.Errorf("result %d not released", from+i)
			}
		}
		return nil
	})
	return n
}

// TestFetchReleasesEachResultOnce: the Fetch handler releases every result the storage hands it
// exactly once, whether it answers with it, drops it because it does not fit, merges it with
// what a long poll held, cuts it at the last stable offset, or fails the read.
func TestFetchReleasesEachResultOnce(t *testing.T) {
	var rc *releaseCounter
	ts := startServer(t, func(c *Config) {
		rc = &releaseCounter{memStorage: c.Storage.(*memStorage)}
		c.Storage = rc
	})
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	createTopic(t, cl, "rel", 2)
	for p := range int32(2) {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "rel", Partition: p, Value: bytes.Repeat([]byte("v"), 1000)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	conn := dialRaw(t, ts.addr)
	both := func() *kmsg.FetchRequest {
		req := longPoll("rel", 0)
		fp := req.Topics[0].Partitions[0]
		fp.Partition = 1
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, fp)
		return req
	}
	seen := 0

	// Both partitions answered.
	if resp := conn.roundTrip(t, both()).(*kmsg.FetchResponse); fetchedRecords(resp) != 2 {
		t.Fatalf("answered %d records, want 2", fetchedRecords(resp))
	}
	seen = rc.balanced(t, seen, "answered")

	// The second partition's data does not fit the request's MaxBytes and is dropped.
	req := both()
	req.MaxBytes = 1000
	if resp := conn.roundTrip(t, req).(*kmsg.FetchResponse); fetchedRecords(resp) != 1 {
		t.Fatalf("answered %d records with room for one batch, want 1", fetchedRecords(resp))
	}
	seen = rc.balanced(t, seen, "dropped")

	// A long poll holds partition 0's record, reads again when more comes and merges.
	parked := ts.storage.parkedOn("rel")
	req = longPoll("rel", 10_000)
	req.MinBytes = 2500
	answer := asyncFetch(t, dialRaw(t, ts.addr), req)
	select {
	case <-parked:
	case <-testCtx(t).Done():
		t.Fatal("the long poll never waited")
	}
	for range 2 {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "rel", Partition: 0, Value: bytes.Repeat([]byte("w"), 1000)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if resp := <-answer; resp == nil || fetchedRecords(resp) != 3 {
		t.Fatal("the long poll did not answer with the three records")
	}
	seen = rc.balanced(t, seen, "merged")

	// READ_COMMITTED whose stable offset cannot be read: the read fails after it got data.
	rc.mu.Lock()
	rc.stableErr = errors.New("no stable offset")
	rc.mu.Unlock()
	req = both()
	req.IsolationLevel = 1
	if resp := conn.roundTrip(t, req).(*kmsg.FetchResponse); resp.Topics[0].Partitions[0].ErrorCode == 0 {
		t.Fatal("a failed Stable answered no error")
	}
	seen = rc.balanced(t, seen, "stable failed")
	rc.mu.Lock()
	rc.stableErr = nil
	rc.mu.Unlock()

	// A partition that does not exist beside one with data, and one at its end.
	req = both()
	req.Topics[0].Partitions[1].Partition = 7
	conn.roundTrip(t, req)
	seen = rc.balanced(t, seen, "failed partition")
	req = longPoll("rel", 0)
	req.Topics[0].Partitions[0].FetchOffset = 3
	conn.roundTrip(t, req)
	rc.balanced(t, seen, "at the end")
}
