package partlog

import (
	"bytes"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// benchBatch is 1000 messages of 1 KiB.
func benchBatch(b *testing.B) []byte {
	var bld message.Builder
	payload := bytes.Repeat([]byte("p"), 1024)
	for i := range 1000 {
		bld.Add(message.MakeID(uint64(i), 0), uint64(i), payload, nil)
	}
	out, err := bld.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return bytes.Clone(out)
}

func benchmarkAppend(b *testing.B, policy FsyncPolicy) {
	l, err := Open(b.TempDir(), Options{Fsync: policy, SegmentBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := benchBatch(b)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	now := time.Now()
	for b.Loop() {
		if _, err := l.Append(batch, now); err != nil {
			b.Fatal(err)
		}
		// Keep the disk footprint bounded on long runs.
		if l.SegmentCount() > 4 {
			if err := l.DeleteOldestSegments(2); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkAppend1000x1KiB(b *testing.B) {
	b.Run("never", func(b *testing.B) { benchmarkAppend(b, FsyncNever) })
	b.Run("interval", func(b *testing.B) { benchmarkAppend(b, FsyncInterval) })
}

func BenchmarkRead1000x1KiB(b *testing.B) {
	l, err := Open(b.TempDir(), Options{Fsync: FsyncNever})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	batch := benchBatch(b)
	for range 16 {
		if _, err := l.Append(batch, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("whole", func(b *testing.B) {
		var dst []byte
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			dst, _, err = l.Read((i%16)*1000, 1000, dst[:0])
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("sliced", func(b *testing.B) {
		var dst []byte
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			dst, _, err = l.Read((i%15)*1000+500, 1000, dst[:0])
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
