// Command tailcost measures what a consumer at the tail costs the gateway, the figure of the
// benchmark's tail phases (bench/fanout.go) alone, in a minute or two: per round and per serve
// binary, a fresh gateway on the embedded store, one franz-go producer sending -mib MiB of 1 KiB
// values with no consumer (tail-baseline), then as much again while a group-less consumer placed
// at the end offsets reads them as they come (tail). The gateway's CPU is read from /proc
// (workload.ProcCPU); the consumer's share is tail less tail-baseline, in CPU seconds per GB.
// Several binaries (-bin a,b) run in alternation, round by round, for a before/after comparison:
//
//	go build -o /tmp/new ./cmd/iggy-kafka
//	go run ./bench/cmd/tailcost -bin /tmp/old,/tmp/new -kinds json,random -rounds 5
//
// Each round line also has the fetch and produce requests the clients sent, the most records
// the consumer was behind the producer's acks, and the gateway's fetch counters over the tail
// phase (/metrics: which source answered). -prefill first produces as much to another topic and
// reads it back with a group, as the benchmark's fan-out case does before its tail phases.
//
// On 2 shared cores the share, a difference of two figures of about 4 s/GB, varies by ±0.4 s/GB
// from round to round; -perf FILE records the gateway with `perf record -g` during both phases
// of every round, and the samples of the fetch path and of the responses written, which only the
// consumer causes, say where its share goes with much less noise.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench"
	"github.com/iggy-kafka/iggy-kafka/bench/child"
	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

func main() {
	bins := flag.String("bin", "", "serve binaries (iggy-kafka), comma-separated, run in alternation; each may be followed by more serve flags after spaces (\"/tmp/a --tail-cache 64MiB\")")
	kinds := flag.String("kinds", "json,random", "payload kinds, comma-separated")
	mib := flag.Int("mib", 128, "MiB of 1 KiB values per phase")
	rounds := flag.Int("rounds", 3, "rounds")
	partitions := flag.Int("partitions", 3, "partitions of the topic")
	perf := flag.String("perf", "", "perf record -g the gateway into FILE.<round>.<binary index>.<kind>.<phase> during every phase")
	prefill := flag.Bool("prefill", false, "before the phases, produce as much to another topic and read it back with a consumer group, as the benchmark's fan-out case does")
	flag.Parse()
	if *bins == "" {
		fail(fmt.Errorf("-bin: no serve binary"))
	}
	if err := run(strings.Split(*bins, ","), strings.Split(*kinds, ","), *mib, *rounds, *partitions, *perf, *prefill); err != nil {
		fail(err)
	}
}

// figures are one round's phases on one binary.
type figures struct {
	alone, tail           float64 // gateway CPU s/GB
	fetches, produces     int64   // requests in the tail phase
	aloneProduces         int64
	tailSeconds, aloneSec float64
	sources               string // the gateway's fetch counters over the tail phase
	maxLag                int64  // records acked but not yet consumed, at most, as the consumer polled
}

func run(bins, kinds []string, mib, rounds, partitions int, perf string, prefill bool) error {
	ctx := context.Background()
	records := mib << 10
	res := map[string][]figures{}
	for r := range rounds {
		for _, kind := range kinds {
			pool, err := workload.NewPool(kind, 1024, workload.DefaultPoolBytes, 1)
			if err != nil {
				return err
			}
			for i, bin := range bins {
				rec := ""
				if perf != "" {
					rec = fmt.Sprintf("%s.%d.%d.%s", perf, r, i, kind)
				}
				f, err := round(ctx, bin, pool, records, partitions, rec, prefill)
				if err != nil {
					return fmt.Errorf("%s %s round %d: %w", bin, kind, r, err)
				}
				key := fmt.Sprintf("%d %s", i, kind)
				res[key] = append(res[key], f)
				fmt.Fprintf(os.Stderr, "round %d %s bin %d: alone %.3f tail %.3f share %.3f s/GB; fetches %d produces %d (alone %d); %.1fs %.1fs; max lag %d KiB;%s\n",
					r, kind, i, f.alone, f.tail, f.tail-f.alone, f.fetches, f.produces, f.aloneProduces, f.aloneSec, f.tailSeconds, f.maxLag, f.sources)
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load average: %s", load)
	fmt.Println("| binary | kind | alone s/GB | tail s/GB | consumer's share s/GB (min–max) | fetches | produces (alone) | share per fetch µs |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, kind := range kinds {
		for i, bin := range bins {
			fs := res[fmt.Sprintf("%d %s", i, kind)]
			var a, t, d, fe, pr, pa, per []float64
			gb := float64(int64(records)<<10) / 1e9
			for _, f := range fs {
				a, t, d = append(a, f.alone), append(t, f.tail), append(d, f.tail-f.alone)
				fe, pr, pa = append(fe, float64(f.fetches)), append(pr, float64(f.produces)), append(pa, float64(f.aloneProduces))
				per = append(per, (f.tail-f.alone)*gb/float64(f.fetches)*1e6)
			}
			fmt.Printf("| %s | %s | %.3f | %.3f | %.3f (%.3f–%.3f) | %.0f | %.0f (%.0f) | %.1f |\n", filepath.Base(bin), kind,
				bench.Median(a), bench.Median(t), bench.Median(d), slices.Min(d), slices.Max(d), bench.Median(fe), bench.Median(pr), bench.Median(pa), bench.Median(per))
		}
	}
	return nil
}

// round starts a fresh gateway from bin and runs both phases on it.
func round(ctx context.Context, bin string, pool *workload.Pool, records, partitions int, perf string, prefill bool) (figures, error) {
	var f figures
	dir, err := os.MkdirTemp("/dev/shm", "tailcost-")
	if err != nil {
		return f, err
	}
	defer os.RemoveAll(dir)
	addrs, err := child.FreeAddrs(3)
	if err != nil {
		return f, err
	}
	args := strings.Fields(bin)
	args = append([]string{"serve", "--bind", addrs[0], "--store-listen", addrs[1], "--data", dir,
		"--fsync", "never", "--log-level", "warn", "--default-partitions", strconv.Itoa(partitions), "--metrics-addr", addrs[2]}, args[1:]...)
	cmd := exec.CommandContext(ctx, strings.Fields(bin)[0], args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return f, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	var reqs counter
	deadline := time.Now().Add(10 * time.Second)
	var adm *kadm.Client
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs[0]))
		if err == nil {
			adm = kadm.NewClient(cl)
			_, err = adm.CreateTopic(ctx, int32(partitions), 1, nil, "tail")
			if err == nil {
				break
			}
			cl.Close()
		}
		if time.Now().After(deadline) {
			return f, fmt.Errorf("gateway not ready: %v\n%s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer adm.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addrs[0]), kgo.DefaultProduceTopic("tail"), kgo.WithHooks(&reqs))
	if err != nil {
		return f, err
	}
	defer prod.Close()
	for i := range 100 { // warm-up: metadata, producer id
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: pool.Value(pool.Len() - 1 - i)}).FirstErr(); err != nil {
			return f, err
		}
	}
	if prefill {
		// As in the benchmark's fan-out case, where group reads come before the tail phases:
		// another topic as large, produced and read back from the start by a consumer group.
		if err := fill(ctx, addrs[0], adm, pool, records, partitions); err != nil {
			return f, fmt.Errorf("prefill: %w", err)
		}
	}
	gb := float64(int64(records)*int64(pool.Size)) / 1e9

	stopPerf, err := startPerf(perf, "alone", pid)
	if err != nil {
		return f, err
	}
	w, err := workload.Begin(pid)
	if err != nil {
		return f, err
	}
	p0 := reqs.produce.Load()
	if err := produce(ctx, prod, pool, records); err != nil {
		return f, err
	}
	ph, err := w.End("alone", 0, 0)
	stopPerf()
	if err != nil {
		return f, err
	}
	f.alone, f.aloneSec, f.aloneProduces = ph.BrokerCPU/gb, ph.Seconds, reqs.produce.Load()-p0

	cons, err := workload.TailConsumer(ctx, addrs[0], "tail", partitions, adm, 30*time.Second, &reqs)
	if err != nil {
		return f, err
	}
	defer cons.Close()
	if stopPerf, err = startPerf(perf, "tail", pid); err != nil {
		return f, err
	}
	w, err = workload.Begin(pid)
	if err != nil {
		return f, err
	}
	p0, f0 := reqs.produce.Load(), reqs.fetch.Load()
	m0 := sources(addrs[2])
	var got int64
	var consErr error
	var wg sync.WaitGroup
	var acked atomic.Int64
	wg.Go(func() {
		for got < int64(records) && consErr == nil {
			fs := cons.PollFetches(ctx)
			if errs := fs.Errors(); len(errs) > 0 {
				consErr = errs[0].Err
			}
			got += int64(fs.NumRecords())
			f.maxLag = max(f.maxLag, acked.Load()-got)
		}
	})
	prodErr := workload.Produce(ctx, prod, pool, 0, records, 1, false, &acked)
	wg.Wait()
	ph, err = w.End("tail", 0, 0)
	stopPerf()
	switch {
	case err != nil:
		return f, err
	case prodErr != nil:
		return f, prodErr
	case consErr != nil:
		return f, consErr
	}
	f.tail, f.tailSeconds = ph.BrokerCPU/gb, ph.Seconds
	f.produces, f.fetches = reqs.produce.Load()-p0, reqs.fetch.Load()-f0
	m1 := sources(addrs[2])
	for _, k := range slices.Sorted(maps.Keys(m1)) {
		if d := m1[k] - m0[k]; d != 0 {
			f.sources += fmt.Sprintf(" %s %.0f", strings.TrimPrefix(k, "iggy_kafka_"), d)
		}
	}
	return f, nil
}

// fill produces records values to a topic of its own and reads them back from the start with a
// consumer group.
func fill(ctx context.Context, addr string, adm *kadm.Client, pool *workload.Pool, records, partitions int) error {
	if _, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, "fill"); err != nil {
		return err
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("fill"))
	if err != nil {
		return err
	}
	err = produce(ctx, prod, pool, records)
	prod.Close()
	if err != nil {
		return err
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("fill"), kgo.ConsumeTopics("fill"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cons.Close()
	for got := 0; got < records; {
		fs := cons.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			return errs[0].Err
		}
		got += fs.NumRecords()
	}
	return nil
}

// startPerf records pid with perf into file.phase until the returned stop; nothing when file is "".
func startPerf(file, phase string, pid int) (stop func(), err error) {
	if file == "" {
		return func() {}, nil
	}
	rec := exec.Command("perf", "record", "-q", "-g", "-o", file+"."+phase, "-p", strconv.Itoa(pid))
	rec.Stderr = os.Stderr
	if err := rec.Start(); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // perf takes a moment to attach to every thread
	return func() {
		_ = rec.Process.Signal(os.Interrupt)
		_ = rec.Wait()
	}, nil
}

// sources are the gateway's fetch counters (iggy_kafka_*fetch*) from its /metrics; none when
// they cannot be read.
func sources(addr string) map[string]float64 {
	out := map[string]float64{}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "iggy_kafka_") || !strings.Contains(name, "fetch") {
			continue
		}
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = x
		}
	}
	return out
}

func produce(ctx context.Context, prod *kgo.Client, pool *workload.Pool, records int) error {
	return workload.Produce(ctx, prod, pool, 0, records, 1, false, nil)
}

// counter counts the produce and fetch requests written.
type counter struct{ produce, fetch atomic.Int64 }

func (c *counter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	switch key {
	case 0:
		c.produce.Add(1)
	case 1:
		c.fetch.Add(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tailcost:", err)
	os.Exit(1)
}
