package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// BenchmarkKafkaToIggy converts one produced Kafka batch of 1000 records into
// one Iggy batch, the produce path's per-batch work.
func BenchmarkKafkaToIggy(b *testing.B) {
	for _, size := range []int{100, 1024} {
		for _, codec := range []int{codecNone, codecLZ4} {
			b.Run(fmt.Sprintf("%dB/codec%d", size, codec), func(b *testing.B) {
				in := benchBatch(b, codec, size)
				c := getConverter(new(Metrics))
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
			c := getConverter(new(Metrics))
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

// BenchmarkGateway drives the whole gateway data path in one process: a raw
// Kafka client (requests encoded once, answers only framed, so the client
// adds little to the profile) against the Kafka listener, the bridge and the
// embedded store reached through memory, as `serve` wires them. One op is one
// Produce or Fetch of about 1 MB of values; cpu-s/GB is the process's CPU
// time per GB of values, the figure the side-by-side runner reports. Values
// are produced with snappy, franz-go's default; fetch answers with the
// producer's codec, fetch-none with FetchCodec "none". The json phases
// produce the benchmark runner's JSON-like values (bench/workload, which
// snappy shrinks about 3:1) with both caches off: fetch-json rebuilds and
// compresses every batch again, as a group's first read of records gone from
// the tail does; fetch-json-tail answers with the producers' own batches from
// the tail cache, what a fetch that serves the produced bytes as they came
// costs. fetch-json-behind is a group reading from its start what producers
// finished writing, with both caches at their defaults but a tail cache of
// 4 MiB: the reader goes over each round of 32 produced batches once, then the
// producer writes the next round (its CPU and time left out of cpu-s/GB and
// ns/op, not of a CPU profile), so every read is a first read of records
// mostly gone from the tail.
func BenchmarkGateway(b *testing.B) {
	for _, size := range []int{1024, 100} {
		for _, phase := range []string{"produce", "fetch", "fetch-none", "fetch-tail", "fetch-json", "fetch-json-tail", "fetch-json-behind"} {
			b.Run(fmt.Sprintf("%s/%dB/snappy", phase, size), func(b *testing.B) {
				// fetch and fetch-none rebuild every batch from Iggy; fetch-tail reads what the
				// tail cache holds, as a consumer keeping up with its producers does.
				cfg := Config{AutoCreateTopics: true, DefaultPartitions: 1, TailCacheBytes: -1}
				switch phase {
				case "fetch-none":
					cfg.FetchCodec = "none"
				case "fetch-tail":
					cfg.TailCacheBytes = 64 << 20
				case "fetch-json":
					cfg.FetchCacheBytes = -1
				case "fetch-json-tail":
					cfg.TailCacheBytes, cfg.FetchCacheBytes = 64<<20, -1
				case "fetch-json-behind":
					cfg.TailCacheBytes = 4 << 20
				}
				g := startGateway(b, cfg)
				n := (1 << 20) / (size + 8)
				batch := randomBatch(b, n, size)
				if strings.HasPrefix(phase, "fetch-json") {
					batch = jsonBatch(b, n, size)
				}
				if phase == "produce" {
					b.SetBytes(int64(n * size))
					b.ReportAllocs()
					cpu := cpuTime()
					for b.Loop() {
						g.produce(b, batch)
					}
					b.ReportMetric((cpuTime()-cpu).Seconds()/(float64(b.N*n*size)/1e9), "cpu-s/GB")
					return
				}
				const stored = 32
				for range stored {
					g.produce(b, batch)
				}
				b.SetBytes(int64(n * size))
				b.ReportAllocs()
				cpu, spent := cpuTime(), time.Duration(0)
				offset, end, moved := int64(0), int64(stored*n), 0
				for b.Loop() {
					var got int
					offset, got = g.fetch(b, offset)
					moved += got
					switch {
					case offset < end:
					case phase == "fetch-json-behind":
						b.StopTimer()
						spent += cpuTime() - cpu
						for range stored {
							g.produce(b, batch)
						}
						end += int64(stored * n)
						cpu = cpuTime()
						b.StartTimer()
					default:
						offset = 0
					}
				}
				spent += cpuTime() - cpu
				b.ReportMetric(spent.Seconds()/(float64(moved*size)/1e9), "cpu-s/GB")
			})
		}
	}
}

type benchGateway struct {
	nc   net.Conn
	br   *bufio.Reader
	f    *kmsg.RequestFormatter
	corr int32
	buf  []byte
}

func startGateway(b *testing.B, cfg Config) *benchGateway {
	b.Helper()
	srv, err := store.New(store.Config{Listen: "127.0.0.1:0", DataDir: b.TempDir(), Fsync: partlog.FsyncNever, PasswordIterations: teststore.PasswordIterations})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	b.Cleanup(func() { cancel(); srv.Close(); <-done })
	// As the gateway reaches its embedded store: requests run in the caller's goroutine.
	ic, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr().String()},
		Local: func() (iggy.Local, error) { return srv.Local() }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ic.Close() })
	br, err := New(ctx, ic, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { br.Close() })
	ks, err := kafka.NewServer(kafka.Config{NodeID: 1, Storage: br.As(ic), AutoCreateTopics: true})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go ks.Serve(ln)
	b.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		ks.Shutdown(sctx)
	})
	if _, err := br.As(ic).Topic(ctx, "bench", true); err != nil {
		b.Fatal(err)
	}
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	return &benchGateway{nc: nc, br: bufio.NewReaderSize(nc, 1<<20), f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench"))}
}

// roundTrip sends req and returns the answer's body after the correlation id.
func (g *benchGateway) roundTrip(b *testing.B, req kmsg.Request) []byte {
	g.corr++
	g.buf = g.f.AppendRequest(g.buf[:0], req, g.corr)
	if _, err := g.nc.Write(g.buf); err != nil {
		b.Fatal(err)
	}
	var hdr [8]byte
	if _, err := io.ReadFull(g.br, hdr[:]); err != nil {
		b.Fatal(err)
	}
	size := int(binary.BigEndian.Uint32(hdr[:]))
	if corr := int32(binary.BigEndian.Uint32(hdr[4:])); corr != g.corr {
		b.Fatalf("answer %d to request %d", corr, g.corr)
	}
	g.buf = slices.Grow(g.buf[:0], size-4)[:size-4]
	if _, err := io.ReadFull(g.br, g.buf); err != nil {
		b.Fatal(err)
	}
	if req.IsFlexible() {
		return g.buf[1:] // empty header tag section
	}
	return g.buf
}

func (g *benchGateway) produce(b *testing.B, batch []byte) {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	if err := resp.ReadFrom(g.roundTrip(b, req)); err != nil {
		b.Fatal(err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		b.Fatalf("produce: error %d", code)
	}
}

// fetch reads from offset and returns the offset after the last record and
// the number of records.
func (g *benchGateway) fetch(b *testing.B, offset int64) (int64, int) {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxWaitMillis = 500
	req.MinBytes = 1
	req.MaxBytes = 50 << 20
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 1 << 20
	rp.LogStartOffset = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if err := resp.ReadFrom(g.roundTrip(b, req)); err != nil {
		b.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 {
		b.Fatalf("fetch at %d: error %d", offset, p.ErrorCode)
	}
	next, n := offset, 0
	for recs := p.RecordBatches; len(recs) >= kbHeaderLen; {
		kb, rest, err := nextBatch(recs)
		if err != nil {
			b.Fatal(err)
		}
		next = kb.BaseOffset + int64(kb.LastOffsetDelta) + 1
		n += int(kb.NumRecords)
		recs = rest
	}
	if n == 0 {
		b.Fatalf("fetch at %d: no records", offset)
	}
	return next, n
}

// randomBatch is one snappy batch of n incompressible values, as franz-go
// sends it with its defaults.
func randomBatch(b *testing.B, n, size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]trec, n)
	for i := range recs {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = trec{Value: v, TS: 1_700_000_000_000 + int64(i)}
	}
	return kafkaBatch(b, codecSnappy, recs, -1, -1, -1)
}

// jsonBatch is a snappy batch of n of the benchmark runner's JSON-like values of size bytes.
func jsonBatch(b testing.TB, n, size int) []byte {
	pool, err := workload.NewPool(workload.JSON, size, n*size, 1)
	if err != nil {
		b.Fatal(err)
	}
	recs := make([]trec, n)
	for i := range recs {
		recs[i] = trec{Value: pool.Value(i), TS: 1_700_000_000_000 + int64(i)}
	}
	return kafkaBatch(b, codecSnappy, recs, -1, -1, -1)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
