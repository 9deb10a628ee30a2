package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// Figures are one phase's medians over the rounds (over every time it ran, for the phases
// that run several times in a round).
type Figures struct {
	MBps, MinMBps, MaxMBps float64 // payload MB/s (1e6 bytes)
	RecordsPerSec          float64
	BrokerCPUPerGB         float64 // CPU seconds of the broker process per GB of payload
	ClientCPUPerGB         float64 // CPU seconds of the client process per GB of payload
	Rounds                 int
}

// perRound is f of every run of phase, round after round.
func perRound(reps []workload.Report, phase string, f func(workload.Phase) float64) []float64 {
	var out []float64
	for _, r := range reps {
		for _, p := range r.Phases {
			if p.Name == phase {
				out = append(out, f(p))
			}
		}
	}
	return out
}

func mbps(p workload.Phase) float64 { return float64(p.Bytes) / p.Seconds / 1e6 }

// Median is the middle value (the mean of the two middle ones for an even
// count); zero for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Figures are the medians of one case, system and phase.
func (r *Results) Figures(caseName, system, phase string) Figures {
	reps := r.Runs[caseName][system]
	mb := perRound(reps, phase, mbps)
	if len(mb) == 0 {
		return Figures{}
	}
	return Figures{
		MBps: Median(mb), MinMBps: slices.Min(mb), MaxMBps: slices.Max(mb),
		RecordsPerSec:  Median(perRound(reps, phase, func(p workload.Phase) float64 { return float64(p.Records) / p.Seconds })),
		BrokerCPUPerGB: Median(perRound(reps, phase, func(p workload.Phase) float64 { return p.BrokerCPU / (float64(p.Bytes) / 1e9) })),
		ClientCPUPerGB: Median(perRound(reps, phase, func(p workload.Phase) float64 { return p.ClientCPU / (float64(p.Bytes) / 1e9) })),
		Rounds:         roundsWith(reps, phase),
	}
}

// roundsWith is how many of reps ran phase (the tail phases run several times in one).
func roundsWith(reps []workload.Report, phase string) int {
	n := 0
	for _, r := range reps {
		if slices.ContainsFunc(r.Phases, func(p workload.Phase) bool { return p.Name == phase }) {
			n++
		}
	}
	return n
}

// Ratio is the median over the rounds of the gateway's MB/s divided by
// other's in the same round, so that drift of the machine's load between
// rounds cancels; zero when other was not measured.
func (r *Results) Ratio(caseName, other, phase string) float64 {
	return r.PairRatio(caseName, Gateway, caseName, other, phase)
}

// PairRatio is the median over the rounds of system a's MB/s in case ca
// divided by system b's in case cb in the same round; zero when either was
// not measured.
func (r *Results) PairRatio(ca, a, cb, b, phase string) float64 {
	return pairedRatio(perRound(r.Runs[ca][a], phase, mbps), perRound(r.Runs[cb][b], phase, mbps))
}

// pairedRatio is the median of a[i]/b[i] over the rounds both have, those
// where b[i] is above zero; zero for none.
func pairedRatio(a, b []float64) float64 {
	var q []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			q = append(q, a[i]/b[i])
		}
	}
	return Median(q)
}

// Cases are the case names in the order the run measured them.
func (r *Results) Cases() []string {
	if r.Config.NoPayload {
		return nil
	}
	var out []string
	for _, size := range r.Config.Sizes {
		for _, kind := range r.Config.Kinds {
			out = append(out, CaseName(size, kind))
		}
	}
	return out
}

var systemLabel = map[string]string{
	Gateway: "gateway (franz-go → Kafka port)",
	Kfake:   "kfake (franz-go, own process)",
	Kafka:   "Apache Kafka (franz-go, one KRaft node, own JVM)",
	Native:  "native (iggy-kafka client → store port)",
	SDK:     "native (Iggy Go SDK → store port)",
}

// shortName names a system in a column header.
func shortName(sys string) string {
	if sys == Kafka {
		return "Apache Kafka"
	}
	return sys
}

// Phases are the two measured phases.
var Phases = []string{"produce", "consume"}

// WriteMarkdown prints the run as markdown: a header of settings and
// compression ratios, the figures table, the ratios table, the paced
// latency table, the scale table and the goals table.
func (r *Results) WriteMarkdown(w io.Writer, command string) error {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "Measured %s, %d rounds in %.0f s, %d CPUs (GOMAXPROCS %d)", r.Started.Format("2006-01-02 15:04"), c.Rounds, r.Elapsed.Seconds(), runtime.NumCPU(), runtime.GOMAXPROCS(0))
	if r.Revision != "" {
		fmt.Fprintf(&b, ", gateway at %s", r.Revision)
	}
	if command != "" {
		fmt.Fprintf(&b, ", `%s`", command)
	}
	b.WriteString(".\n")
	if !c.NoPayload {
		fmt.Fprintf(&b, "%d MiB of values per case, ", c.CaseBytes>>20)
	}
	fmt.Fprintf(&b, "%d partitions, native batches of %d KiB; serve with `--fsync never`, store in %s.\n",
		c.Partitions, c.BatchBytes>>10, dataDirLabel(c.DataDir))
	b.WriteString("Snappy ratio of each payload pool (1 MiB chunks):")
	sep := ""
	for _, size := range c.Sizes {
		for _, kind := range c.Kinds {
			name := CaseName(size, kind)
			fmt.Fprintf(&b, "%s %s %.2f:1", sep, name, r.Snappy[name])
			sep = ","
		}
	}
	b.WriteString(".\n")
	r.writeKafkaSetup(&b)
	if rss := r.PeakRSS[Gateway]; len(rss) > 0 {
		fmt.Fprintf(&b, "Peak RSS per round (median): serve %d MiB, kfake %d MiB", int64(Median(int64s(rss)))>>20, int64(Median(int64s(r.PeakRSS[Kfake])))>>20)
		if k := r.PeakRSS[Kafka]; len(k) > 0 {
			fmt.Fprintf(&b, ", Apache Kafka %d MiB", int64(Median(int64s(k)))>>20)
		}
		b.WriteString(".\n")
	}
	if len(r.Cases()) > 0 {
		r.writeCases(&b)
	}
	r.writeLatency(&b)
	r.writePerf(&b)
	r.writeFanOut(&b)
	r.writeTxn(&b)
	r.writeScale(&b)
	r.writeGoals(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCases prints the payload cases: the figures table and the ratios
// table.
func (r *Results) writeCases(b *strings.Builder) {
	b.WriteString("\n| case | phase | system | MB/s (min–max) | records/s | broker CPU s/GB | client CPU s/GB |\n|---|---|---|---|---|---|---|\n")
	for _, name := range r.Cases() {
		for _, ph := range Phases {
			for _, sys := range r.Systems {
				f := r.Figures(name, sys, ph)
				fmt.Fprintf(b, "| %s | %s | %s | %.0f (%.0f–%.0f) | %s | %.2f | %.2f |\n",
					name, ph, systemLabel[sys], f.MBps, f.MinMBps, f.MaxMBps, human(f.RecordsPerSec), f.BrokerCPUPerGB, f.ClientCPUPerGB)
			}
		}
	}
	b.WriteString("\n| case | phase | gateway / kfake |")
	hasKafka, hasSDK := slices.Contains(r.Systems, Kafka), slices.Contains(r.Systems, SDK)
	if hasKafka {
		b.WriteString(" gateway / Apache Kafka |")
	}
	b.WriteString(" gateway / native (iggy-kafka client) |")
	if hasSDK {
		b.WriteString(" gateway / native (Iggy Go SDK) |")
	}
	b.WriteString("\n|---|---|---|---|")
	if hasKafka {
		b.WriteString("---|")
	}
	if hasSDK {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, name := range r.Cases() {
		for _, ph := range Phases {
			fmt.Fprintf(b, "| %s | %s | %.2f |", name, ph, r.Ratio(name, Kfake, ph))
			if hasKafka {
				fmt.Fprintf(b, " %.2f |", r.Ratio(name, Kafka, ph))
			}
			fmt.Fprintf(b, " %.2f |", r.Ratio(name, Native, ph))
			if hasSDK {
				fmt.Fprintf(b, " %.2f |", r.Ratio(name, SDK, ph))
			}
			b.WriteString("\n")
		}
	}
}

// LatencyFigures are the medians over the rounds of a system's paced
// produce phase: p50 and p99 send-to-ack latency in seconds, and the
// range of the p99s.
type LatencyFigures struct {
	P50, P99, MinP99, MaxP99 float64
	Case                     string
	Rounds                   int
}

// Latency is the paced phase's figures for one system.
func (r *Results) Latency(system string) LatencyFigures {
	name := CaseName(r.Config.Sizes[0], r.Config.Kinds[0])
	reps := r.Runs[name][system]
	p99 := perRound(reps, workload.Latency, func(p workload.Phase) float64 { return p.P99 })
	if len(p99) == 0 {
		return LatencyFigures{Case: name}
	}
	return LatencyFigures{
		P50:    Median(perRound(reps, workload.Latency, func(p workload.Phase) float64 { return p.P50 })),
		P99:    Median(p99),
		MinP99: slices.Min(p99), MaxP99: slices.Max(p99),
		Case: name, Rounds: len(p99),
	}
}

func (r *Results) writeLatency(b *strings.Builder) {
	if r.Config.LatencyRecords <= 0 {
		return
	}
	gw := r.Latency(Gateway)
	fmt.Fprintf(b, "\nProduce latency, %s, %d records one at a time at %d/s, each waited for (franz-go with linger 0; native: one message per send):\n\n",
		gw.Case, r.Config.LatencyRecords, r.Config.LatencyRate)
	b.WriteString("| system | p50 µs | p99 µs (min–max) | gateway p99 / this p99 |\n|---|---|---|---|\n")
	for _, sys := range r.Systems {
		f := r.Latency(sys)
		q := 0.0
		if f.P99 > 0 {
			q = gw.P99 / f.P99
		}
		fmt.Fprintf(b, "| %s | %.0f | %.0f (%.0f–%.0f) | %.2f |\n", systemLabel[sys], f.P50*1e6, f.P99*1e6, f.MinP99*1e6, f.MaxP99*1e6, q)
	}
}

func dataDirLabel(d string) string {
	if d == "" {
		return "the system temp directory"
	}
	return "`" + d + "`"
}

func int64s(xs []int64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func human(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.0f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// writeScale prints the scale points: each system's MB/s, the gateway
// against kfake, and the gateway against its own one-producer figure.
func (r *Results) writeScale(b *strings.Builder) {
	c := r.Config
	if len(c.Scale) == 0 {
		return
	}
	base, hasBase := r.ScaleBaseline()
	fmt.Fprintf(b, "\nScale, %s values, %d MiB per point; P × N is P producers over a topic of N partitions"+
		" (franz-go: a client per producer, one group-less consumer; native: a connection per producer, each sending to"+
		" and polling its share of the partitions); idle connections have spoken once (ApiVersions, or a token login on"+
		" the store port) and stay open through both phases:\n\n", CaseName(ScaleSize, ScaleKind), c.ScaleBytes>>20)
	b.WriteString("| point | phase |")
	for _, sys := range r.ScaleSystems() {
		fmt.Fprintf(b, " %s MB/s (min–max) |", shortName(sys))
	}
	b.WriteString(" gateway / kfake |")
	hasKafka := slices.Contains(r.Systems, Kafka)
	if hasKafka {
		b.WriteString(" gateway / Apache Kafka |")
	}
	if hasBase {
		fmt.Fprintf(b, " gateway / gateway at %s |", base.Name())
	}
	b.WriteString(" gateway CPU s/GB |")
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(r.ScaleSystems())+2))
	if hasKafka {
		b.WriteString("---|")
	}
	if hasBase {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, pt := range c.Scale {
		for _, ph := range Phases {
			fmt.Fprintf(b, "| %s | %s |", pt.Name(), ph)
			for _, sys := range r.ScaleSystems() {
				f := r.Figures(pt.Name(), sys, ph)
				fmt.Fprintf(b, " %.0f (%.0f–%.0f) |", f.MBps, f.MinMBps, f.MaxMBps)
			}
			fmt.Fprintf(b, " %.2f |", r.Ratio(pt.Name(), Kfake, ph))
			if hasKafka {
				fmt.Fprintf(b, " %.2f |", r.Ratio(pt.Name(), Kafka, ph))
			}
			if hasBase {
				fmt.Fprintf(b, " %.2f |", r.PairRatio(pt.Name(), Gateway, base.Name(), Gateway, ph))
			}
			fmt.Fprintf(b, " %.2f |", r.Figures(pt.Name(), Gateway, ph).BrokerCPUPerGB)
			b.WriteString("\n")
		}
	}
}
