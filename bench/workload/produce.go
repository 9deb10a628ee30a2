package workload

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Produce sends the pool's values from, from+step, ... below to from prod and returns once
// every one is acked, with the first error. Producers sharing a range take one start each and
// the same step. flush sends the last batches at once instead of after the producer's linger,
// as a transaction about to commit must; acked, when set, counts the acks as they come.
func Produce(ctx context.Context, prod *kgo.Client, pool *Pool, from, to, step int, flush bool, acked *atomic.Int64) error {
	var mu sync.Mutex
	var first error
	var acks sync.WaitGroup
	for i := from; i < to; i += max(1, step) {
		acks.Add(1)
		prod.Produce(ctx, &kgo.Record{Value: pool.Value(i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
			if acked != nil {
				acked.Add(1)
			}
			acks.Done()
		})
	}
	if flush {
		if err := prod.Flush(ctx); err != nil {
			return err
		}
	}
	acks.Wait()
	return first
}
