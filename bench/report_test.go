package bench

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

func TestMedianAndPairedRatio(t *testing.T) {
	if m := Median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("median of 5 1 3 = %v", m)
	}
	if m := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 1 3 2 = %v", m)
	}
	phase := func(mb float64) workload.Report {
		return workload.Report{Phases: []workload.Phase{{Name: "produce", Records: 1, Bytes: int64(mb * 1e6), Seconds: 1, ClientCPU: 1, BrokerCPU: 2}}}
	}
	// The gateway is twice kfake in two rounds of three: the median of the
	// per-round ratios is 2, while the ratio of the two medians would be 1.
	r := &Results{Runs: map[string]map[string][]workload.Report{"c": {
		Gateway: {phase(10), phase(20), phase(40)},
		Kfake:   {phase(5), phase(40), phase(20)},
	}}}
	if q := r.Ratio("c", Kfake, "produce"); q != 2 {
		t.Errorf("paired ratio %v, want 2", q)
	}
	f := r.Figures("c", Gateway, "produce")
	if f.MBps != 20 || f.MinMBps != 10 || f.MaxMBps != 40 || f.Rounds != 3 {
		t.Errorf("figures %+v", f)
	}
	if f.BrokerCPUPerGB != 2/0.02 {
		t.Errorf("broker CPU per GB %v, want %v", f.BrokerCPUPerGB, 2/0.02)
	}
	if q := r.Ratio("c", Native, "produce"); q != 0 {
		t.Errorf("ratio against an unmeasured system %v, want 0", q)
	}
}
