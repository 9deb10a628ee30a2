package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// TxnFigures are one system's transactions case over the rounds: the
// medians of the transactional and the plain produce's MB/s (with the
// range of the rounds), the median of the per-round ratio of the two, and
// the medians of the per-round commit p50 and p99 (seconds), with the
// range of the p99s.
type TxnFigures struct {
	TxnMBps, MinTxnMBps, MaxTxnMBps float64
	PlainMBps                       float64
	Ratio                           float64 // transactional MB/s over plain, paired by round
	CommitP50, CommitP99            float64
	MinCommitP99, MaxCommitP99      float64
	// BrokerCPUPerGB of the transactional and the plain produce.
	TxnCPUPerGB, PlainCPUPerGB float64
	Rounds                     int
}

// Txn is a system's figures of the transactions case; zero Rounds when
// the run has none.
func (r *Results) Txn(system string) TxnFigures {
	name := r.TxnCase()
	if name == "" {
		return TxnFigures{}
	}
	reps := r.Runs[name][system]
	txn, plain := perRound(reps, workload.TxnProduce, mbps), perRound(reps, "produce", mbps)
	if len(txn) == 0 {
		return TxnFigures{}
	}
	p99 := perRound(reps, workload.TxnProduce, func(p workload.Phase) float64 { return p.P99 })
	return TxnFigures{
		TxnMBps: Median(txn), MinTxnMBps: slices.Min(txn), MaxTxnMBps: slices.Max(txn),
		PlainMBps:    Median(plain),
		Ratio:        pairedRatio(txn, plain),
		CommitP50:    Median(perRound(reps, workload.TxnProduce, func(p workload.Phase) float64 { return p.P50 })),
		CommitP99:    Median(p99),
		MinCommitP99: slices.Min(p99), MaxCommitP99: slices.Max(p99),
		TxnCPUPerGB:   Median(perRound(reps, workload.TxnProduce, cpuPerGB)),
		PlainCPUPerGB: Median(perRound(reps, "produce", cpuPerGB)),
		Rounds:        len(txn),
	}
}

// writeTxn prints the transactions case: per system the transactional and
// plain produce, their ratio and the commit latencies, then the gateway's
// transactional MB/s over the other brokers'.
func (r *Results) writeTxn(b *strings.Builder) {
	name := r.TxnCase()
	if name == "" || len(r.TxnSystems()) == 0 {
		return
	}
	c := r.Config
	fmt.Fprintf(b, "\nTransactions, %s records of %s values, %d partitions, franz-go: a plain producer (idempotent, not transactional)"+
		" sends them, then a transactional producer (a client of its own, warmed up by one transaction) sends the same records"+
		" %d to a transaction, flushed (no linger) and acked before each commit (EndTransaction), the next begun after it;"+
		" then a READ_COMMITTED consumer reads all of them back. Commit latencies are the EndTransaction calls'"+
		" (medians over the rounds of each round's p50 and p99 of %d commits); the ratio is paired by round:\n\n",
		thousands(c.TxnRecords), CaseName(TxnSize, TxnKind), c.Partitions, c.TxnBatch, (c.TxnRecords+c.TxnBatch-1)/c.TxnBatch)
	b.WriteString("| system | transactional MB/s (min–max) | plain MB/s | transactional / plain | commit p50 µs | commit p99 µs (min–max) | broker CPU s/GB, transactional / plain |\n|---|---|---|---|---|---|---|\n")
	for _, sys := range r.TxnSystems() {
		f := r.Txn(sys)
		fmt.Fprintf(b, "| %s | %.0f (%.0f–%.0f) | %.0f | %.2f | %.0f | %.0f (%.0f–%.0f) | %.2f / %.2f |\n",
			systemLabel[sys], f.TxnMBps, f.MinTxnMBps, f.MaxTxnMBps, f.PlainMBps, f.Ratio,
			f.CommitP50*1e6, f.CommitP99*1e6, f.MinCommitP99*1e6, f.MaxCommitP99*1e6, f.TxnCPUPerGB, f.PlainCPUPerGB)
	}
	others := r.TxnSystems()[1:]
	if len(others) == 0 || !slices.Contains(r.Systems, Gateway) {
		return
	}
	b.WriteString("\n| phase |")
	for _, sys := range others {
		fmt.Fprintf(b, " gateway / %s |", otherName[sys])
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(others)) + "\n")
	for _, ph := range []string{workload.TxnProduce, "produce"} {
		fmt.Fprintf(b, "| %s |", ph)
		for _, sys := range others {
			fmt.Fprintf(b, " %.2f |", r.Ratio(name, sys, ph))
		}
		b.WriteString("\n")
	}
}

// txnGoals are issue 27's figures, which it asks to state and sets no
// target for: the gateway's transactional produce over its plain produce,
// and its commit p99, each with the other brokers' beside it.
func (r *Results) txnGoals() []Goal {
	batch := r.Config.TxnBatch
	ratio := Goal{Text: fmt.Sprintf("transactions: gateway transactional / plain produce, %d records per transaction, stated", batch), Stated: true}
	p99 := Goal{Text: "transactions: gateway commit p99 stated", Unit: "µs", Stated: true}
	gw := r.Txn(Gateway)
	switch {
	case r.TxnCase() == "":
		ratio.Unmeasured = "not measured: no transactions case in this run (-txn-records 0)"
		p99.Unmeasured = ratio.Unmeasured
		return []Goal{ratio, p99}
	case gw.Rounds == 0:
		ratio.Unmeasured, p99.Unmeasured = "not measured: no gateway figures", "not measured: no gateway figures"
		return []Goal{ratio, p99}
	}
	ratio.Value, p99.Value = gw.Ratio, gw.CommitP99*1e6
	var ratios, p99s []string
	for _, sys := range r.TxnSystems() {
		if f := r.Txn(sys); sys != Gateway && f.Rounds > 0 {
			ratios = append(ratios, fmt.Sprintf("%s %.2f", otherName[sys], f.Ratio))
			p99s = append(p99s, fmt.Sprintf("%s %.0f µs", otherName[sys], f.CommitP99*1e6))
		}
	}
	ratio.Detail = fmt.Sprintf("%.0f of %.0f MB/s", gw.TxnMBps, gw.PlainMBps)
	if len(ratios) > 0 {
		ratio.Detail += "; " + strings.Join(ratios, ", ")
	}
	p99.Detail = fmt.Sprintf("p50 %.0f µs", gw.CommitP50*1e6)
	if len(p99s) > 0 {
		p99.Detail += "; p99 " + strings.Join(p99s, ", ")
	}
	return []Goal{ratio, p99}
}
