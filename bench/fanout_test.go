package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// fanRep is one round of a fan-out case: tail-baseline and tail at the given
// broker CPU seconds per GB, one group at oneCPU seconds and the group
// phases at turnCPU and onceCPU seconds, over 1 GB of topic.
func fanRep(produce, tail, oneCPU, turnCPU, onceCPU float64) workload.Report {
	ph := func(name string, gb, cpu float64) workload.Phase {
		return workload.Phase{Name: name, Records: 1000, Bytes: int64(gb * 1e9), Seconds: 1, ClientCPU: 1, BrokerCPU: cpu}
	}
	return workload.Report{Phases: []workload.Phase{
		ph("produce", 1, 9), ph("consume", 1, 1), ph(workload.OneGroup, 1, oneCPU),
		ph(workload.GroupsTurn, 4, turnCPU), ph(workload.GroupsOnce, 4, onceCPU),
		ph(workload.TailAlone, 1, produce), ph(workload.TailConsume, 1, tail),
	}}
}

func TestFanOutGoals(t *testing.T) {
	cfg := Default()
	cfg.Kinds = []string{workload.Random}
	name := FanOutName(workload.Random)
	// Three rounds: the medians of the per-round figures are 4 × one group's
	// in turn (2/0.5, 4/1, 6/1.5) and 1.25 at once; the tail consumer
	// adds 0.5, 0.2 and 0.4 s/GB to produce.
	r := &Results{Config: cfg, Systems: []string{Gateway, Kfake}, Runs: map[string]map[string][]workload.Report{name: {
		Gateway: {fanRep(2, 2.5, 0.5, 2, 0.5), fanRep(1, 1.2, 1, 4, 1.25), fanRep(3, 3.4, 1.5, 6, 3)},
	}}}
	gs := r.Goals()
	for _, tc := range []struct {
		text    string
		value   float64
		verdict string
	}{
		{"fan-out: gateway CPU for 4 groups in turn ≤ 1.5 × one group's, 1 KiB random", 4, "missed by 2.50 (167%)"},
		{"fan-out: gateway CPU for 4 groups at once ≤ 1.5 × one group's, 1 KiB random", 1.25, "met"},
		{"tail: a consumer keeping up with the producer costs the gateway ≤ 0.3 CPU s/GB, 1 KiB random", 0.4, "missed by 0.10 s/GB (33%)"},
	} {
		g := goalNamed(t, gs, tc.text)
		if !g.Measured() || math.Abs(g.Value-tc.value) > 1e-9 || g.Verdict() != tc.verdict {
			t.Errorf("%s: value %v verdict %q (%q), want %v %q", tc.text, g.Value, g.Verdict(), g.Unmeasured, tc.value, tc.verdict)
		}
	}
	if g := goalNamed(t, gs, "tail: a consumer keeping up with the producer costs the gateway ≤ 0.3 CPU s/GB, 1 KiB random"); g.Detail != "produce with it 2.50 less produce alone 2.00" {
		t.Errorf("tail detail %q", g.Detail)
	}
	var md strings.Builder
	if err := r.WriteMarkdown(&md, ""); err != nil {
		t.Fatal(err)
	}
	if row := "| fan-out, 1 KiB random | groups-in-turn | " + systemLabel[Gateway] + " | 4000 (4000–4000) | 1.00 | 4.00 | 4.00 |"; !strings.Contains(md.String(), row) {
		t.Errorf("fan-out table lacks %q:\n%s", row, md.String())
	}

	r.Config.FanOut = 0
	for _, g := range r.Goals() {
		if strings.HasPrefix(g.Text, "fan-out:") || strings.HasPrefix(g.Text, "tail:") {
			if g.Measured() || !strings.Contains(g.Verdict(), "-fanout 0") {
				t.Errorf("%s without fan-out cases: %q", g.Text, g.Verdict())
			}
		}
	}
}

// TestTailCostPairsEveryRun: the consumer's share is the median over every pair of tail phases
// of every round, the i-th tail with the i-th baseline, whichever ran first.
func TestTailCostPairsEveryRun(t *testing.T) {
	ph := func(name string, cpu float64) workload.Phase {
		return workload.Phase{Name: name, Records: 1000, Bytes: 1e9, Seconds: 1, ClientCPU: 1, BrokerCPU: cpu}
	}
	alone, tail := workload.TailAlone, workload.TailConsume
	name := FanOutName(workload.Random)
	r := &Results{Config: Default(), Systems: []string{Gateway}, Runs: map[string]map[string][]workload.Report{name: {Gateway: {
		// Pairs adding 0.5, 0.4 and 0.9, the second with the tail first.
		{Phases: []workload.Phase{ph(alone, 2), ph(tail, 2.5), ph(tail, 3.4), ph(alone, 3.0), ph(alone, 1), ph(tail, 1.9)}},
		// One pair adding 0.2.
		{Phases: []workload.Phase{ph(alone, 4), ph(tail, 4.2)}},
	}}}}
	cost, withTail, produceAlone, ok := r.TailCost(name, Gateway)
	// Differences 0.2, 0.4, 0.5, 0.9; tails 1.9, 2.5, 3.4, 4.2; baselines 1, 2, 3, 4.
	if !ok || math.Abs(cost-0.45) > 1e-9 || math.Abs(withTail-2.95) > 1e-9 || math.Abs(produceAlone-2.5) > 1e-9 {
		t.Errorf("TailCost = %v, %v, %v, %v; want 0.45, 2.95, 2.5, true", cost, withTail, produceAlone, ok)
	}
}
