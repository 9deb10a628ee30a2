// Command reread measures what a running gateway spends, in CPU seconds read from its own
// /metrics (process_cpu_seconds_total, so the figure is the whole serve process, store
// included), to produce a topic and to have consumer groups read it back, one group after
// another: the first read of each topic against the reads after it shows what the fetch cache
// (--fetch-cache) saves and what filling it costs. Start a gateway with --metrics-addr first:
//
//	iggy-kafka serve --data /dev/shm/rr --fsync never --metrics-addr 127.0.0.1:9100 [--fetch-cache 0]
//	go run ./bench/cmd/reread -topics 3 -groups 4 -mib 256
//
// Each topic gets -mib MiB of 1 KiB values (random, or JSON-like with -json) from one franz-go
// producer; each group is a fresh franz-go client reading the topic from the start. Process CPU
// is counted in 10 ms ticks, so read sizes of 256 MiB or more. With -cycle each group's read also
// says, on standard error, how much of its time a fetch was in flight (from the client's write of
// the request to its read of the whole answer) against the client's time alone, and the median
// fetch: where a consumer's pace is bound by its own decoding rather than by the gateway.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "the gateway's Kafka address")
	metrics := flag.String("metrics", "127.0.0.1:9100", "the gateway's --metrics-addr")
	mib := flag.Int("mib", 256, "MiB of 1 KiB values per topic")
	topics := flag.Int("topics", 3, "topics, produced and read one after another")
	groups := flag.Int("groups", 4, "groups reading each topic, one after another")
	js := flag.Bool("json", false, "JSON-like values (snappy shrinks them about 3:1) instead of random")
	flag.BoolVar(&cycles, "cycle", false, "also say, per group read, how much of its time a fetch was in flight (the gateway answering) and how much the client spent alone")
	flag.Parse()
	if err := run(*addr, *metrics, *mib, *topics, *groups, *js); err != nil {
		fmt.Fprintln(os.Stderr, "reread:", err)
		os.Exit(1)
	}
}

func run(addr, metrics string, mib, topics, groups int, js bool) error {
	ctx := context.Background()
	records := int64(mib) << 10
	values := makeValues(js)
	prefix := fmt.Sprintf("reread-%d", time.Now().UnixNano())
	fmt.Println("topic\tproduce s\tgroup reads s (first, then the others)")
	for t := range topics {
		topic := fmt.Sprintf("%s-%d", prefix, t)
		before, err := cpu(metrics)
		if err != nil {
			return err
		}
		if err := produce(ctx, addr, topic, records, values); err != nil {
			return err
		}
		after, err := cpu(metrics)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%d\t%.2f\t", t, after-before)
		for g := range groups {
			before = after
			if err := read(ctx, addr, topic, fmt.Sprintf("%s-g%d", topic, g), records); err != nil {
				return err
			}
			if after, err = cpu(metrics); err != nil {
				return err
			}
			line += fmt.Sprintf(" %.2f", after-before)
		}
		fmt.Println(line)
	}
	return nil
}

// makeValues is a pool of 1,024 values of 1 KiB.
func makeValues(js bool) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, 1024)
	for i := range out {
		v := make([]byte, 0, 1024)
		if js {
			for len(v) < 1024 {
				v = fmt.Appendf(v, `{"id":%d,"user":"user-%d","active":%v,"score":%d},`, r.IntN(1e6), r.IntN(977), r.IntN(2) == 0, r.IntN(1e5))
			}
			v = v[:1024]
		} else {
			for len(v) < 1024 {
				v = append(v, byte(r.Uint32()))
			}
		}
		out[i] = v
	}
	return out
}

func produce(ctx context.Context, addr, topic string, records int64, values [][]byte) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	if err != nil {
		return err
	}
	defer cl.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range records {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Value: values[i%int64(len(values))]}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				first = err
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return first
}

// cycles: -cycle.
var cycles bool

// fetchTimes is a kgo hook that keeps, for each Fetch, how long it was in flight (from its
// write to the end of its answer's read) and the answer's size.
type fetchTimes struct {
	mu    sync.Mutex
	first time.Time
	e2e   []time.Duration
	bytes []int
}

func (f *fetchTimes) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if key != 1 || e.WriteErr != nil || e.ReadErr != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first.IsZero() {
		f.first = time.Now().Add(-e.DurationE2E())
	}
	f.e2e = append(f.e2e, e.DurationE2E())
	f.bytes = append(f.bytes, e.BytesRead)
}

// report says what share of the time since the first fetch began a fetch was in flight.
func (f *fetchTimes) report(group string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	wall := time.Since(f.first)
	var inFlight time.Duration
	for _, d := range f.e2e {
		inFlight += d
	}
	slices.Sort(f.e2e)
	slices.Sort(f.bytes)
	if len(f.e2e) == 0 {
		return group + ": no fetch"
	}
	return fmt.Sprintf("%s: %.2f s from the first fetch, a fetch in flight %.0f%% of it; %d fetches, median %.2f ms and %d KiB",
		group, wall.Seconds(), 100*inFlight.Seconds()/wall.Seconds(), len(f.e2e),
		float64(f.e2e[len(f.e2e)/2].Microseconds())/1000, f.bytes[len(f.bytes)/2]>>10)
}

func read(ctx context.Context, addr, topic, group string, records int64) error {
	times := &fetchTimes{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.WithHooks(times))
	if err != nil {
		return err
	}
	defer cl.Close()
	if cycles {
		defer func() { fmt.Fprintln(os.Stderr, times.report(group)) }()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var got int64
	for got < records {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("group %s read %d of %d records: %w", group, got, records, err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("group %s: %w", group, errs[0].Err)
		}
		got += int64(fs.NumRecords())
	}
	return nil
}

// cpu is the gateway's process_cpu_seconds_total.
func cpu(metrics string) (float64, error) {
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no process_cpu_seconds_total at %s", metrics)
}
