package bench

import (
	"fmt"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// The fan-out goals of issue 20.
const (
	// fanOutGoal is the most broker CPU that FanOut groups may cost,
	// in turn or at once, as a multiple of one group's on the same data.
	fanOutGoal = 1.5
	// tailGoal is the most broker CPU, in seconds per GB, that a consumer
	// at the tail may add to what the producer alone costs.
	tailGoal = 0.3
)

// phaseOf is a report's phase of that name.
func phaseOf(rep workload.Report, name string) (workload.Phase, bool) {
	for _, p := range rep.Phases {
		if p.Name == name {
			return p, true
		}
	}
	return workload.Phase{}, false
}

// phasesOf is every phase of rep named name, in the order they ran.
func phasesOf(rep workload.Report, name string) []workload.Phase {
	var out []workload.Phase
	for _, p := range rep.Phases {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

func cpuPerGB(p workload.Phase) float64 { return p.BrokerCPU / (float64(p.Bytes) / 1e9) }

// GroupCPURatio is the median over the rounds of the broker's CPU seconds
// in a group phase of a fan-out case (workload.GroupsTurn or GroupsOnce)
// over its CPU seconds for one group (workload.OneGroup) in the same
// round; both read the same topic, so this is also the ratio of CPU per
// GB of the topic. Zero when not measured.
func (r *Results) GroupCPURatio(caseName, system, phase string) float64 {
	var q []float64
	for _, rep := range r.Runs[caseName][system] {
		one, ok1 := phaseOf(rep, workload.OneGroup)
		many, ok2 := phaseOf(rep, phase)
		if ok1 && ok2 && one.BrokerCPU > 0 {
			q = append(q, many.BrokerCPU/one.BrokerCPU)
		}
	}
	return Median(q)
}

// TailCost is what a consumer at the tail costs the broker, in CPU
// seconds per GB: for each pair of tail phases of a round (the i-th
// workload.TailConsume with the i-th workload.TailAlone, run next to each
// other), the broker's CPU per GB while one producer sends with the tail
// consumer reading less its CPU per GB while the same producer sends as
// much with no consumer; the median over every pair of every round, with
// the medians of both terms. ok is false when not measured.
func (r *Results) TailCost(caseName, system string) (cost, withTail, produceAlone float64, ok bool) {
	var d, wt, pa []float64
	for _, rep := range r.Runs[caseName][system] {
		tails, alones := phasesOf(rep, workload.TailConsume), phasesOf(rep, workload.TailAlone)
		for i := range min(len(tails), len(alones)) {
			tail, prod := tails[i], alones[i]
			if tail.Bytes > 0 && prod.Bytes > 0 {
				wt = append(wt, cpuPerGB(tail))
				pa = append(pa, cpuPerGB(prod))
				d = append(d, cpuPerGB(tail)-cpuPerGB(prod))
			}
		}
	}
	if len(d) == 0 {
		return 0, 0, 0, false
	}
	return Median(d), Median(wt), Median(pa), true
}

// writeFanOut prints the fan-out cases: per system and phase the MB/s read
// (all groups together), the broker's CPU per GB read and per GB of the
// topic, and the group phases' CPU over one group's.
func (r *Results) writeFanOut(b *strings.Builder) {
	c := r.Config
	if len(r.FanOutCases()) == 0 {
		return
	}
	fmt.Fprintf(b, "\nFan-out, %d MiB of %s values per case, %d partitions: after the produce and group-less consume phases,"+
		" one consumer group reads a topic from the start, then %d fresh groups one after another read another, then %d at once a third"+
		" (each topic as large as the case's, produced just before its phase outside the timed window and read by nobody before)"+
		" (each group a franz-go client of its own, goroutines of one client process); then, %d times in each round, one producer sends %d MiB more alone (tail-baseline) and %d MiB more"+
		" while a group-less consumer, placed at the end offsets beforehand, reads them as they come (tail), the baseline first in every other pair."+
		" MB/s counts what all groups read; \"per GB of the topic\" counts the topic once; the tail row's consumer share is"+
		" the median over every pair of its broker CPU per GB less that of the tail-baseline next to it, the same producer sending as much with no consumer:\n\n",
		c.FanOutBytes>>20, strings.TrimSpace(CaseName(FanOutSize, "")), c.Partitions, c.FanOut, c.FanOut, workload.TailPairs, c.FanOutBytes>>20, c.FanOutBytes>>20)
	b.WriteString("| case | phase | system | MB/s (min–max) | broker CPU s/GB read | broker CPU s/GB of the topic | broker CPU / one group's |\n|---|---|---|---|---|---|---|\n")
	for _, name := range r.FanOutCases() {
		for _, ph := range append([]string{"produce"}, workload.FanOutPhases...) {
			for _, sys := range r.FanOutSystems() {
				f := r.Figures(name, sys, ph)
				topic, vsOne := "–", "–"
				switch ph {
				case workload.OneGroup:
					topic, vsOne = fmt.Sprintf("%.2f", f.BrokerCPUPerGB), "1.00"
				case workload.GroupsTurn, workload.GroupsOnce:
					topic = fmt.Sprintf("%.2f", f.BrokerCPUPerGB*float64(c.FanOut))
					vsOne = fmt.Sprintf("%.2f", r.GroupCPURatio(name, sys, ph))
				case workload.TailConsume:
					if cost, _, _, ok := r.TailCost(name, sys); ok {
						topic = fmt.Sprintf("%.2f (consumer's share)", cost)
					}
				}
				fmt.Fprintf(b, "| %s | %s | %s | %.0f (%.0f–%.0f) | %.2f | %s | %s |\n",
					name, ph, systemLabel[sys], f.MBps, f.MinMBps, f.MaxMBps, f.BrokerCPUPerGB, topic, vsOne)
			}
		}
	}
	// The gateway's MB/s over each other broker's, paired by round.
	others := r.FanOutSystems()[1:]
	if len(others) == 0 {
		return
	}
	b.WriteString("\n| case | phase |")
	for _, sys := range others {
		fmt.Fprintf(b, " gateway / %s |", otherName[sys])
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(others)) + "\n")
	for _, name := range r.FanOutCases() {
		for _, ph := range append([]string{"produce"}, workload.FanOutPhases...) {
			fmt.Fprintf(b, "| %s | %s |", name, ph)
			for _, sys := range others {
				fmt.Fprintf(b, " %.2f |", r.Ratio(name, sys, ph))
			}
			b.WriteString("\n")
		}
	}
}

// fanOutGoals are issue 20's goal 4 on the gateway, per fan-out case:
// FanOut groups in turn and at once within fanOutGoal × one group's CPU,
// and a tail consumer within tailGoal CPU s/GB.
func (r *Results) fanOutGoals() []Goal {
	kinds := r.Config.Kinds
	n := r.Config.FanOut
	if n <= 0 {
		n = Default().FanOut
	}
	var out []Goal
	for _, kind := range kinds {
		name := FanOutName(kind)
		for _, ph := range []struct{ phase, how string }{{workload.GroupsTurn, "in turn"}, {workload.GroupsOnce, "at once"}} {
			g := Goal{Text: fmt.Sprintf("fan-out: gateway CPU for %d groups %s ≤ %.1f × one group's, %s", n, ph.how, fanOutGoal, CaseName(FanOutSize, kind)),
				Target: fanOutGoal, AtMost: true}
			switch {
			case r.Config.FanOut <= 0:
				g.Unmeasured = "not measured: no fan-out cases in this run (-fanout 0)"
			case !r.has(name, Gateway, ph.phase):
				g.Unmeasured = "not measured: no gateway figures"
			default:
				g.Value = r.GroupCPURatio(name, Gateway, ph.phase)
				g.Detail = fmt.Sprintf("%.2f s/GB of the topic against %.2f",
					r.Figures(name, Gateway, ph.phase).BrokerCPUPerGB*float64(n), r.Figures(name, Gateway, workload.OneGroup).BrokerCPUPerGB)
			}
			out = append(out, g)
		}
		g := Goal{Text: fmt.Sprintf("tail: a consumer keeping up with the producer costs the gateway ≤ %.1f CPU s/GB, %s", tailGoal, CaseName(FanOutSize, kind)),
			Target: tailGoal, AtMost: true, Unit: "s/GB"}
		cost, withTail, alone, ok := r.TailCost(name, Gateway)
		switch {
		case r.Config.FanOut <= 0:
			g.Unmeasured = "not measured: no fan-out cases in this run (-fanout 0)"
		case !ok:
			g.Unmeasured = "not measured: no gateway figures"
		default:
			g.Value = cost
			g.Detail = fmt.Sprintf("produce with it %.2f less produce alone %.2f", withTail, alone)
		}
		out = append(out, g)
	}
	return out
}
