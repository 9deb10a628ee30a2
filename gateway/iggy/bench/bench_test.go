package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

const batchMessages = 1000

var (
	sizes    = []int{100, 1024}
	policies = []struct {
		name   string
		policy partlog.FsyncPolicy
	}{{"never", partlog.FsyncNever}, {"interval", partlog.FsyncInterval}}
)

// cpuTime is the user plus system CPU time of the whole process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// meter reports throughput and CPU cost of b.N operations of perOp
// payload bytes and msgs messages each.
type meter struct {
	b       *testing.B
	cpu0    time.Duration
	start   time.Time
	perOp   int64
	msgsPer int
}

func startMeter(b *testing.B, perOp int64, msgs int) *meter {
	b.SetBytes(perOp)
	b.ReportAllocs()
	m := &meter{b: b, perOp: perOp, msgsPer: msgs}
	b.ResetTimer()
	m.cpu0, m.start = cpuTime(b), time.Now()
	return m
}

func (m *meter) stop() {
	elapsed := time.Since(m.start)
	cpu := cpuTime(m.b) - m.cpu0
	m.b.StopTimer()
	gb := float64(m.perOp) * float64(m.b.N) / 1e9
	if gb > 0 {
		m.b.ReportMetric(cpu.Seconds()/gb, "cpu-s/GB")
	}
	if elapsed > 0 {
		m.b.ReportMetric(float64(m.msgsPer)*float64(m.b.N)/elapsed.Seconds(), "msgs/s")
	}
}

type env struct {
	srv    *teststore.Store
	client *iggy.Client
	stream wire.Identifier
	topic  wire.Identifier
}

func setup(b *testing.B, policy partlog.FsyncPolicy, partitions uint32) *env {
	b.Helper()
	srv := teststore.Start(b, func(c *store.Config) {
		c.DataDir, c.Fsync = dataDir(b), policy
	})
	ctx := context.Background()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}, PoolSize: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	st, err := c.CreateStream(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, wire.NumericID(st.ID), "t", partitions, iggy.TopicOptions{}); err != nil {
		b.Fatal(err)
	}
	return &env{srv: srv, client: c, stream: wire.NumericID(st.ID), topic: wire.NamedID("t")}
}

// dataDir is a fresh directory for the store: b.TempDir(), or one under
// $IGGY_BENCH_DIR (for example /dev/shm) to take the disk out of the
// measurement and see what the client, the socket and the store's CPU cost.
func dataDir(b *testing.B) string {
	root := os.Getenv("IGGY_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "iggy-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func buildBatch(b *testing.B, size int) []byte {
	b.Helper()
	var bld message.Builder
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i)
	}
	now := uint64(time.Now().UnixMicro())
	for i := 0; i < batchMessages; i++ {
		binary.LittleEndian.PutUint64(payload, uint64(i))
		bld.Add(message.MakeID(uint64(i+1), 0), now, payload, nil)
	}
	batch, err := bld.Finish()
	if err != nil {
		b.Fatal(err)
	}
	return batch
}

func sizeName(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%dKiB", n/1024)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkSend sends one batch per operation from one goroutine: one
// lockstep connection, the latency-bound case.
func BenchmarkSend(b *testing.B) {
	for _, p := range policies {
		for _, size := range sizes {
			b.Run(fmt.Sprintf("fsync=%s/msg=%s", p.name, sizeName(size)), func(b *testing.B) {
				e := setup(b, p.policy, 1)
				batch := buildBatch(b, size)
				ctx := context.Background()
				m := startMeter(b, int64(size*batchMessages), batchMessages)
				for i := 0; i < b.N; i++ {
					if _, err := e.client.SendBatch(ctx, e.stream, e.topic, 0, batch); err != nil {
						b.Fatal(err)
					}
				}
				m.stop()
			})
		}
	}
}

// BenchmarkSendParallel sends from four goroutines over the client's pool of
// four connections, each to its own partition, so that client encoding,
// the socket and the store's append overlap.
func BenchmarkSendParallel(b *testing.B) {
	for _, p := range policies {
		for _, size := range sizes {
			b.Run(fmt.Sprintf("fsync=%s/msg=%s", p.name, sizeName(size)), func(b *testing.B) {
				e := setup(b, p.policy, 4)
				batch := buildBatch(b, size)
				ctx := context.Background()
				b.SetParallelism(max(1, 4/runtime.GOMAXPROCS(0)))
				var next atomic.Uint32
				m := startMeter(b, int64(size*batchMessages), batchMessages)
				b.RunParallel(func(pb *testing.PB) {
					part := (next.Add(1) - 1) % 4
					for pb.Next() {
						if _, err := e.client.SendBatch(ctx, e.stream, e.topic, part, batch); err != nil {
							b.Error(err)
							return
						}
					}
				})
				m.stop()
			})
		}
	}
}

// BenchmarkPoll reads 1000 messages per operation from a partition filled
// beforehand, cycling over it.
func BenchmarkPoll(b *testing.B) {
	const stored = 64 // batches in the partition
	for _, size := range sizes {
		b.Run(fmt.Sprintf("msg=%s", sizeName(size)), func(b *testing.B) {
			e := setup(b, partlog.FsyncNever, 1)
			batch := buildBatch(b, size)
			ctx := context.Background()
			for i := 0; i < stored; i++ {
				if _, err := e.client.SendBatch(ctx, e.stream, e.topic, 0, batch); err != nil {
					b.Fatal(err)
				}
			}
			m := startMeter(b, int64(size*batchMessages), batchMessages)
			for i := 0; i < b.N; i++ {
				from := uint64(i%stored) * batchMessages
				p, err := e.client.Poll(ctx, iggy.PollRequest{Stream: e.stream, Topic: e.topic,
					Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: from}, Count: batchMessages})
				if err != nil {
					b.Fatal(err)
				}
				if p.Count != batchMessages {
					b.Fatalf("polled %d messages", p.Count)
				}
				p.Release()
			}
			m.stop()
		})
	}
}

// BenchmarkTCPCopy is the reference: per operation it writes the bytes of
// one send request (header, metadata and batch) over loopback TCP and waits
// for a 32-byte answer, as a send does, with no client or store work.
func BenchmarkTCPCopy(b *testing.B) {
	for _, size := range sizes {
		b.Run(fmt.Sprintf("msg=%s", sizeName(size)), func(b *testing.B) {
			frame := make([]byte, wire.HeaderSize+32+len(buildBatch(b, size)))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				buf := make([]byte, len(frame))
				ack := make([]byte, 32)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if _, err := c.Write(ack); err != nil {
						return
					}
				}
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ack := make([]byte, 32)
			m := startMeter(b, int64(size*batchMessages), batchMessages)
			for i := 0; i < b.N; i++ {
				if _, err := c.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, ack); err != nil {
					b.Fatal(err)
				}
			}
			m.stop()
		})
	}
}
