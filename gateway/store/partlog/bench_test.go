package partlog

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// cpuMeter reports where the wall time of a benchmark went, which on a
// shared machine mostly measures the neighbours. cpu-ns/op is the CPU time of
// the whole process, background goroutines included. The loop runs pinned to
// one thread, whose time on a CPU is append-cpu-ns/op (what an appender pays)
// and whose time runnable but waiting for a CPU is runq-ns/op; what wall time
// has beyond the two is time the appender was blocked.
type cpuMeter struct{ process, run, wait time.Duration }

func startCPU() cpuMeter {
	runtime.LockOSThread()
	run, wait := threadSched()
	return cpuMeter{processCPU(), run, wait}
}

func (m cpuMeter) report(b *testing.B) {
	run, wait := threadSched()
	n := float64(b.N)
	b.ReportMetric(float64((processCPU()-m.process).Nanoseconds())/n, "cpu-ns/op")
	if run > 0 {
		b.ReportMetric(float64((run-m.run).Nanoseconds())/n, "append-cpu-ns/op")
		b.ReportMetric(float64((wait-m.wait).Nanoseconds())/n, "runq-ns/op")
	}
	runtime.UnlockOSThread()
}

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
	cpu := startCPU()
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
	cpu.report(b)
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
