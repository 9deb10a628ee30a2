package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// txnRep is one round of the transactions case: the plain and the
// transactional produce at the given MB/s (1 s each; broker CPU 1 s and
// 2 s), the commits' p50 and p99 in µs, and the READ_COMMITTED read.
func txnRep(txnMB, plainMB, p50, p99 float64) workload.Report {
	ph := func(name string, mb, cpu float64) workload.Phase {
		return workload.Phase{Name: name, Records: 1000, Bytes: int64(mb * 1e6), Seconds: 1, ClientCPU: 1, BrokerCPU: cpu}
	}
	txn := ph(workload.TxnProduce, txnMB, 2)
	txn.P50, txn.P99 = p50/1e6, p99/1e6
	return workload.Report{Phases: []workload.Phase{ph("produce", plainMB, 1), txn, ph("consume", 500, 1)}}
}

// txnResults are three rounds whose figures are out of order, so that a
// median taken without sorting, a ratio of the medians (30/80 = 0.375)
// instead of the median of the per-round ratios (0.1, 0.5, 0.6), or a mean
// gives another number than the right one.
func txnResults() *Results {
	cfg := Default()
	cfg.Rounds = 3
	return &Results{Config: cfg, Systems: []string{Gateway, Kfake, Kafka, Native},
		Runs: map[string]map[string][]workload.Report{
			"transactions, 1 KiB random": {
				Gateway: {txnRep(10, 100, 300, 2000), txnRep(40, 80, 200, 9000), txnRep(30, 50, 500, 1000)},
				Kfake:   {txnRep(50, 100, 100, 400), txnRep(60, 200, 100, 500), txnRep(20, 40, 100, 300)},
				Kafka:   {txnRep(2, 100, 2000, 14000), txnRep(3, 150, 1900, 13000), txnRep(4, 100, 1800, 20000)},
			},
		}}
}

func TestTxnFigures(t *testing.T) {
	r := txnResults()
	f := r.Txn(Gateway)
	want := TxnFigures{TxnMBps: 30, MinTxnMBps: 10, MaxTxnMBps: 40, PlainMBps: 80, Ratio: 0.5,
		CommitP50: 300e-6, CommitP99: 2000e-6, MinCommitP99: 1000e-6, MaxCommitP99: 9000e-6,
		TxnCPUPerGB: 2 / 0.03, PlainCPUPerGB: 1 / 0.08, Rounds: 3}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"transactional MB/s", f.TxnMBps, want.TxnMBps}, {"min", f.MinTxnMBps, want.MinTxnMBps}, {"max", f.MaxTxnMBps, want.MaxTxnMBps},
		{"plain MB/s", f.PlainMBps, want.PlainMBps}, {"ratio", f.Ratio, want.Ratio},
		{"commit p50", f.CommitP50, want.CommitP50}, {"commit p99", f.CommitP99, want.CommitP99},
		{"min p99", f.MinCommitP99, want.MinCommitP99}, {"max p99", f.MaxCommitP99, want.MaxCommitP99},
		{"transactional CPU s/GB", f.TxnCPUPerGB, want.TxnCPUPerGB}, {"plain CPU s/GB", f.PlainCPUPerGB, want.PlainCPUPerGB},
	} {
		if !near(c.got, c.want) {
			t.Errorf("gateway %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if f.Rounds != 3 {
		t.Errorf("rounds %d, want 3", f.Rounds)
	}
	// kfake's per-round ratios 0.5, 0.3, 0.5: median 0.5; Kafka's 0.02,
	// 0.02, 0.04.
	if q := r.Txn(Kfake).Ratio; !near(q, 0.5) {
		t.Errorf("kfake ratio %v, want 0.5", q)
	}
	if q := r.Txn(Kafka).Ratio; !near(q, 0.02) {
		t.Errorf("Apache Kafka ratio %v, want 0.02", q)
	}
	if f := r.Txn(Native); f.Rounds != 0 {
		t.Errorf("native has transactions figures: %+v", f)
	}

	var md strings.Builder
	if err := r.WriteMarkdown(&md, ""); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{
		"| gateway (franz-go → Kafka port) | 30 (10–40) | 80 | 0.50 | 300 | 2000 (1000–9000) | 66.67 / 12.50 |",
		"| Apache Kafka (franz-go, one KRaft node, own JVM) | 3 (2–4) | 100 | 0.02 | 1900 | 14000 (13000–20000) | 666.67 / 10.00 |",
		// The gateway's transactional MB/s over kfake's per round: 0.2,
		// 0.67, 1.5; over Kafka's 5, 13.3, 7.5.
		"| txn-produce | 0.67 | 7.50 |",
		"| transactions: gateway transactional / plain produce, 100 records per transaction, stated | 0.50 (30 of 80 MB/s; kfake 0.50, Apache Kafka 0.02) | stated | met |",
		"| transactions: gateway commit p99 stated | 2000 µs (p50 300 µs; p99 kfake 400 µs, Apache Kafka 14000 µs) | stated | met |",
	} {
		if !strings.Contains(md.String(), row) {
			t.Errorf("markdown has no row %q:\n%s", row, md.String())
		}
	}

	// Without the case, its goals say why and its table is gone.
	r.Config.TxnRecords = 0
	for _, g := range r.txnGoals() {
		if g.Measured() || !strings.Contains(g.Verdict(), "-txn-records 0") {
			t.Errorf("%s without the case: measured %v, verdict %q", g.Text, g.Measured(), g.Verdict())
		}
	}
	md.Reset()
	if err := r.WriteMarkdown(&md, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "| txn-produce |") {
		t.Errorf("markdown has a transactions table without the case")
	}
}
