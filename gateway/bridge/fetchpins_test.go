package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// faultyPolls is m with the polls fail says to fail answered with that error (count is how many
// messages the poll asks for: 1 for a check of the caches, more for a read).
type faultyPolls struct {
	*memStore
	fail func(count uint32) error
}

func (f faultyPolls) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	if err := f.fail(count); err != nil {
		return polled{}, err
	}
	return f.memStore.poll(ctx, stream, topic, partition, offset, count)
}

// pinsBalanced fails t unless every pin of b's fetch cache was given back exactly once: no
// chunk pinned, the metric at 0, no release refused.
func pinsBalanced(t *testing.T, b *Bridge, when string) {
	t.Helper()
	if n := b.metrics.PinnedChunks(); n != 0 {
		t.Errorf("%s: %d chunks pinned, want 0 (an answer was never released)", when, n)
	}
	if n := b.metrics.ReleaseFaults(); n != 0 {
		t.Errorf("%s: %d releases refused (released twice)", when, n)
	}
	for i := range b.rebuilt.chunks {
		if p := b.rebuilt.chunks[i].pins.Load(); p != 0 {
			t.Errorf("%s: chunk %d holds %d pins", when, i, p)
		}
	}
}

// fetchOK fetches t/0 from offset through as and fails t on an error.
func fetchOK(t *testing.T, b *Bridge, as iggyAPI, offset int64, maxBytes int32) kafka.FetchResult {
	t.Helper()
	res, err := b.fetch(context.Background(), as, "t", 0, offset, maxBytes, 12)
	if err != nil {
		t.Fatalf("fetch at %d: %v", offset, err)
	}
	return res
}

// TestFetchPinsReleasedOnce: whatever a fetch's outcome, every pin it took on the fetch cache is
// given back exactly once: an answer handed out as the cache's memory holds its chunk pinned
// until its Release and no longer, an answer that copied cached batches holds none, an error or
// a cancelled wait holds none when fetch returns, and a second Release is refused and counted.
func TestFetchPinsReleasedOnce(t *testing.T) {
	m := newMemStore()
	b := cacheBridge(t, m, 0)
	all := produceCached(t, b, m, "v")
	fetchOK(t, b, m, 0, 1<<20).Release() // rebuilds the three batches into one run of the cache
	pinsBalanced(t, b, "after the first fetch")

	t.Run("success", func(t *testing.T) {
		res := fetchOK(t, b, m, 0, 1<<20)
		if !inCache(b.rebuilt, res.Records) {
			t.Fatal("the answer is not the cache's memory")
		}
		if n := b.metrics.PinnedChunks(); n != 1 {
			t.Errorf("an answer in the cache's memory pins %d chunks, want 1", n)
		}
		checkRecords(t, readBatches(t, res.Records), all, 0)
		res.Release()
		pinsBalanced(t, b, "after release")
	})

	t.Run("released twice", func(t *testing.T) {
		res := fetchOK(t, b, m, 0, 1<<20)
		res.Release()
		res.Release()
		if n := b.metrics.ReleaseFaults(); n != 1 {
			t.Errorf("a second Release counted %d faults, want 1", n)
		}
		if n := b.metrics.PinnedChunks(); n != 0 {
			t.Errorf("%d chunks pinned after a second Release", n)
		}
		// A span released twice at the cache (a copy of it released as well) is refused once
		// per chunk pin, and leaves the count at zero, not below.
		st := b.part("t", 0)
		k := rebuiltKey{st: st, gen: st.rebuiltGen.Load(), base: 0, codec: b.topicCodec(context.Background(), "t")}
		sp, _ := b.rebuilt.chain(k, 1<<20, true, nil)
		if len(sp.parts) == 0 {
			t.Fatal("the cache does not hold batch 0")
		}
		twin, pins := sp, len(sp.parts)
		sp.release()
		twin.release()
		if n, want := b.metrics.ReleaseFaults(), 1+uint64(pins); n != want {
			t.Errorf("a span released twice counted %d faults in all, want %d", n, want)
		}
		if n := b.metrics.PinnedChunks(); n != 0 {
			t.Errorf("after a span released twice, %d chunks pinned", n)
		}
		b.metrics.releaseFaults.Store(0)
		pinsBalanced(t, b, "after the faults")
	})

	t.Run("partial answer", func(t *testing.T) {
		// Three more batches: the cached run is no longer the whole answer, so it is copied
		// and released and the rest is read from Iggy.
		more := produceCached(t, b, m, "w")
		hits := b.metrics.RebuiltFetches()
		res := fetchOK(t, b, m, 0, 1<<20)
		if b.metrics.RebuiltFetches() != hits+1 {
			t.Fatal("the fetch was not answered in part from the cache")
		}
		if inCache(b.rebuilt, res.Records) {
			t.Fatal("a partial cached answer was handed out as the cache's memory")
		}
		if n := b.metrics.PinnedChunks(); n != 0 {
			t.Errorf("a copied answer pins %d chunks", n)
		}
		checkRecords(t, readBatches(t, res.Records), append(append([]trec(nil), all...), more...), 0)
		res.Release()
		pinsBalanced(t, b, "after a partial answer")
		all = append(all, more...)
	})

	t.Run("error", func(t *testing.T) {
		// One batch more than the cache holds, so that a read from offset 4 takes the cached
		// batches and goes on to Iggy.
		all = append(all, produceCached(t, b, m, "x")...)
		down := errors.New("store down")
		for _, tc := range []struct {
			name string
			fail func(count uint32) error
		}{
			// The check of the cached span fails after chain pinned it.
			{"check", func(count uint32) error {
				if count == 1 && b.metrics.PinnedChunks() > 0 {
					return down
				}
				return nil
			}},
			// The read from Iggy fails after the cached span was copied into the answer.
			{"read", func(count uint32) error {
				if count > 1 {
					return wire.PartitionNotFound
				}
				return nil
			}},
		} {
			as := faultyPolls{memStore: m, fail: tc.fail}
			hits := b.metrics.RebuiltFetches()
			res, err := b.fetch(context.Background(), as, "t", 0, 4, 1<<20, 12)
			if err == nil {
				res.Release()
				t.Fatalf("%s: a failing poll gave no error", tc.name)
			}
			if tc.name == "read" && b.metrics.RebuiltFetches() != hits+1 {
				t.Errorf("read: the failed fetch had not taken cached batches first")
			}
			if res.Records != nil {
				t.Errorf("%s: an error result holds %d bytes", tc.name, len(res.Records))
			}
			res.Release() // noRelease: the handler may call it on any result
			pinsBalanced(t, b, tc.name+" error")
		}
	})

	t.Run("cancel", func(t *testing.T) {
		// A reader waiting for another's rebuild gives up when its context ends, holding
		// nothing; the rebuild goes on and is balanced as well.
		other := cacheBridge(t, m, 0)
		gate := make(chan struct{})
		m.mu.Lock()
		m.pollGate = gate
		m.mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() {
			res, err := other.fetch(context.Background(), m, "t", 0, 0, 1<<20, 12)
			if err != nil {
				t.Errorf("the rebuilding reader: %v", err)
				return
			}
			res.Release()
		})
		checkfor.Eventually(t, 10*time.Second, "the first reader to start its rebuild", func() error {
			other.rebuilds.mu.Lock()
			defer other.rebuilds.mu.Unlock()
			if n := len(other.rebuilds.m); n != 1 {
				return fmt.Errorf("%d rebuilds under way", n)
			}
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			res, err := other.fetch(ctx, m, "t", 0, 0, 1<<20, 12)
			res.Release()
			errc <- err
		}()
		checkfor.Eventually(t, 10*time.Second, "the second reader to wait", func() error {
			if n := other.rebuilds.waiting.Load(); n != 1 {
				return fmt.Errorf("%d readers waiting", n)
			}
			return nil
		})
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled waiting reader answered %v, want context.Canceled", err)
		}
		m.mu.Lock()
		m.pollGate = nil
		m.mu.Unlock()
		close(gate)
		wg.Wait()
		pinsBalanced(t, other, "after a cancelled wait")
	})
}

// TestFetchPinsEvictedWhilePinned: an answer handed out as the cache's memory keeps its bytes
// while the cache turns over many times and is closed under it; its release then gives the
// chunk back, and the pins balance.
func TestFetchPinsEvictedWhilePinned(t *testing.T) {
	m := newMemStore()
	b := cacheBridge(t, m, smallLimit) // 16 chunks of 64 KiB
	batch := func(i int) []trec {
		recs := valueRecs(fmt.Sprint("e", i), 2)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 12<<10/len(recs[j].Value)) // about 24 KiB a batch
		}
		return recs
	}
	const batches = 6 * 3 * rebuiltChunks // the cache's capacity six times over
	for i := range batches {
		if _, err := b.produce(context.Background(), m, "t", 0, kafkaBatch(t, codecNone, batch(i), -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	fetchOK(t, b, m, 0, 1).Release()
	held := fetchOK(t, b, m, 0, 1)
	if !inCache(b.rebuilt, held.Records) {
		t.Fatal("the second fetch of batch 0 is not the cache's memory")
	}
	want := bytes.Clone(held.Records)
	for off := int64(2); off < 2*batches; off += 2 {
		fetchOK(t, b, m, off, 1).Release()
	}
	if !bytes.Equal(held.Records, want) {
		t.Fatal("a pinned answer's bytes changed while the cache turned over")
	}
	if n := b.metrics.PinnedChunks(); n != 1 {
		t.Errorf("%d chunks pinned while one answer is held, want 1", n)
	}
	b.rebuilt.close()
	if !bytes.Equal(held.Records, want) {
		t.Fatal("a pinned answer's bytes changed when the cache closed")
	}
	held.Release()
	pinsBalanced(t, b, "after the last release")
	if r := b.rebuilt.resident(); r != 0 {
		t.Errorf("the closed cache holds %d bytes after the last release", r)
	}
}

// TestFetchPinsConcurrent: readers of random offsets and sizes, some of them cancelled, some
// whose reads from Iggy fail, all at once over a small cache that turns over: once every answer
// is released, the pins balance.
func TestFetchPinsConcurrent(t *testing.T) {
	m := newMemStore()
	b := cacheBridge(t, m, smallLimit)
	var all []trec
	for i := range 40 {
		recs := valueRecs(fmt.Sprint("c", i), 4)
		for j := range recs {
			recs[j].Value = bytes.Repeat(recs[j].Value, 2<<10/len(recs[j].Value))
		}
		all = append(all, recs...)
		if _, err := b.produce(context.Background(), m, "t", 0, kafkaBatch(t, codecNone, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range 100 {
				ctx, cancel := context.WithCancel(context.Background())
				var as iggyAPI = m
				switch rng.IntN(8) {
				case 0:
					cancel()
				case 1:
					as = faultyPolls{memStore: m, fail: func(count uint32) error {
						if count > 1 {
							return wire.PartitionNotFound
						}
						return nil
					}}
				}
				off := int64(rng.IntN(len(all)))
				res, err := b.fetch(ctx, as, "t", 0, off, int32(1+rng.IntN(64<<10)), 12)
				if err == nil && len(res.Records) == 0 {
					t.Errorf("no records at %d", off)
				}
				res.Release()
				cancel()
			}
		})
	}
	wg.Wait()
	pinsBalanced(t, b, "after every reader")
}
