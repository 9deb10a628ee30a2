package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

const partitions = 3

// broker is one system under test: a seed address and a way to stop it.
type broker struct {
	name  string
	addr  string
	close func()
}

func startGateway(b *testing.B) broker {
	b.Helper()
	dir, err := os.MkdirTemp(benchDir(), "bench-gateway-")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	g, err := gateway.Start(ctx, gateway.Config{
		Bind:              "127.0.0.1:0",
		Embedded:          store.Config{Listen: "127.0.0.1:0", DataDir: dir, Fsync: partlog.FsyncNever},
		AutoCreateTopics:  true,
		DefaultPartitions: partitions,
	})
	if err != nil {
		b.Fatal(err)
	}
	return broker{name: "gateway", addr: g.Addr().String(), close: func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		g.Shutdown(sctx)
		os.RemoveAll(dir)
	}}
}

// benchDir is where the gateway's store lives: IGGY_BENCH_DIR when set (a
// tmpfs such as /dev/shm separates the software's cost from the disk's),
// otherwise the system temp directory, a real disk on most machines.
func benchDir() string {
	if d := os.Getenv("IGGY_BENCH_DIR"); d != "" {
		return d
	}
	return os.TempDir()
}

func startKfake(b *testing.B) broker {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(partitions))
	if err != nil {
		b.Fatal(err)
	}
	return broker{name: "kfake", addr: c.ListenAddrs()[0], close: c.Close}
}

var topicSeq atomic.Int64

// newTopic creates a fresh topic so every benchmark run starts empty.
func newTopic(b *testing.B, br broker) string {
	b.Helper()
	topic := fmt.Sprintf("bench-%d-%d", os.Getpid(), topicSeq.Add(1))
	cl, err := kgo.NewClient(kgo.SeedBrokers(br.addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil || resp.Err != nil {
		b.Fatalf("create topic on %s: %v %v", br.name, err, resp.Err)
	}
	return topic
}

func brokers() []func(*testing.B) broker { return []func(*testing.B) broker{startGateway, startKfake} }

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, records, size int, cpu time.Duration) {
	secs := b.Elapsed().Seconds()
	gb := float64(records*size) / 1e9
	b.ReportMetric(float64(records)/secs, "records/s")
	if gb > 0 {
		b.ReportMetric(cpu.Seconds()/gb, "cpu-s/GB")
	}
}

func produceN(b *testing.B, cl *kgo.Client, topic string, n, size int) {
	value := make([]byte, size)
	var wg sync.WaitGroup
	var failed atomic.Value
	wg.Add(n)
	for range n {
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("produce: %v", err)
	}
}

// BenchmarkProduce sends b.N records of each size through one kgo producer
// (default batching, idempotent, acks all) and waits for every ack.
func BenchmarkProduce(b *testing.B) {
	for _, start := range brokers() {
		br := start(b)
		for _, size := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dB", br.name, size), func(b *testing.B) {
				topic := newTopic(b, br)
				cl, err := kgo.NewClient(kgo.SeedBrokers(br.addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(100_000))
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				produceN(b, cl, topic, 1000, size) // warm up metadata and connections
				b.SetBytes(int64(size))
				b.ResetTimer()
				cpu0 := cpuTime()
				produceN(b, cl, topic, b.N, size)
				b.StopTimer()
				report(b, b.N, size, cpuTime()-cpu0)
			})
		}
		br.close()
	}
}

// BenchmarkConsume reads b.N records of each size, produced beforehand
// outside the timer, from the start of a topic with one kgo consumer.
func BenchmarkConsume(b *testing.B) {
	for _, start := range brokers() {
		br := start(b)
		for _, size := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dB", br.name, size), func(b *testing.B) {
				topic := newTopic(b, br)
				pcl, err := kgo.NewClient(kgo.SeedBrokers(br.addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0), kgo.MaxBufferedRecords(100_000))
				if err != nil {
					b.Fatal(err)
				}
				produceN(b, pcl, topic, b.N, size)
				pcl.Close()
				cl, err := kgo.NewClient(kgo.SeedBrokers(br.addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				b.SetBytes(int64(size))
				b.ResetTimer()
				cpu0 := cpuTime()
				got := 0
				for got < b.N {
					fs := cl.PollFetches(ctx)
					if err := ctx.Err(); err != nil {
						b.Fatalf("consumed %d of %d: %v", got, b.N, err)
					}
					fs.EachError(func(t string, p int32, err error) { b.Fatalf("fetch %s/%d: %v", t, p, err) })
					got += fs.NumRecords()
				}
				b.StopTimer()
				report(b, got, size, cpuTime()-cpu0)
			})
		}
		br.close()
	}
}

// BenchmarkProduceLatency paces a producer at 1,000 records/s (linger 0, so
// each record goes out alone) and reports the p50 and p99 of the time from
// Produce to its ack.
func BenchmarkProduceLatency(b *testing.B) {
	for _, start := range brokers() {
		br := start(b)
		b.Run(br.name, func(b *testing.B) {
			topic := newTopic(b, br)
			cl, err := kgo.NewClient(kgo.SeedBrokers(br.addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			value := make([]byte, 100)
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, b.N)
			var wg sync.WaitGroup
			wg.Add(b.N)
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			b.ResetTimer()
			for i := range b.N {
				<-tick.C
				sent := time.Now()
				cl.Produce(context.Background(), &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
					if err != nil {
						b.Errorf("produce: %v", err)
					}
					lat[i] = time.Since(sent)
					wg.Done()
				})
			}
			wg.Wait()
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
		br.close()
	}
}
