package bridge

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// BenchmarkKafkaToIggy converts one produced Kafka batch of 1000 records into
// one Iggy batch, the produce path's per-batch work.
func BenchmarkKafkaToIggy(b *testing.B) {
	for _, size := range []int{100, 1024} {
		for _, codec := range []int{codecNone, codecLZ4} {
			b.Run(fmt.Sprintf("%dB/codec%d", size, codec), func(b *testing.B) {
				in := benchBatch(b, codec, size)
				c := getConverter()
				ids := &idGen{}
				b.SetBytes(int64(1000 * size))
				b.ReportAllocs()
				for b.Loop() {
					kb, _, err := nextBatch(in)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := c.toIggy(&kb, ids, 1<<20); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkIggyToKafka converts one stored Iggy batch of 1000 records into
// one Kafka batch, the fetch path's per-batch work.
func BenchmarkIggyToKafka(b *testing.B) {
	for _, size := range []int{100, 1024} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			kb, _, err := nextBatch(benchBatch(b, codecNone, size))
			if err != nil {
				b.Fatal(err)
			}
			c := getConverter()
			batch, err := c.toIggy(&kb, &idGen{}, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			stored := append([]byte(nil), batch...)
			message.Stamp(stored, 0, 0, 1)
			var out []byte
			b.SetBytes(int64(1000 * size))
			b.ReportAllocs()
			for b.Loop() {
				out, _, _, err = c.appendKafka(out[:0], stored, 0)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func benchBatch(b *testing.B, codec, size int) []byte {
	recs := make([]trec, 1000)
	for i := range recs {
		recs[i] = trec{Value: bytes.Repeat([]byte{byte('a' + i%26)}, size), TS: 1_700_000_000_000 + int64(i)}
	}
	return kafkaBatch(b, codec, recs, 1, 0, 0)
}
