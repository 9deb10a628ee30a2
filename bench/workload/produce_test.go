package workload

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Producers sharing a range with one start each and the same step send every value of it once:
// two producers over values 0..9 of a pool, read back from an in-memory Kafka.
func TestProduceStrided(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pool, err := NewPool(Random, 64, 1<<16, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for k := range 2 {
		prod, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Produce(ctx, prod, pool, k, 10, 2, true, nil); err != nil {
			t.Fatal(err)
		}
		prod.Close()
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got [][]byte
	for len(got) < 10 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value) })
	}
	// Producer 0 sent values 0, 2, ..., 8, then producer 1 sent 1, 3, ..., 9.
	for j, v := range got {
		want := pool.Value(2*(j%5) + j/5)
		if !bytes.Equal(v, want) {
			t.Fatalf("record %d is not value %d", j, 2*(j%5)+j/5)
		}
	}
}
