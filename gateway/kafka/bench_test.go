package kafka

import (
	"context"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkProduce measures the listener's share of a produce (framing, decoding, pipelining,
// answering) with a kgo producer against the in-memory Storage, 1 KiB records.
func BenchmarkProduce(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(strconv.Itoa(size)+"B", func(b *testing.B) {
			ts := startServer(b, nil)
			cl := ts.client(b, kgo.DefaultProduceTopic("bench"), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
			createTopic(b, cl, "bench", 4)
			value := make([]byte, size)
			b.SetBytes(int64(size))
			b.ResetTimer()
			ctx := context.Background()
			for range b.N {
				cl.Produce(ctx, &kgo.Record{Value: value}, nil)
			}
			if err := cl.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkFetch measures consuming records already stored in the in-memory Storage.
func BenchmarkFetch(b *testing.B) {
	ts := startServer(b, nil)
	cl := ts.client(b, kgo.DefaultProduceTopic("bench"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	createTopic(b, cl, "bench", 4)
	value := make([]byte, 1024)
	ctx := context.Background()
	for range b.N {
		cl.Produce(ctx, &kgo.Record{Value: value}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	consumer := ts.client(b, kgo.ConsumeTopics("bench"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	b.SetBytes(1024)
	b.ResetTimer()
	for got := 0; got < b.N; {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		got += fs.NumRecords()
	}
}
