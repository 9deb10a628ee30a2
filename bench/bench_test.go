package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/bench/connmem"
	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// TestQuickRun runs the whole runner on tiny cases, one round, so that the
// harness cannot rot unseen: every system, case and phase must report
// non-zero throughput and CPU for both processes, the compressible corpus
// must compress and the random one must not, and the table must hold a row
// for each. Three tiny scale points (one producer, two producers over six
// partitions, one producer beside 20 idle connections, which the clients
// check are still open after the phases) must report for the gateway,
// kfake and native, and land in the scale table, the goals table and the
// chart. The fan-out case of each kind (four groups over 1 MiB) must
// report every phase for the gateway and kfake and its goals be measured.
// The transactions case (300 records, 50 to a transaction, serve with
// --transactions) must give the gateway and kfake a transactional and a
// plain MB/s and commit latencies, read back READ_COMMITTED by the client.
// With IGGY_CHECKOUT set it measures the official SDK too; with
// BENCH_KAFKA=1 Apache Kafka and the perf-test runs (java and mvn needed,
// the first run downloads Kafka's jars: the test command leaves them
// out); with BENCH_REF set it builds the gateway from that git revision
// (for a working tree that another change has left half edited).
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gateway, kfake and the clients as processes")
	}
	cfg := Quick()
	cfg.Rounds = 1
	cfg.CaseBytes = 2 << 20
	cfg.PoolBytes = 2 << 20
	cfg.LatencyRecords = 200
	cfg.ClientTimeout = 30 * time.Second
	cfg.Scale = []ScalePoint{{1, 3, 0}, {2, 6, 0}, {1, 3, 20}}
	cfg.ScaleBytes = 1 << 20
	cfg.FanOutBytes = 1 << 20
	cfg.TxnRecords, cfg.TxnBatch = 300, 50
	cfg.Memory = connmem.Config{Runs: 1, Conns: 20, Producers: 4, Partitions: 4, Value: 1024, PoolSize: 16, Duration: 500 * time.Millisecond}
	cfg.IggyCheckout = os.Getenv("IGGY_CHECKOUT")
	cfg.Ref = os.Getenv("BENCH_REF")
	cfg.Kafka = os.Getenv("BENCH_KAFKA") == "1"
	cfg.PerfTest = cfg.Kafka
	// A guard against a hang, not a speed check: builds and a dozen child processes took 46 s at a
	// load average of 15.
	timeout := 2 * time.Minute
	if cfg.Kafka {
		timeout = 5 * time.Minute // a JVM broker started and stopped, and four tool JVMs per kind
	}
	cfg.DataDir = t.TempDir()
	var log strings.Builder
	cfg.Log = &log
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	want := []string{Gateway, Kfake}
	if cfg.Kafka {
		want = append(want, Kafka)
	}
	want = append(want, Native)
	if cfg.IggyCheckout != "" {
		want = append(want, SDK)
	}
	if fmt.Sprint(res.Systems) != fmt.Sprint(want) {
		t.Fatalf("systems %v, want %v", res.Systems, want)
	}
	var table strings.Builder
	if err := res.WriteMarkdown(&table, "test"); err != nil {
		t.Fatal(err)
	}
	if len(res.Memory) != 1 || res.Memory[0].Idle <= 0 || res.Memory[0].Peak < res.Memory[0].Idle {
		t.Errorf("memory runs %+v, want one with an idle and a peak RSS", res.Memory)
	}
	if row := "| memory: per idle connection stated | "; !strings.Contains(table.String(), row) || strings.Contains(table.String(), "no connmem runs") {
		t.Errorf("goals table does not give the memory goals their values:\n%s", table.String())
	}
	for _, size := range cfg.Sizes {
		r, j := res.Snappy[CaseName(size, workload.Random)], res.Snappy[CaseName(size, workload.JSON)]
		if r <= 0 || r > 1.02 {
			t.Errorf("%d B random values: snappy ratio %.2f, want about 1", size, r)
		}
		if j < 2.2 {
			t.Errorf("%d B json values: snappy ratio %.2f, want about 3", size, j)
		}
	}
	for _, name := range res.Cases() {
		for _, ph := range Phases {
			for _, sys := range res.Systems {
				f := res.Figures(name, sys, ph)
				if f.Rounds != 1 || f.MBps <= 0 || f.RecordsPerSec <= 0 || f.BrokerCPUPerGB <= 0 || f.ClientCPUPerGB <= 0 {
					t.Errorf("%s %s %s: %+v has a zero figure", name, ph, sys, f)
				}
				row := fmt.Sprintf("| %s | %s | %s |", name, ph, systemLabel[sys])
				if !strings.Contains(table.String(), row) {
					t.Errorf("table has no row %q", row)
				}
			}
			for _, other := range res.Systems[1:] {
				if q := res.Ratio(name, other, ph); q <= 0 {
					t.Errorf("%s %s: gateway/%s ratio %v", name, ph, other, q)
				}
			}
		}
	}
	for _, sys := range res.Systems {
		if l := res.Latency(sys); l.Rounds != 1 || l.P50 <= 0 || l.P99 < l.P50 {
			t.Errorf("%s latency: %+v", sys, l)
		}
	}
	for _, pt := range cfg.Scale {
		for _, ph := range Phases {
			for _, sys := range res.ScaleSystems() {
				if f := res.Figures(pt.Name(), sys, ph); f.Rounds != 1 || f.MBps <= 0 || f.BrokerCPUPerGB <= 0 {
					t.Errorf("scale %s %s %s: %+v has a zero figure", pt.Name(), ph, sys, f)
				}
			}
			if row := fmt.Sprintf("| %s | %s |", pt.Name(), ph); !strings.Contains(table.String(), row) {
				t.Errorf("table has no scale row %q", row)
			}
		}
	}
	for _, name := range res.FanOutCases() {
		for _, ph := range append([]string{"produce"}, workload.FanOutPhases...) {
			for _, sys := range res.FanOutSystems() {
				if f := res.Figures(name, sys, ph); f.Rounds != 1 || f.MBps <= 0 || f.BrokerCPUPerGB <= 0 {
					t.Errorf("%s %s %s: %+v has a zero figure", name, ph, sys, f)
				}
				if row := fmt.Sprintf("| %s | %s | %s |", name, ph, systemLabel[sys]); !strings.Contains(table.String(), row) {
					t.Errorf("table has no fan-out row %q", row)
				}
			}
		}
	}
	if len(res.FanOutCases()) != len(cfg.Kinds) {
		t.Errorf("fan-out cases %v, want one per kind", res.FanOutCases())
	}
	if len(res.TxnSystems()) < 2 {
		t.Errorf("transactions systems %v, want the gateway and kfake at least", res.TxnSystems())
	}
	for _, sys := range res.TxnSystems() {
		f := res.Txn(sys)
		if f.Rounds != 1 || f.TxnMBps <= 0 || f.PlainMBps <= 0 || f.Ratio <= 0 || f.CommitP50 <= 0 || f.CommitP99 < f.CommitP50 || f.TxnCPUPerGB <= 0 {
			t.Errorf("transactions %s: %+v has a zero figure", sys, f)
		}
		if row := fmt.Sprintf("| %s | %.0f (", systemLabel[sys], f.TxnMBps); !strings.Contains(table.String(), row) {
			t.Errorf("table has no transactions row %q", row)
		}
	}
	for _, g := range res.Goals() {
		if (strings.HasPrefix(g.Text, "scale:") || strings.HasPrefix(g.Text, "fan-out:") || strings.HasPrefix(g.Text, "tail:") ||
			strings.HasPrefix(g.Text, "transactions:")) && !g.Measured() {
			t.Errorf("goal %q not measured: %s", g.Text, g.Unmeasured)
		}
		if row := fmt.Sprintf("| %s | %s |", g.Text, g.ValueText()); !strings.Contains(table.String(), row) {
			t.Errorf("table has no goal row %q", row)
		}
	}
	var svg strings.Builder
	if err := res.WriteScaleSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), `<g class="series"`); n != len(res.ScaleSystems()) {
		t.Errorf("chart has %d series, want %d", n, len(res.ScaleSystems()))
	}
	if cfg.Kafka {
		if len(res.ScaleSystems()) != 4 || len(res.FanOutSystems()) != 3 {
			t.Errorf("scale systems %v, fan-out systems %v: Apache Kafka missing", res.ScaleSystems(), res.FanOutSystems())
		}
		if res.KafkaFlush["log.flush.interval.messages"] != "9223372036854775807" || res.KafkaFlush["log.flush.interval.ms"] != "null" {
			t.Errorf("Apache Kafka's flush settings %v, want its defaults", res.KafkaFlush)
		}
		for _, kind := range cfg.Kinds {
			for _, sys := range PerfSystems {
				f := res.PerfFigures(kind, sys)
				if f.Rounds != 1 || f.ProduceRecordsPerSec <= 0 || f.ConsumeRecordsPerSec <= 0 || f.FetchRecordsPerSec <= 0 || f.ProduceCPUPerGB <= 0 || f.ConsumeCPUPerGB <= 0 {
					t.Errorf("perf-test %s %s: %+v has a zero figure", kind, sys, f)
				}
			}
			if q := res.PerfRatio(kind, perfProduce); q <= 0 {
				t.Errorf("perf-test %s: producer ratio %v", kind, q)
			}
		}
		for _, g := range res.Goals() {
			if strings.Contains(g.Text, "Apache Kafka") && !g.Measured() {
				t.Errorf("goal %q not measured: %s", g.Text, g.Unmeasured)
			}
		}
	}
	t.Logf("progress:\n%s\ntable:\n%s", log.String(), table.String())
}
