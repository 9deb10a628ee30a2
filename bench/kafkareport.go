package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// writeKafkaSetup says how Apache Kafka ran, with the log flush settings
// its broker logged.
func (r *Results) writeKafkaSetup(b *strings.Builder) {
	if !slices.Contains(r.Systems, Kafka) {
		return
	}
	var flush []string
	for _, k := range kafkaFlushKeys {
		flush = append(flush, fmt.Sprintf("%s=%s", k, r.KafkaFlush[k]))
	}
	fmt.Fprintf(b, "Apache Kafka %s: one KRaft node (broker and controller in one JVM, a process of its own, fresh each round),"+
		" -Xms%s -Xmx%s with kafka-run-class.sh's G1 options, the server.properties Kafka ships for one node"+
		" (group.initial.rebalance.delay.ms=0) on free loopback ports, its log beside serve's store;"+
		" warmed up before the round's first case by an untimed franz-go produce and consume of %s, so that its JIT has compiled the hot paths."+
		" No log.flush setting is given; the broker logged %s, Kafka's defaults: it fsyncs a segment when it rolls and at shutdown"+
		" and leaves the rest to the page cache, as serve with `--fsync never` leaves everything.\n",
		r.KafkaVersion, KafkaHeap, KafkaHeap, sizeText(kafkaWarmBytes(r.Config)), strings.Join(flush, ", "))
}

// sizeText is a byte count in whole MiB, or KiB below one MiB.
func sizeText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// PerfFigures are the medians over the rounds of one payload kind's
// perf-test runs against one system. MiB/s are the tools' own (2^20
// bytes); latencies are the producer's, in ms.
type PerfFigures struct {
	ProduceRecordsPerSec, MinProduce, MaxProduce float64
	ProduceMiBPerSec, ProduceP50, ProduceP99     float64
	ConsumeRecordsPerSec, MinConsume, MaxConsume float64
	ConsumeMiBPerSec, FetchRecordsPerSec         float64
	RebalanceMs                                  float64
	ProduceCPUPerGB, ConsumeCPUPerGB             float64
	Rounds                                       int
}

func perfPerRound(runs []PerfRun, f func(PerfRun) float64) []float64 {
	out := make([]float64, len(runs))
	for i, run := range runs {
		out[i] = f(run)
	}
	return out
}

// PerfFigures are the medians of one kind and system's perf-test runs.
func (r *Results) PerfFigures(kind, system string) PerfFigures {
	runs := r.Perf[kind][system]
	if len(runs) == 0 {
		return PerfFigures{}
	}
	med := func(f func(PerfRun) float64) float64 { return Median(perfPerRound(runs, f)) }
	prod := perfPerRound(runs, func(p PerfRun) float64 { return p.Produce.RecordsPerSec })
	cons := perfPerRound(runs, func(p PerfRun) float64 { return p.Consume.RecordsPerSec })
	return PerfFigures{
		ProduceRecordsPerSec: Median(prod), MinProduce: slices.Min(prod), MaxProduce: slices.Max(prod),
		ProduceMiBPerSec:     med(func(p PerfRun) float64 { return p.Produce.MiBPerSec }),
		ProduceP50:           med(func(p PerfRun) float64 { return p.Produce.P50 }),
		ProduceP99:           med(func(p PerfRun) float64 { return p.Produce.P99 }),
		ConsumeRecordsPerSec: Median(cons), MinConsume: slices.Min(cons), MaxConsume: slices.Max(cons),
		ConsumeMiBPerSec:   med(func(p PerfRun) float64 { return p.Consume.MiBPerSec }),
		FetchRecordsPerSec: med(func(p PerfRun) float64 { return p.Consume.FetchRecordsPerSec }),
		RebalanceMs:        med(func(p PerfRun) float64 { return p.Consume.RebalanceMs }),
		ProduceCPUPerGB:    med(func(p PerfRun) float64 { return p.ProduceCPU / (float64(p.ProduceBytes) / 1e9) }),
		ConsumeCPUPerGB:    med(func(p PerfRun) float64 { return p.ConsumeCPU / (float64(p.ConsumeBytes) / 1e9) }),
		Rounds:             len(runs),
	}
}

// The perf-test figures a ratio compares, per run.
var (
	perfProduce = func(p PerfRun) float64 { return p.Produce.RecordsPerSec }
	perfConsume = func(p PerfRun) float64 { return p.Consume.RecordsPerSec }
	perfFetch   = func(p PerfRun) float64 { return p.Consume.FetchRecordsPerSec }
)

// PerfRatio is the median over the rounds of the gateway's figure over
// Apache Kafka's in the same round; zero when either was not measured.
func (r *Results) PerfRatio(kind string, f func(PerfRun) float64) float64 {
	g, k := r.Perf[kind][Gateway], r.Perf[kind][Kafka]
	var q []float64
	for i := range min(len(g), len(k)) {
		if den := f(k[i]); den > 0 {
			q = append(q, f(g[i])/den)
		}
	}
	return Median(q)
}

// writePerf prints the perf-test runs and the gateway's ratios to Kafka.
func (r *Results) writePerf(b *strings.Builder) {
	c := r.Config
	if !c.PerfTest || len(r.Perf) == 0 {
		return
	}
	fmt.Fprintf(b, "\nKafka's own load tools, %d records of %d B per run (%d MiB), topic of %d partitions created beforehand:"+
		" `kafka-producer-perf-test --throughput -1 --payload-file F`, F holding %d lines of %d B (random: printable characters,"+
		" as the tool reads the file as text; json: the JSON-like values), then `kafka-consumer-perf-test --num-records N` in a"+
		" group of its own; each tool a JVM of its own (-Xmx512M) with the client's defaults (acks=all, idempotent, linger.ms 5,"+
		" batch.size 16384, no compression). MiB/s as the tools print them; consume is timed from creating the consumer (the"+
		" group's join included) to the last record, fetch leaves the join out; the broker's CPU includes the tool's JVM start:\n\n",
		c.CaseBytes/PerfSize, PerfSize, c.CaseBytes>>20, c.Partitions, perfLines(c.PoolBytes), PerfSize)
	b.WriteString("| payload | tool | system | records/s (min–max) | MiB/s | detail | broker CPU s/GB |\n|---|---|---|---|---|---|---|\n")
	for _, kind := range c.Kinds {
		for _, sys := range PerfSystems {
			f := r.PerfFigures(kind, sys)
			fmt.Fprintf(b, "| %s | producer | %s | %s (%s–%s) | %.1f | latency p50 %.0f ms, p99 %.0f ms | %.2f |\n", CaseName(PerfSize, kind),
				shortName(sys), human(f.ProduceRecordsPerSec), human(f.MinProduce), human(f.MaxProduce), f.ProduceMiBPerSec, f.ProduceP50, f.ProduceP99, f.ProduceCPUPerGB)
		}
		for _, sys := range PerfSystems {
			f := r.PerfFigures(kind, sys)
			fmt.Fprintf(b, "| %s | consumer | %s | %s (%s–%s) | %.1f | fetch %s records/s, join %.0f ms | %.2f |\n", CaseName(PerfSize, kind),
				shortName(sys), human(f.ConsumeRecordsPerSec), human(f.MinConsume), human(f.MaxConsume), f.ConsumeMiBPerSec, human(f.FetchRecordsPerSec), f.RebalanceMs, f.ConsumeCPUPerGB)
		}
	}
	b.WriteString("\n| payload | gateway / Apache Kafka: producer records/s | consumer records/s | consumer fetch records/s |\n|---|---|---|---|\n")
	for _, kind := range c.Kinds {
		fmt.Fprintf(b, "| %s | %.2f | %.2f | %.2f |\n", CaseName(PerfSize, kind),
			r.PerfRatio(kind, perfProduce), r.PerfRatio(kind, perfConsume), r.PerfRatio(kind, perfFetch))
	}
}

// kafkaGoals are issue 30's bar: the gateway at or above Apache Kafka on
// the same machine, produce and consume of 1 KiB random and JSON-like
// values with franz-go's defaults and with kafka-producer-perf-test (and
// its consumer), and a paced produce p99 at or under Kafka's.
func (r *Results) kafkaGoals() []Goal {
	var out []Goal
	hasKafka := slices.Contains(r.Systems, Kafka)
	for _, kind := range []string{workload.Random, workload.JSON} {
		name := CaseName(1024, kind)
		for _, ph := range Phases {
			g := Goal{Text: fmt.Sprintf("%s: gateway ≥ 1.0 × Apache Kafka, %s, franz-go", ph, name), Target: 1}
			switch {
			case !hasKafka:
				g.Unmeasured = "not measured: no Apache Kafka in this run (-kafka)"
			default:
				if g.Unmeasured = r.unmeasured(name, Kafka, ph); g.Measured() {
					g.Value = r.Ratio(name, Kafka, ph)
				}
			}
			out = append(out, g)
		}
		for _, tool := range []struct {
			name string
			f    func(PerfRun) float64
		}{{"kafka-producer-perf-test", perfProduce}, {"kafka-consumer-perf-test", perfConsume}} {
			g := Goal{Text: fmt.Sprintf("%s: gateway ≥ 1.0 × Apache Kafka, %s", tool.name, name), Target: 1}
			switch {
			case !r.Config.PerfTest || !hasKafka:
				g.Unmeasured = "not measured: no perf-test runs in this run (-perftest)"
			case !slices.Contains(r.Config.Kinds, kind) || len(r.Perf[kind][Gateway]) == 0 || len(r.Perf[kind][Kafka]) == 0:
				g.Unmeasured = "not measured: " + kind + " not in this run"
			default:
				g.Value = r.PerfRatio(kind, tool.f)
			}
			out = append(out, g)
		}
	}
	g := Goal{Text: "produce latency: gateway p99 ≤ Apache Kafka's p99", AtMost: true, Unit: "µs"}
	switch {
	case !hasKafka:
		g.Unmeasured = "not measured: no Apache Kafka in this run (-kafka)"
	case r.Config.LatencyRecords <= 0 || len(r.Config.Sizes) == 0 || len(r.Config.Kinds) == 0:
		g.Unmeasured = "not measured: no paced phase in this run"
	default:
		gw, k := r.Latency(Gateway), r.Latency(Kafka)
		if gw.Rounds == 0 || k.Rounds == 0 {
			g.Unmeasured = "not measured: no paced phase figures"
		}
		g.Value, g.Target = gw.P99*1e6, k.P99*1e6
		g.Text += fmt.Sprintf(" at %s records/s, %s", thousands(r.Config.LatencyRate), gw.Case)
	}
	return append(out, g)
}
