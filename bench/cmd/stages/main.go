// Command stages says where the gateway's CPU goes, per GB of values, stage by stage, for the
// produce and the fetch path, and compares git revisions side by side. It builds the test
// binary of gateway/bridge for each revision (the working tree when none is named), runs
// BenchmarkGateway's produce and fetch cases (1 KiB incompressible values, snappy batches as
// franz-go sends them, a raw Kafka client in the same process) with a CPU profile, in rounds
// that alternate the revisions, and files every profile sample under the innermost stage its
// stack passes through (see stageOf). The figures are medians over the rounds, in CPU seconds
// per GB of values moved; the bench client's own work is left out of every stage. The store's
// files are kept in /dev/shm when there is one.
//
//	go run ./bench/cmd/stages -ref 80052f0 -ref . -rounds 5 [-cases fetch-json,fetch-json-behind]
//
// The fetch cases are "fetch" (every batch rebuilt from Iggy), "fetch-none" (the same with
// --fetch-codec none) and "fetch-tail" (batches answered from the tail cache); "fetch-json" and
// "fetch-json-tail" are the same two with the runner's JSON-like values (snappy 3:1) and the
// fetch cache off: rebuilt and compressed again, and the producers' own batches.
// "fetch-json-behind" is a group reading JSON-like values from its start after the producers
// finished, the fetch cache on and a tail cache of 4 MiB; its producer's rounds between the
// reads are in its profile (the produce stages), not in its GB.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// stage is a named part of the data path, recognised by the functions that do it. A sample
// belongs to the stage of the innermost frame of its stack that matches any stage; samples that
// match none are "other" (scheduler, locks, garbage collection run by the runtime).
type stage struct {
	name string
	re   *regexp.Regexp
}

func s(name, re string) stage { return stage{name, regexp.MustCompile(re)} }

var stages = []stage{
	s("bench client (left out)", `bridge\.\(\*benchGateway\)|bridge\.BenchmarkGateway|bridge\.randomBatch|bridge\.startGateway`),
	s("Kafka socket reads", `kafka\.\(\*conn\)\.readFrame`),
	s("Kafka decode", `kafka\.\(\*conn\)\.parse|bridge\.nextBatch$|bridge\.nextRecord|bridge\.checkBatches`),
	s("decompression", `bridge\.decompress`),
	s("conversion and checksums", `bridge\.\(\*converter\)\.toIggy`),
	s("Iggy client round trip", `gateway/iggy\.|bridge\.iggyClient`),
	s("store append", `store\.\(\*conn\)\.sendMessages|partlog\.\(\*Log\)\.Append`),
	s("store read", `store\.\(\*conn\)\.pollMessages|partlog\.\(\*Log\)\.Read`),
	s("store framing", `gateway/store\.`),
	s("fetch assembly", `bridge\.\(\*converter\)\.appendKafka|bridge\.\(\*tail\)\.cached`),
	s("compression", `bridge\.compress`),
	s("batch checksum", `bridge\.\(\*kbatchWriter\)\.finish`),
	s("Kafka socket writes", `kafka\.\(\*conn\)\.(writeLoop|writeSlot)`),
	s("Kafka handlers and encoding", `gateway/kafka\.|gateway/bridge\.`),
	s("garbage collection", `runtime\.gcBgMarkWorker|runtime\.bgsweep|runtime\.bgscavenge|runtime\.gcAssistAlloc`),
}

const other = "other (scheduler, locks)"

var cases = []string{"produce", "fetch", "fetch-none", "fetch-tail", "fetch-json", "fetch-json-tail", "fetch-json-behind"}

type refs []string

func (r *refs) String() string     { return strings.Join(*r, ",") }
func (r *refs) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	var revs refs
	flag.Var(&revs, "ref", "git revision to measure, . for the working tree (repeatable; default: the working tree)")
	rounds := flag.Int("rounds", 5, "rounds, alternating the revisions")
	benchtime := flag.String("benchtime", "3s", "-test.benchtime of each case")
	only := flag.String("cases", "", "comma-separated cases to run (default: all)")
	flag.Parse()
	if *only != "" {
		cases = strings.Split(*only, ",")
	}
	if err := run(context.Background(), revs, *rounds, *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "stages:", err)
		os.Exit(1)
	}
}

// result is one case of one revision in one round: CPU seconds per stage and GB moved.
type result struct {
	seconds map[string]float64
	gb      float64
}

func run(ctx context.Context, revs []string, rounds int, benchtime string) error {
	if len(revs) == 0 {
		revs = []string{"."}
	}
	dir, err := os.MkdirTemp("", "iggy-kafka-stages-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := make([]string, len(revs))
	for i, rev := range revs {
		src := "."
		if rev != "." {
			src = filepath.Join(dir, fmt.Sprintf("src%d", i))
			if err := export(ctx, rev, src); err != nil {
				return err
			}
		}
		bins[i] = filepath.Join(dir, fmt.Sprintf("bridge%d.test", i))
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bins[i], "./gateway/bridge")
		cmd.Dir, cmd.Stderr = src, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building gateway/bridge at %q: %w", rev, err)
		}
	}
	got := map[string][]result{} // key: rev index + case
	for round := range rounds {
		for i := range revs {
			for _, c := range cases {
				r, err := measure(ctx, bins[i], c, benchtime, filepath.Join(dir, "cpu.pprof"))
				if errors.Is(err, errNoCase) {
					continue // the revision predates this case
				}
				if err != nil {
					return fmt.Errorf("round %d, %s at %q: %w", round+1, c, revs[i], err)
				}
				k := fmt.Sprint(i, c)
				got[k] = append(got[k], r)
			}
		}
		fmt.Fprintf(os.Stderr, "round %d of %d done\n", round+1, rounds)
	}
	report(revs, got)
	return nil
}

func export(ctx context.Context, rev, dst string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	var archive bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", "archive", rev)
	cmd.Stdout, cmd.Stderr = &archive, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dst)
	untar.Stdin, untar.Stderr = &archive, os.Stderr
	return untar.Run()
}

var errNoCase = errors.New("no such benchmark case")

// measure runs one case with a CPU profile and files its samples under the stages.
func measure(ctx context.Context, bin, c, benchtime, profile string) (result, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", "^BenchmarkGateway$/^"+c+"$/^1024B$/",
		"-test.benchtime", benchtime, "-test.cpuprofile", profile)
	cmd.Dir = filepath.Dir(bin)
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		// The store's files go to memory: the disk's writeback is not a stage of the gateway.
		cmd.Env = append(os.Environ(), "TMPDIR=/dev/shm")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return result{}, fmt.Errorf("%w: %s", err, out)
	}
	gb, err := moved(out)
	if err != nil {
		return result{}, err
	}
	traces, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", bin, profile).Output()
	if err != nil {
		return result{}, fmt.Errorf("go tool pprof -traces: %w", err)
	}
	return result{seconds: classify(traces), gb: gb}, nil
}

// moved is the GB of values the benchmark line reports: iterations times bytes per iteration,
// which is MB/s times ns/op.
func moved(out []byte) (float64, error) {
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[0], "BenchmarkGateway/") {
			continue
		}
		n, err1 := strconv.ParseFloat(f[1], 64)
		ns, err2 := strconv.ParseFloat(f[2], 64)
		i := slices.Index(f, "MB/s")
		if err1 != nil || err2 != nil || i < 1 {
			return 0, fmt.Errorf("benchmark line %q", line)
		}
		mbps, err := strconv.ParseFloat(f[i-1], 64)
		if err != nil {
			return 0, fmt.Errorf("benchmark line %q", line)
		}
		return n * mbps * ns / 1e3 / 1e9, nil
	}
	return 0, errNoCase
}

// classify reads `go tool pprof -traces` output: blocks of a sample value and its stack, leaf
// first, separated by dashed lines.
func classify(traces []byte) map[string]float64 {
	secs := map[string]float64{}
	var value float64
	var frames []string
	flush := func() {
		if value > 0 {
			secs[stageOf(frames)] += value
		}
		value, frames = 0, frames[:0]
	}
	sc := bufio.NewScanner(bytes.NewReader(traces))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(frames) == 0 && value == 0 {
			if v, ok := duration(f[0]); ok && len(f) >= 2 {
				value = v
				frames = append(frames, strings.Join(f[1:], " "))
			}
			continue
		}
		if value > 0 {
			frames = append(frames, strings.Join(f, " "))
		}
	}
	flush()
	return secs
}

func duration(s string) (float64, bool) {
	for _, u := range []struct {
		suffix string
		scale  float64
	}{{"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}, {"s", 1}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			x, err := strconv.ParseFloat(v, 64)
			return x * u.scale, err == nil
		}
	}
	return 0, false
}

// stageOf names the stage of one stack. The bench client's goroutine calls some of the
// gateway's own decoders to check what it read, so any stack through it is the client's.
func stageOf(frames []string) string {
	for _, fr := range frames {
		if stages[0].re.MatchString(fr) {
			return stages[0].name
		}
	}
	for _, fr := range frames {
		for _, st := range stages[1:] {
			if st.re.MatchString(fr) {
				return st.name
			}
		}
	}
	return other
}

func report(revs []string, got map[string][]result) {
	name := func(rev string) string {
		if rev == "." {
			return "working tree"
		}
		return rev
	}
	for _, c := range cases {
		fmt.Printf("\n%s, CPU s/GB (medians of the rounds)\n\n| stage |", c)
		for _, rev := range revs {
			fmt.Printf(" %s |", name(rev))
		}
		fmt.Print("\n|---|")
		for range revs {
			fmt.Print("---|")
		}
		fmt.Println()
		rows := append([]string{}, func() []string {
			var n []string
			for _, st := range stages {
				n = append(n, st.name)
			}
			return append(n, other)
		}()...)
		rows = append(rows, "gateway total")
		for _, row := range rows {
			var cells []string
			seen := false
			for i := range revs {
				rs := got[fmt.Sprint(i, c)]
				if len(rs) == 0 {
					cells = append(cells, "–")
					continue
				}
				var xs []float64
				for _, r := range rs {
					v := r.seconds[row]
					if row == "gateway total" {
						v = 0
						for k, x := range r.seconds {
							if k != stages[0].name {
								v += x
							}
						}
					}
					xs = append(xs, v/r.gb)
				}
				m := median(xs)
				if m >= 0.005 {
					seen = true
				}
				cells = append(cells, fmt.Sprintf("%.2f", m))
			}
			if seen {
				fmt.Printf("| %s | %s |\n", row, strings.Join(cells, " | "))
			}
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
