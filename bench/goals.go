package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/connmem"
	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// Goal is one target of issue 11 set against what a run measured.
type Goal struct {
	Text   string  // what the goal asks
	Value  float64 // measured, in Unit
	Target float64 // in Unit
	// AtMost says the value must not exceed Target (a latency); otherwise
	// it must reach it (a ratio).
	AtMost bool
	Unit   string // "" for a ratio, "µs", "s/GB"
	Detail string // context for the value, may be empty
	// Unmeasured, when set, is why the run has no value for the goal, as
	// the verdict column prints it.
	Unmeasured string
	// Stated says the goal asks only for the value: measured is met.
	Stated bool
}

// Measured says the run has a value for the goal.
func (g Goal) Measured() bool { return g.Unmeasured == "" }

// Met says the goal was measured and reached.
func (g Goal) Met() bool {
	if !g.Measured() {
		return false
	}
	if g.Stated {
		return true
	}
	if g.AtMost {
		return g.Value <= g.Target
	}
	return g.Value >= g.Target
}

// Verdict is "met", "missed by ..." with the gap absolute and relative to
// the target, or why the goal was not measured.
func (g Goal) Verdict() string {
	switch {
	case !g.Measured():
		return g.Unmeasured
	case g.Met():
		return "met"
	}
	gap := math.Abs(g.Value - g.Target)
	by := g.format(gap)
	if by == g.format(0) {
		// Below the printed precision: say so rather than "by 0.00".
		return "missed by less than " + g.format(g.unit())
	}
	rel := ""
	if g.Target != 0 {
		rel = fmt.Sprintf(" (%.0f%%)", 100*gap/g.Target)
	}
	return "missed by " + by + rel
}

// unit is the smallest step format prints.
func (g Goal) unit() float64 {
	switch g.Unit {
	case "µs":
		return 1
	case "MiB", "KiB":
		return 0.1
	}
	return 0.01
}

func (g Goal) format(v float64) string {
	switch g.Unit {
	case "µs":
		return fmt.Sprintf("%.0f µs", v)
	case "s/GB":
		return fmt.Sprintf("%.2f s/GB", v)
	case "MiB", "KiB":
		return fmt.Sprintf("%.1f %s", v, g.Unit)
	}
	return fmt.Sprintf("%.2f", v)
}

// ValueText is the measured column: the value and its detail.
func (g Goal) ValueText() string {
	if !g.Measured() {
		return "–"
	}
	s := g.format(g.Value)
	if s == g.format(g.Target) && g.Value != g.Target {
		// A miss or a pass that the printed precision would hide.
		s = fmt.Sprintf("%.4g", g.Value)
		if g.Unit != "" {
			s += " " + g.Unit
		}
	}
	if g.Detail != "" {
		s += " (" + g.Detail + ")"
	}
	return s
}

// TargetText is the target column.
func (g Goal) TargetText() string {
	if g.Stated {
		return "stated"
	}
	if g.Target == 0 && !g.Measured() {
		return "–"
	}
	if g.AtMost {
		return "≤ " + g.format(g.Target)
	}
	return "≥ " + g.format(g.Target)
}

// The cases of issue 11: the goals' own, then those on which the same
// ratios must hold within 20%.
var (
	goalCase   = CaseName(1024, workload.Random)
	alsoCases  = []string{CaseName(100, workload.Random), CaseName(1024, workload.JSON), CaseName(100, workload.JSON)}
	ratioGoals = []struct {
		phase, other string
		target       float64
	}{
		{"produce", SDK, 1.0}, {"produce", Kfake, 1.5},
		{"consume", SDK, 0.8}, {"consume", Kfake, 1.5},
	}
)

// alsoWithin is how far below its target a ratio of the other cases may
// fall: "the same ratios within 20%".
const alsoWithin = 0.8

// p99Goal is the latency goal in µs.
const p99Goal = 1000

// scaleWithin is the least share of the one-producer throughput a scale
// point must keep.
const scaleWithin = 0.8

var otherName = map[string]string{SDK: "the Iggy Go SDK", Kfake: "kfake", Native: "native (iggy-kafka client)", Kafka: "Apache Kafka"}

// has says the run measured phase of a case on a system.
func (r *Results) has(caseName, system, phase string) bool {
	return len(perRound(r.Runs[caseName][system], phase, mbps)) > 0
}

// unmeasured says why a case's phase on the gateway or other has no
// figures.
func (r *Results) unmeasured(caseName, other, phase string) string {
	switch {
	case other == SDK && !slices.Contains(r.Systems, SDK):
		return "not measured: no SDK in this run (-iggy-checkout)"
	case !r.has(caseName, Gateway, phase) && !r.has(caseName, other, phase):
		return "not measured: " + caseName + " not in this run"
	case !r.has(caseName, Gateway, phase):
		return "not measured: no gateway figures"
	case !r.has(caseName, other, phase):
		return "not measured: no " + other + " figures"
	}
	return ""
}

// Goals sets the run against issue 11's goals, one per row of the goals
// table, in the order. Ratios are medians of per-round ratios
// (Ratio); "the same ratios within 20%" is read as: on each of the other
// cases (100 B random, 1 KiB json, 100 B json) each ratio reaches 0.8 of
// its 1 KiB random target, and the detail says how it compares with the
// ratio measured on 1 KiB random. The memory goals come from the connmem runs after the rounds.
func (r *Results) Goals() []Goal {
	var out []Goal
	for _, rg := range ratioGoals {
		g := Goal{Text: fmt.Sprintf("%s: gateway ≥ %.1f × %s, %s", rg.phase, rg.target, otherName[rg.other], goalCase), Target: rg.target}
		if g.Unmeasured = r.unmeasured(goalCase, rg.other, rg.phase); g.Measured() {
			g.Value = r.Ratio(goalCase, rg.other, rg.phase)
		}
		out = append(out, g)
	}
	for _, name := range alsoCases {
		for _, rg := range ratioGoals {
			g := Goal{Text: fmt.Sprintf("%s: gateway ≥ %.1f × %s within 20%%, %s", rg.phase, rg.target, otherName[rg.other], name),
				Target: alsoWithin * rg.target}
			if g.Unmeasured = r.unmeasured(name, rg.other, rg.phase); g.Measured() {
				g.Value = r.Ratio(name, rg.other, rg.phase)
				if r.unmeasured(goalCase, rg.other, rg.phase) == "" {
					if base := r.Ratio(goalCase, rg.other, rg.phase); base > 0 {
						g.Detail = fmt.Sprintf("%.2f of %s's %.2f", g.Value/base, goalCase, base)
					}
				}
			}
			out = append(out, g)
		}
	}
	out = append(out, r.latencyGoals()...)
	out = append(out, r.scaleGoals()...)
	out = append(out, r.fanOutGoals()...)
	out = append(out, r.memoryGoals()...)
	out = append(out, r.kafkaGoals()...)
	out = append(out, r.txnGoals()...)
	return out
}

// memoryGoals are issue 11's memory goals from the connmem runs (Results.Memory): the median
// peak RSS while the producers send, against 256 MiB, and the median memory per idle
// connection, which the goal asks only to state.
func (r *Results) memoryGoals() []Goal {
	m := r.Config.Memory
	rss := Goal{Text: fmt.Sprintf("memory: gateway RSS < 256 MiB with %d concurrent producers", m.Producers), Target: 256, AtMost: true, Unit: "MiB"}
	conn := Goal{Text: "memory: per idle connection stated", Unit: "KiB", Stated: true}
	if len(r.Memory) == 0 {
		why := "not measured: no connmem runs in this run (-memory=false); see `go run ./bench/cmd/connmem`"
		rss.Unmeasured, conn.Unmeasured = why, why
		return []Goal{rss, conn}
	}
	peak := func(x connmem.Result) int64 { return x.Peak }
	lo, hi := r.Memory[0].Peak, r.Memory[0].Peak
	for _, x := range r.Memory {
		lo, hi = min(lo, x.Peak), max(hi, x.Peak)
	}
	rss.Value = float64(connmem.Median(r.Memory, peak)) / (1 << 20)
	runs := fmt.Sprintf("median of %d runs", len(r.Memory))
	if len(r.Memory) == 1 {
		runs = "one run"
	}
	rss.Detail = fmt.Sprintf("%s of %v, %.0f–%.0f MiB", runs, m.Duration, float64(lo)/(1<<20), float64(hi)/(1<<20))
	conn.Value = float64(connmem.Median(r.Memory, func(x connmem.Result) int64 { return x.PerConn })) / (1 << 10)
	conn.Detail = fmt.Sprintf("%d idle Kafka connections, %s", m.Conns, runs)
	return []Goal{rss, conn}
}

func (r *Results) latencyGoals() []Goal {
	rate := r.Config.LatencyRate
	at := ""
	if len(r.Config.Sizes) > 0 && len(r.Config.Kinds) > 0 {
		at = fmt.Sprintf(" at %s records/s, %s", thousands(rate), CaseName(r.Config.Sizes[0], r.Config.Kinds[0]))
	}
	abs := Goal{Text: "produce latency: gateway p99 ≤ 1 ms" + at, Target: p99Goal, AtMost: true, Unit: "µs"}
	rel := Goal{Text: "produce latency: gateway p99 ≤ kfake's p99" + at, AtMost: true, Unit: "µs"}
	if r.Config.LatencyRecords <= 0 || len(r.Config.Sizes) == 0 || len(r.Config.Kinds) == 0 {
		abs.Unmeasured, rel.Unmeasured = "not measured: no paced phase in this run", "not measured: no paced phase in this run"
		return []Goal{abs, rel}
	}
	gw, kf := r.Latency(Gateway), r.Latency(Kfake)
	if gw.Rounds == 0 {
		abs.Unmeasured = "not measured: no gateway figures"
	}
	abs.Value = gw.P99 * 1e6
	switch {
	case gw.Rounds == 0:
		rel.Unmeasured = "not measured: no gateway figures"
	case kf.Rounds == 0:
		rel.Unmeasured = "not measured: no kfake figures"
	}
	rel.Value, rel.Target = gw.P99*1e6, kf.P99*1e6
	return []Goal{abs, rel}
}

// ScaleBaseline is the first scale point with one producer and no idle
// connections: the single-producer figure the scale goals compare with.
func (r *Results) ScaleBaseline() (ScalePoint, bool) {
	for _, pt := range r.Config.Scale {
		if pt.Producers == 1 && pt.IdleConns == 0 {
			return pt, true
		}
	}
	return ScalePoint{}, false
}

// scaleGoals compare, on the gateway, the point with the most producers
// and the point with the most idle connections against the baseline.
func (r *Results) scaleGoals() []Goal {
	var most, idle ScalePoint
	for _, pt := range r.Config.Scale {
		if pt.IdleConns == 0 && pt.Producers*1000+pt.Partitions > most.Producers*1000+most.Partitions {
			most = pt
		}
		if pt.IdleConns > idle.IdleConns {
			idle = pt
		}
	}
	base, ok := r.ScaleBaseline()
	mostLabel, idleLabel := "16 producers over 96 partitions", "1,000 idle connections open"
	if most.Producers > 0 {
		mostLabel = fmt.Sprintf("%d producers over %d partitions", most.Producers, most.Partitions)
	}
	if idle.IdleConns > 0 {
		idleLabel = fmt.Sprintf("%s idle connections open", thousands(idle.IdleConns))
	}
	var out []Goal
	for _, want := range []struct {
		pt    ScalePoint
		label string
	}{{most, mostLabel}, {idle, idleLabel}} {
		for _, ph := range Phases {
			g := Goal{Text: fmt.Sprintf("scale: gateway %s with %s ≥ 0.8 × one producer", ph, want.label), Target: scaleWithin}
			switch {
			case len(r.Config.Scale) == 0:
				g.Unmeasured = "not measured: no scale points in this run (-scale=false)"
			case !ok || want.pt.Producers == 0 || want.pt == base:
				g.Unmeasured = "not measured: no such scale point in this run"
			case !r.has(want.pt.Name(), Gateway, ph) || !r.has(base.Name(), Gateway, ph):
				g.Unmeasured = "not measured: no gateway figures"
			default:
				g.Value = r.PairRatio(want.pt.Name(), Gateway, base.Name(), Gateway, ph)
				g.Detail = fmt.Sprintf("%s over %s", want.pt.Name(), base.Name())
			}
			out = append(out, g)
		}
	}
	return out
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// writeGoals prints the goals table.
func (r *Results) writeGoals(b *strings.Builder) {
	b.WriteString("\nGoals of issue 11, then issue 20's fan-out goals (broker CPU of the group phases over one group's, paired by round; the tail consumer's share of the broker's CPU per GB), the memory goals, issue 30's bar, Apache Kafka on the same machine, and last issue 27's transaction figures, which it asks only to state. Ratios are medians of the per-round ratios of the gateway's MB/s to the other's;" +
		" \"within 20%\" means each ratio of that case reaches 0.8 of its 1 KiB random target;" +
		" scale ratios are the gateway's MB/s at a point over its MB/s at the one-producer point.\n\n")
	b.WriteString("| goal | measured | target | verdict |\n|---|---|---|---|\n")
	for _, g := range r.Goals() {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.Text, g.ValueText(), g.TargetText(), g.Verdict())
	}
}
