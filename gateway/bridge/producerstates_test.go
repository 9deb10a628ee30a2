package bridge

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// DescribeProducers' producers of a partition: an open transaction older than the tail (the
// last scanMaxMessages messages) is still listed, from its batches (epoch, last sequence,
// largest timestamp, first offset); an idempotent producer in the tail whose newest batch is
// older than ProducerIDExpiration is not, as Kafka expires it; a recent one is.
func TestProducerStatesBeyondTheTail(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := bridgeWithTopic(t, m, 1)
	old := time.Now().Add(-48 * time.Hour).UnixMilli()
	recs := func(prefix string, n int, ts int64) []trec {
		out := valueRecs(prefix, n)
		for i := range out {
			out[i].TS = ts + int64(i)
		}
		return out
	}
	produce := func(batch []byte) int64 {
		t.Helper()
		res, err := b.produce(ctx, m, "t", 0, batch)
		if err != nil {
			t.Fatal(err)
		}
		return res.BaseOffset
	}
	first := produce(withAttrs(kafkaBatch(t, codecNone, recs("txn", 3, old), 5, 2, 10), attrTransactional))
	produce(kafkaBatch(t, codecNone, recs("plain", scanMaxMessages, time.Now().UnixMilli()), -1, -1, -1))
	// In the tail, but with timestamps older than ProducerIDExpiration.
	produce(kafkaBatch(t, codecNone, recs("idem-old", 2, old), 6, 0, 0))
	now := time.Now().UnixMilli()
	produce(kafkaBatch(t, codecNone, recs("idem-new", 4, now), 7, 1, 20))

	got, err := b.producerStates(ctx, m, "t", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]string{
		fmt.Sprintf("{5 2 12 %d %d}", old+2, first),
		fmt.Sprintf("{7 1 23 %d -1}", now+3),
	})
	var gotS []string
	for _, p := range got {
		gotS = append(gotS, fmt.Sprint(p))
	}
	if fmt.Sprint(gotS) != want {
		t.Fatalf("producers %v, want %s", gotS, want)
	}
}
