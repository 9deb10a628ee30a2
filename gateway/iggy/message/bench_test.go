package message

import (
	"fmt"
	"testing"
)

var benchShapes = []struct{ count, size int }{{1000, 100}, {1000, 1024}}

func BenchmarkBuilder(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(fmt.Sprintf("%dx%dB", s.count, s.size), func(b *testing.B) {
			payload := make([]byte, s.size)
			var bld Builder
			b.SetBytes(int64(s.count * s.size))
			b.ReportAllocs()
			for b.Loop() {
				bld.Reset()
				for i := range s.count {
					bld.Add(MakeID(uint64(i), 0), uint64(i), payload, nil)
				}
				if _, err := bld.Finish(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(fmt.Sprintf("%dx%dB", s.count, s.size), func(b *testing.B) {
			batch := build(b, s.count, s.size)
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Validate(batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStamp(b *testing.B) {
	batch := build(b, 1000, 1024)
	b.ReportAllocs()
	for b.Loop() {
		Stamp(batch, 1, 2, 3)
	}
}

func BenchmarkAppendSlice(b *testing.B) {
	batch := build(b, 1000, 1024)
	Stamp(batch, 0, 0, 0)
	dst := make([]byte, 0, len(batch))
	b.SetBytes(int64(len(batch) / 2))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = AppendSlice(dst[:0], batch, 500, 1000)
	}
}

func BenchmarkFrames(b *testing.B) {
	batch := build(b, 1000, 100)
	b.ReportAllocs()
	for b.Loop() {
		it := Frames(batch)
		for _, ok := it.Next(); ok; _, ok = it.Next() {
		}
	}
}
