package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/bench/child"
	"github.com/iggy-kafka/iggy-kafka/bench/connmem"
	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// Config says what a run measures. The zero value is not useful: start from
// Default or Quick.
type Config struct {
	Rounds     int
	Sizes      []int    // value sizes in bytes
	Kinds      []string // workload.Random, workload.JSON
	CaseBytes  int64    // payload bytes per case; records = CaseBytes / size
	Partitions int
	BatchBytes int // native send batch and poll size
	PoolBytes  int // distinct payload bytes each client draws from
	// DataDir holds the gateway's store (a fresh directory per round);
	// empty means the system temp directory.
	DataDir string
	// IggyCheckout is an apache/iggy checkout; when set, the official Iggy
	// Go SDK (its foreign/go) is measured too.
	IggyCheckout string
	// Ref, when set, is a git revision of this repository to build the
	// gateway (iggy-kafka serve) from, instead of the working tree: the
	// figures of two commits can then be compared, and a working tree that
	// is half edited does not stop a run.
	Ref string
	// LatencyRecords is the length of the paced produce phase (at
	// LatencyRate records a second) run in the first case of every round;
	// zero leaves it out.
	LatencyRecords int
	LatencyRate    int
	// Scale are the scale points, measured in every round after the payload
	// cases with 1 KiB random values, ScaleBytes of them per point, for the
	// gateway, kfake and native (the project's client); none leaves scale
	// out. The first point with one producer and no idle connections is the
	// baseline the scale goals compare with.
	Scale      []ScalePoint
	ScaleBytes int64
	// NoPayload leaves the payload cases, and with them the paced phase,
	// out of the run: the fan-out cases or the scale points alone.
	NoPayload bool
	// FanOut, when above zero, adds the fan-out cases, measured in every
	// round after the payload cases on the gateway and kfake: FanOutBytes
	// of FanOutSize values of each kind, read back by one consumer group,
	// by FanOut groups in turn and by FanOut at once, then FanOutBytes more
	// produced while a consumer reads them at the tail.
	FanOut      int
	FanOutBytes int64
	// TxnRecords, when above zero, adds the transactions case (issue 27),
	// measured in every round after the fan-out cases on the gateway (serve
	// then runs with --transactions), kfake and Apache Kafka (TxnSystems):
	// TxnRecords 1 KiB random values produced plainly (idempotent), then
	// again by a transactional producer, TxnBatch records to a
	// transaction, then read back READ_COMMITTED (workload.Case.TxnBatch).
	TxnRecords int
	TxnBatch   int
	// Memory, when its Runs are above zero, measures the memory goals after
	// the rounds (package bench/connmem) on the same serve binary.
	Memory connmem.Config
	// Kafka adds Apache Kafka (bench/kafka/pom.xml: one KRaft node, broker
	// and controller in a JVM of its own, heap KafkaHeap, its config, log
	// and data in the round's directory) as a system beside kfake in every
	// case; it needs java 17 or later and mvn.
	Kafka bool
	// PerfTest adds, in every round after the payload cases,
	// kafka-producer-perf-test and kafka-consumer-perf-test against the
	// gateway and Apache Kafka (PerfSystems): CaseBytes of PerfSize-byte
	// records of each kind. It needs Kafka's jars, so Kafka too.
	PerfTest bool
	// ClientTimeout bounds one client run (produce and consume of a case).
	ClientTimeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// Default is the full run: about 25 minutes on two cores with Apache Kafka
// and the perf tools (22 minutes with the SDK too, at a load average of 15),
// measured before the transactions case, which adds about 20 s a round, most
// of it Apache Kafka's transactional produce (about 4 MB/s).
func Default() Config {
	return Config{
		Rounds:         5,
		Sizes:          []int{1024, 100},
		Kinds:          []string{workload.Random, workload.JSON},
		CaseBytes:      256 << 20,
		Partitions:     3,
		BatchBytes:     1 << 20,
		PoolBytes:      workload.DefaultPoolBytes,
		LatencyRecords: 3000,
		LatencyRate:    1000,
		Scale:          DefaultScale(),
		ScaleBytes:     128 << 20,
		FanOut:         4,
		FanOutBytes:    256 << 20,
		TxnRecords:     50_000,
		TxnBatch:       100,
		Memory:         connmem.Default(),
		Kafka:          true,
		PerfTest:       true,
		ClientTimeout:  5 * time.Minute,
	}
}

// ScalePoint is one shape of load: Producers producers, each a client
// with a connection of its own, over a topic of Partitions partitions,
// while IdleConns other connections sit open on the broker.
type ScalePoint struct {
	Producers, Partitions, IdleConns int
}

// DefaultScale are the points of issue 11's scale goals: the one-producer
// baseline of the payload cases, two steps up in producers and
// partitions, and the baseline beside a thousand idle connections.
func DefaultScale() []ScalePoint {
	return []ScalePoint{{1, 3, 0}, {4, 12, 0}, {16, 96, 0}, {1, 3, 1000}}
}

// kafkaWarmBytes is how much 1 KiB values Apache Kafka moves, untimed,
// before the first case of a round: a quarter of a case, 64 MiB at most.
func kafkaWarmBytes(cfg Config) int64 { return min(cfg.CaseBytes/4, 64<<20) }

// Name is the point as the tables print it and Results.Runs keys it.
func (p ScalePoint) Name() string {
	s := fmt.Sprintf("%d × %d", p.Producers, p.Partitions)
	if p.IdleConns > 0 {
		s += fmt.Sprintf(" + %d idle", p.IdleConns)
	}
	return s
}

// ScaleSystems are the systems a scale point measures, those of them that
// the run has: the official SDK is left out, its client knows one shape
// only.
var ScaleSystems = []string{Gateway, Kfake, Kafka, Native}

// among is the systems of list that the run measures, in list's order.
func (r *Results) among(list []string) []string {
	var out []string
	for _, sys := range list {
		if slices.Contains(r.Systems, sys) {
			out = append(out, sys)
		}
	}
	return out
}

// ScaleSystems are the run's systems of ScaleSystems.
func (r *Results) ScaleSystems() []string { return r.among(ScaleSystems) }

// FanOutSystems are the run's systems of FanOutSystems.
func (r *Results) FanOutSystems() []string { return r.among(FanOutSystems) }

// ScaleSize and ScaleKind are the values of every scale point.
const (
	ScaleSize = 1024
	ScaleKind = workload.Random
)

// FanOutSystems are the systems a fan-out case measures, those of them
// that the run has: the Kafka brokers, since consumer groups are Kafka's.
var FanOutSystems = []string{Gateway, Kfake, Kafka}

// TxnSystems are the systems the transactions case measures, those of
// them that the run has: the Kafka brokers.
var TxnSystems = []string{Gateway, Kfake, Kafka}

// TxnSystems are the run's systems of TxnSystems.
func (r *Results) TxnSystems() []string { return r.among(TxnSystems) }

// TxnSize and TxnKind are the values of the transactions case.
const (
	TxnSize = 1024
	TxnKind = workload.Random
)

// TxnCase names the transactions case, as Results.Runs keys it; empty
// when the run has none.
func (r *Results) TxnCase() string {
	if r.Config.TxnRecords <= 0 {
		return ""
	}
	return "transactions, " + CaseName(TxnSize, TxnKind)
}

// FanOutSize is the value size of every fan-out case.
const FanOutSize = 1024

// FanOutName names the fan-out case of a payload kind, as the tables
// print it and Results.Runs keys it.
func FanOutName(kind string) string { return "fan-out, " + CaseName(FanOutSize, kind) }

// FanOutCases are the fan-out case names of the run, one per kind.
func (r *Results) FanOutCases() []string {
	if r.Config.FanOut <= 0 {
		return nil
	}
	var out []string
	for _, kind := range r.Config.Kinds {
		out = append(out, FanOutName(kind))
	}
	return out
}

// Quick is the development smoke run: a few minutes with Apache Kafka (a
// broker JVM started each round, two tool JVMs per perf run), about a
// minute without.
func Quick() Config {
	c := Default()
	c.CaseBytes = 8 << 20
	c.PoolBytes = 4 << 20
	c.LatencyRecords = 500
	c.ScaleBytes = 8 << 20
	c.FanOutBytes = 8 << 20
	c.TxnRecords = 2000
	c.Memory.Runs, c.Memory.Duration = 1, 2*time.Second
	c.ClientTimeout = time.Minute
	return c
}

// System names, in the order each round runs them.
const (
	Gateway = "gateway"
	Kfake   = "kfake"
	Kafka   = "kafka"      // Apache Kafka, one KRaft node
	Native  = "native"     // the project's Iggy client on the serve process's store port
	SDK     = "native-sdk" // the official Iggy Go SDK on the same port
)

// Results are every client report of a run, by case and system, one per
// round, plus what the runner measured itself.
type Results struct {
	Config  Config
	Started time.Time
	Elapsed time.Duration
	Systems []string
	// Snappy is the snappy ratio of each payload pool, by CaseName.
	Snappy map[string]float64
	// Runs[case][system] holds one report per round; scale points are
	// cases too, keyed by ScalePoint.Name.
	Runs map[string]map[string][]workload.Report
	// Revision is the commit the gateway was built from, with
	// "+working tree" when it was built from a working tree with changes.
	Revision string
	// PeakRSS is each broker process's peak resident set (VmHWM) in bytes,
	// one per round, by "gateway" (the serve process), "kfake" and "kafka".
	PeakRSS map[string][]int64
	// Perf[kind][system] is one perf-test run per round (Config.PerfTest).
	Perf map[string]map[string][]PerfRun
	// KafkaVersion is Apache Kafka's version, and KafkaFlush its log flush
	// settings as the broker of the first round logged them.
	KafkaVersion string
	KafkaFlush   map[string]string
	// Memory is one connmem result per run of Config.Memory.
	Memory []connmem.Result
}

// CaseName names a payload case, as the tables print it.
func CaseName(size int, kind string) string {
	if size%1024 == 0 {
		return fmt.Sprintf("%d KiB %s", size/1024, kind)
	}
	return fmt.Sprintf("%d B %s", size, kind)
}

// binaries are the programs a run builds.
type binaries struct {
	dir                  string
	serve, kfake, client string
	sdkClient            string // empty without a checkout
	repo                 string
}

// Run builds the programs, then runs cfg.Rounds rounds; each round starts a
// fresh serve process and a fresh kfake process and runs, for every payload
// case, the gateway, kfake, native and (with a checkout) SDK clients one
// after another, each in its own process.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	logf := func(format string, args ...any) { fmt.Fprintf(logw, format+"\n", args...) }
	if cfg.Rounds < 1 || len(cfg.Sizes) == 0 || len(cfg.Kinds) == 0 || cfg.CaseBytes <= 0 || cfg.Partitions < 1 {
		return nil, errors.New("bench: config needs rounds, sizes, kinds, case bytes and partitions")
	}
	if cfg.FanOut > 0 && cfg.FanOutBytes < FanOutSize {
		return nil, fmt.Errorf("bench: fan-out of %d groups needs a record (%d bytes)", cfg.FanOut, cfg.FanOutBytes)
	}
	if cfg.TxnRecords < 0 || cfg.TxnRecords > 0 && cfg.TxnBatch < 1 {
		return nil, fmt.Errorf("bench: transactions case of %d records needs a batch of a record or more (got %d)", cfg.TxnRecords, cfg.TxnBatch)
	}
	for _, pt := range cfg.Scale {
		if pt.Producers < 1 || pt.Partitions < 1 || pt.IdleConns < 0 || cfg.ScaleBytes < ScaleSize {
			return nil, fmt.Errorf("bench: scale point %+v (with %d bytes) needs a producer, a partition and a record", pt, cfg.ScaleBytes)
		}
	}
	res := &Results{Config: cfg, Started: time.Now(), Snappy: map[string]float64{},
		Runs: map[string]map[string][]workload.Report{}, PeakRSS: map[string][]int64{}, Perf: map[string]map[string][]PerfRun{}}
	if cfg.PerfTest && !cfg.Kafka {
		return nil, errors.New("bench: the perf-test runs need Apache Kafka's jars: -perftest=false with -kafka=false")
	}
	res.Systems = []string{Gateway, Kfake}
	if cfg.Kafka {
		res.Systems = append(res.Systems, Kafka)
	}
	res.Systems = append(res.Systems, Native)
	if cfg.IggyCheckout != "" {
		res.Systems = append(res.Systems, SDK)
	}
	for _, size := range cfg.Sizes {
		for _, kind := range cfg.Kinds {
			p, err := workload.NewPool(kind, size, cfg.PoolBytes, 1)
			if err != nil {
				return nil, err
			}
			res.Snappy[CaseName(size, kind)] = p.SnappyRatio(1 << 20)
		}
	}

	bins, err := build(ctx, cfg, logf)
	if err != nil {
		return nil, err
	}
	res.Revision = revision(ctx, bins.repo, cfg.Ref)
	defer os.RemoveAll(bins.dir)
	var jars *kafkaJars
	payloads := map[string]string{} // perf-test payload file by kind
	if cfg.Kafka {
		if jars, err = resolveKafka(ctx, bins.repo, logf); err != nil {
			return nil, err
		}
		res.KafkaVersion = jars.version
	}
	if cfg.PerfTest {
		for _, kind := range cfg.Kinds {
			payloads[kind] = filepath.Join(bins.dir, "perf-"+kind+".txt")
			if err := writePayloadFile(payloads[kind], kind, PerfSize, perfLines(cfg.PoolBytes)); err != nil {
				return nil, err
			}
		}
	}

	dataRoot := cfg.DataDir
	if dataRoot == "" {
		dataRoot = bins.dir
	}
	seq := 0
	for round := 1; round <= cfg.Rounds; round++ {
		dir, err := os.MkdirTemp(dataRoot, "iggy-kafka-bench-")
		if err != nil {
			return nil, err
		}
		gw, err := startServe(ctx, bins.serve, dir, cfg.Partitions, cfg.TxnRecords > 0)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		kf, err := startKfake(ctx, bins.kfake, cfg.Partitions)
		if err != nil {
			gw.stop()
			os.RemoveAll(dir)
			return nil, err
		}
		var kk *kafkaProc
		if cfg.Kafka {
			logf("round %d/%d  starting Apache Kafka %s", round, cfg.Rounds, jars.version)
			if kk, err = startKafka(ctx, jars, dir+"-kafka", cfg.Partitions); err != nil {
				gw.stop()
				kf.stop()
				os.RemoveAll(dir)
				os.RemoveAll(dir + "-kafka")
				return nil, err
			}
			if res.KafkaFlush == nil {
				if res.KafkaFlush, err = kk.flush(); err != nil {
					gw.stop()
					kf.stop()
					kk.stop()
					os.RemoveAll(dir)
					os.RemoveAll(dir + "-kafka")
					return nil, err
				}
			}
		}
		// one runs a case of one system as a client process and files
		// its report under name.
		one := func(name, sys string, c workload.Case) error {
			seq++
			c.Topic = fmt.Sprintf("bench-%d-%d", os.Getpid(), seq)
			c.PoolBytes, c.Seed, c.BatchBytes = cfg.PoolBytes, 1, cfg.BatchBytes
			var bin string
			var args []string
			switch sys {
			case Gateway:
				c.Addr, c.BrokerPID, bin, args = gw.kafkaAddr, gw.pid(), bins.client, []string{"-system", "kafka"}
			case Kfake:
				c.Addr, c.BrokerPID, bin, args = kf.kafkaAddr, kf.pid(), bins.client, []string{"-system", "kafka"}
			case Kafka:
				c.Addr, c.BrokerPID, bin, args = kk.kafkaAddr, kk.pid(), bins.client, []string{"-system", "kafka"}
			case Native:
				c.Addr, c.BrokerPID, bin, args = gw.storeAddr, gw.pid(), bins.client, []string{"-system", "iggy"}
			case SDK:
				c.Addr, c.BrokerPID, bin = gw.storeAddr, gw.pid(), bins.sdkClient
			}
			args = append(args, "-timeout", cfg.ClientTimeout.String())
			rep, err := runClient(ctx, bin, append(args, c.Args()...), cfg.ClientTimeout+30*time.Second)
			if err != nil {
				return fmt.Errorf("round %d, %s, %s: %w", round, name, sys, err)
			}
			if res.Runs[name] == nil {
				res.Runs[name] = map[string][]workload.Report{}
			}
			res.Runs[name][sys] = append(res.Runs[name][sys], rep)
			logf("round %d/%d  %-16s %-10s %s", round, cfg.Rounds, name, sys, summary(rep))
			return nil
		}
		err = func() error {
			if kk != nil {
				// A fresh JVM runs interpreted until its JIT has seen the
				// hot paths: the first case would measure the warm-up.
				c := workload.Case{Kind: workload.Random, Size: 1024, Records: int(kafkaWarmBytes(cfg) / 1024), Partitions: cfg.Partitions,
					Addr: kk.kafkaAddr, BrokerPID: kk.pid(), Topic: fmt.Sprintf("bench-%d-warm-%d", os.Getpid(), round),
					PoolBytes: cfg.PoolBytes, Seed: 2}
				if _, err := runClient(ctx, bins.client, append([]string{"-system", "kafka", "-timeout", cfg.ClientTimeout.String()}, c.Args()...),
					cfg.ClientTimeout+30*time.Second); err != nil {
					return fmt.Errorf("round %d, warming up Apache Kafka: %w", round, err)
				}
			}
			for _, size := range cfg.Sizes {
				if cfg.NoPayload {
					break
				}
				for _, kind := range cfg.Kinds {
					for _, sys := range res.Systems {
						c := workload.Case{Kind: kind, Size: size, Records: int(cfg.CaseBytes / int64(size)), Partitions: cfg.Partitions}
						if size == cfg.Sizes[0] && kind == cfg.Kinds[0] {
							c.LatencyRecords, c.LatencyRate = cfg.LatencyRecords, cfg.LatencyRate
						}
						if err := one(CaseName(size, kind), sys, c); err != nil {
							return err
						}
					}
				}
			}
			for _, kind := range cfg.Kinds {
				if !cfg.PerfTest {
					break
				}
				for _, sys := range PerfSystems {
					seq++
					topic := fmt.Sprintf("bench-%d-%d", os.Getpid(), seq)
					addr, pid := gw.kafkaAddr, gw.pid()
					if sys == Kafka {
						addr, pid = kk.kafkaAddr, kk.pid()
					}
					run, err := runPerf(ctx, jars, addr, pid, topic, payloads[kind], int(cfg.CaseBytes/PerfSize), cfg.Partitions, cfg.ClientTimeout)
					if err != nil {
						return fmt.Errorf("round %d, perf-test %s, %s: %w", round, kind, sys, err)
					}
					if res.Perf[kind] == nil {
						res.Perf[kind] = map[string][]PerfRun{}
					}
					res.Perf[kind][sys] = append(res.Perf[kind][sys], run)
					logf("round %d/%d  perf-test %-7s %-10s produce %.0f records/s, p99 %.0f ms; consume %.0f records/s (fetch %.0f)",
						round, cfg.Rounds, kind, sys, run.Produce.RecordsPerSec, run.Produce.P99, run.Consume.RecordsPerSec, run.Consume.FetchRecordsPerSec)
				}
			}
			for _, kind := range cfg.Kinds {
				if cfg.FanOut <= 0 {
					break
				}
				for _, sys := range res.FanOutSystems() {
					c := workload.Case{Kind: kind, Size: FanOutSize, Records: int(cfg.FanOutBytes / FanOutSize),
						Partitions: cfg.Partitions, Groups: cfg.FanOut}
					if err := one(FanOutName(kind), sys, c); err != nil {
						return err
					}
				}
			}
			if name := res.TxnCase(); name != "" {
				for _, sys := range res.TxnSystems() {
					c := workload.Case{Kind: TxnKind, Size: TxnSize, Records: cfg.TxnRecords, Partitions: cfg.Partitions, TxnBatch: cfg.TxnBatch}
					if err := one(name, sys, c); err != nil {
						return err
					}
					reps := res.Runs[name][sys]
					if _, ok := phaseOf(reps[len(reps)-1], workload.TxnProduce); !ok {
						return fmt.Errorf("round %d, %s, %s: the report has no %s phase", round, name, sys, workload.TxnProduce)
					}
				}
			}
			for _, pt := range cfg.Scale {
				for _, sys := range res.ScaleSystems() {
					c := workload.Case{Kind: ScaleKind, Size: ScaleSize, Records: int(cfg.ScaleBytes / ScaleSize),
						Partitions: pt.Partitions, Producers: pt.Producers, IdleConns: pt.IdleConns}
					if err := one(pt.Name(), sys, c); err != nil {
						return err
					}
				}
			}
			return nil
		}()
		res.PeakRSS[Gateway] = append(res.PeakRSS[Gateway], peakRSS(gw.pid()))
		res.PeakRSS[Kfake] = append(res.PeakRSS[Kfake], peakRSS(kf.pid()))
		stopErr := errors.Join(gw.stop(), kf.stop())
		if kk != nil {
			res.PeakRSS[Kafka] = append(res.PeakRSS[Kafka], peakRSS(kk.pid()))
			stopErr = errors.Join(stopErr, kk.stop())
		}
		os.RemoveAll(dir)
		os.RemoveAll(dir + "-kafka")
		if err != nil {
			return nil, err
		}
		if stopErr != nil {
			return nil, fmt.Errorf("round %d: stopping the brokers: %w", round, stopErr)
		}
	}
	if m := cfg.Memory; m.Runs > 0 {
		pool := connmem.Pool(m)
		for run := 1; run <= m.Runs; run++ {
			r, err := connmem.Measure(bins.serve, "", m, pool)
			if err != nil {
				return nil, fmt.Errorf("memory run %d: %w", run, err)
			}
			logf("memory %d/%d  idle %.1f MiB, %d idle conns %.1f KiB each, %d producers peak %.1f MiB",
				run, m.Runs, float64(r.Idle)/(1<<20), m.Conns, float64(r.PerConn)/(1<<10), m.Producers, float64(r.Peak)/(1<<20))
			res.Memory = append(res.Memory, r)
		}
	}
	res.Elapsed = time.Since(res.Started)
	return res, nil
}

func summary(r workload.Report) string {
	var parts []string
	for _, p := range r.Phases {
		if p.Name == workload.Latency {
			parts = append(parts, fmt.Sprintf("p99 %.0f µs", p.P99*1e6))
			continue
		}
		if p.Name == workload.TxnProduce {
			parts = append(parts, fmt.Sprintf("%s %.0f MB/s (commit p50 %.0f µs, p99 %.0f µs)", p.Name, float64(p.Bytes)/p.Seconds/1e6, p.P50*1e6, p.P99*1e6))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f MB/s", p.Name, float64(p.Bytes)/p.Seconds/1e6))
	}
	return strings.Join(parts, ", ")
}

// repoRoot is the directory of the module this package belongs to.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("bench: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("bench: run from inside the iggy-kafka module")
	}
	return filepath.Dir(gomod), nil
}

func build(ctx context.Context, cfg Config, logf func(string, ...any)) (*binaries, error) {
	repo, err := repoRoot(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "iggy-kafka-bench-bin-")
	if err != nil {
		return nil, err
	}
	b := &binaries{dir: dir, repo: repo,
		serve: filepath.Join(dir, "iggy-kafka"), kfake: filepath.Join(dir, "kfake"), client: filepath.Join(dir, "benchclient")}
	serveSrc := repo
	if cfg.Ref != "" {
		serveSrc = filepath.Join(dir, "src")
		logf("exporting %s", cfg.Ref)
		if err := exportRef(ctx, repo, cfg.Ref, serveSrc); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	for _, t := range []struct{ src, out, pkg string }{
		{serveSrc, b.serve, "./cmd/iggy-kafka"}, {repo, b.kfake, "./bench/cmd/kfake"}, {repo, b.client, "./bench/cmd/benchclient"},
	} {
		logf("building %s", t.pkg)
		if err := goBuild(ctx, t.src, t.out, t.pkg, nil); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if cfg.IggyCheckout != "" {
		logf("building the Iggy Go SDK client against %s", cfg.IggyCheckout)
		if b.sdkClient, err = buildSDKClient(ctx, repo, cfg.IggyCheckout, dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return b, nil
}

// revision names the commit the gateway is built from; empty when git
// cannot tell.
func revision(ctx context.Context, repo, ref string) string {
	tree := ref == "" // built from the working tree, not from a revision
	if tree {
		ref = "HEAD"
	}
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--short", ref+"^{commit}").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if tree {
		st, err := exec.CommandContext(ctx, "git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output()
		if err == nil && len(bytes.TrimSpace(st)) > 0 {
			rev += "+working tree"
		}
	}
	return rev
}

// exportRef writes the tree of a git revision into dst.
func exportRef(ctx context.Context, repo, ref, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	archive := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", ref)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dst)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	untar.Stdin = pipe
	var errs bytes.Buffer
	archive.Stderr, untar.Stderr = &errs, &errs
	if err := archive.Start(); err != nil {
		return err
	}
	if err := untar.Run(); err != nil {
		_ = archive.Wait()
		return fmt.Errorf("bench: export %s: %w\n%s", ref, err, errs.String())
	}
	if err := archive.Wait(); err != nil {
		return fmt.Errorf("bench: git archive %s: %w\n%s", ref, err, errs.String())
	}
	return nil
}

func goBuild(ctx context.Context, dir, out, pkg string, env []string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bench: go build %s: %w\n%s", pkg, err, msg)
	}
	return nil
}

// buildSDKClient builds bench/sdkclient in a throwaway module that
// requires the checkout's SDK and this repository, both by replace
// directives: the SDK is not a module the proxy serves, and nothing of it
// is copied into this repository.
func buildSDKClient(ctx context.Context, repo, checkout, binDir string) (string, error) {
	sdk, err := filepath.Abs(filepath.Join(checkout, "foreign", "go"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(sdk, "go.mod")); err != nil {
		return "", fmt.Errorf("bench: %s is not an apache/iggy checkout (no foreign/go/go.mod)", checkout)
	}
	mod, err := os.MkdirTemp("", "iggy-kafka-bench-sdk-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(mod)
	src, err := os.ReadFile(filepath.Join(repo, "bench", "sdkclient", "main.go"))
	if err != nil {
		return "", err
	}
	// The file is excluded from this module's builds (it imports the SDK,
	// which go.mod cannot name); the throwaway module builds it.
	src = bytes.Replace(src, []byte("//go:build ignore\n"), nil, 1)
	gomod := fmt.Sprintf(`module iggykafkabench/sdkclient

go 1.26

require (
	github.com/apache/iggy/foreign/go v0.0.0
	github.com/iggy-kafka/iggy-kafka v0.0.0
)

replace github.com/apache/iggy/foreign/go => %s

replace github.com/iggy-kafka/iggy-kafka => %s
`, strconv.Quote(sdk), strconv.Quote(repo))
	var sums []byte
	for _, f := range []string{filepath.Join(repo, "go.sum"), filepath.Join(sdk, "go.sum")} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		sums = append(sums, b...)
	}
	for name, b := range map[string][]byte{"main.go": src, "go.mod": []byte(gomod), "go.sum": sums} {
		if err := os.WriteFile(filepath.Join(mod, name), b, 0o644); err != nil {
			return "", err
		}
	}
	out := filepath.Join(binDir, "sdkclient")
	if err := goBuild(ctx, mod, out, ".", []string{"GOWORK=off", "GOFLAGS=-mod=mod"}); err != nil {
		return "", err
	}
	return out, nil
}

// proc is a broker process.
type proc struct {
	cmd                  *exec.Cmd
	kafkaAddr, storeAddr string
	stderr               *bytes.Buffer
	done                 chan error
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop ends the broker with SIGTERM and waits for it; a broker that had
// already exited on its own is an error.
func (p *proc) stop() error {
	select {
	case err := <-p.done:
		return fmt.Errorf("broker exited during the run: %v\n%s", err, p.stderr)
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return nil
}

// startServe starts the gateway on the embedded store; transactions adds
// --transactions.
func startServe(ctx context.Context, bin, dataDir string, partitions int, transactions bool) (*proc, error) {
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	kafka, store := addrs[0], addrs[1]
	args := []string{"serve", "--bind", kafka, "--store-listen", store,
		"--data", dataDir, "--fsync", "never", "--log-level", "warn",
		"--default-partitions", strconv.Itoa(partitions)}
	if transactions {
		args = append(args, "--transactions")
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	p := &proc{cmd: cmd, kafkaAddr: kafka, storeAddr: store, stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	if err := start(p); err != nil {
		return nil, err
	}
	for _, addr := range []string{kafka, store} {
		if err := waitListening(ctx, p, addr); err != nil {
			_ = p.stop()
			return nil, err
		}
	}
	return p, nil
}

func startKfake(ctx context.Context, bin string, partitions int) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, "-default-partitions", strconv.Itoa(partitions))
	p := &proc{cmd: cmd, stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := start(p); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = p.stop()
		return nil, fmt.Errorf("bench: kfake printed no address: %v\n%s", err, p.stderr)
	}
	p.kafkaAddr = strings.TrimSpace(line)
	return p, nil
}

func start(p *proc) error {
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.done = make(chan error, 1)
	go func() { p.done <- p.cmd.Wait() }()
	return nil
}

// waitListening polls addr until it accepts a connection, the process
// exits, or ten seconds pass.
func waitListening(ctx context.Context, p *proc, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s not listening on %s after 10s: %v\n%s", filepath.Base(p.cmd.Path), addr, err, p.stderr)
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("bench: %s exited: %v\n%s", filepath.Base(p.cmd.Path), err, p.stderr)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func runClient(ctx context.Context, bin string, args []string, timeout time.Duration) (workload.Report, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var rep workload.Report
	if err := cmd.Run(); err != nil {
		return rep, fmt.Errorf("%s: %w\n%s", filepath.Base(bin), err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return rep, fmt.Errorf("%s: report: %w (%q)", filepath.Base(bin), err, stdout.String())
	}
	_, produced := phaseOf(rep, "produce")
	_, consumed := phaseOf(rep, "consume")
	if !produced || !consumed {
		return rep, fmt.Errorf("%s: report has no produce and consume phases: %+v", filepath.Base(bin), rep.Phases)
	}
	return rep, nil
}

// peakRSS is VmHWM of a live process, in bytes; zero when unreadable.
func peakRSS(pid int) int64 {
	n, _ := child.Status(pid, "VmHWM")
	return n
}
