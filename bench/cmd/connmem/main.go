// Command connmem prints package bench/connmem's measurement for one or more binaries (the
// benchmark takes its memory goals from the same package). It measures what a gateway process
// holds in memory for its connections: it runs
// the real binary (`iggy-kafka serve` with the embedded store, --fsync never, data in a temporary
// directory) as a child process and reads VmRSS from /proc/<pid>/status at three points:
//
//   - idle: the gateway started, one topic created, no client connected;
//   - idle connections: after -conns raw Kafka connections have each sent one ApiVersions v0
//     request, read its answer and gone quiet; (RSS - idle RSS) / conns is the memory per idle
//     connection;
//   - produce peak: the largest VmRSS sampled every 20 ms while -producers franz-go clients
//     (default settings: snappy, idempotent, acks=all), one goroutine each, produce values of
//     -value bytes drawn from a pool of random buffers for -duration. The idle connections are
//     closed first, so the peak is the producers' alone.
//
// Each run starts a fresh child; the figures printed are medians of -runs runs. With several
// -bin name=path flags the binaries are measured in alternating runs of one invocation, so that
// a before and an after share the machine's load:
//
//	go build -o /tmp/after ./cmd/iggy-kafka
//	go run ./bench/cmd/connmem -bin before=/tmp/before -bin after=/tmp/after
//
// Without -bin it builds ./cmd/iggy-kafka from the working directory. -arg adds an argument to
// every child's serve command and -env a variable to its environment (not to this process's: its
// producers would feel a GOGC or GOMEMLIMIT meant for the gateway); -logs DIR keeps each child's
// output there (-env GODEBUG=gctrace=1 shows the collector's heap sizes in it). Linux only
// (/proc).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench/connmem"
)

type binFlag []string

func (b *binFlag) String() string     { return strings.Join(*b, ",") }
func (b *binFlag) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	var bins binFlag
	cfg := connmem.Default()
	flag.Var(&bins, "bin", "name=path of a gateway binary to measure (repeatable; default: build ./cmd/iggy-kafka)")
	flag.IntVar(&cfg.Runs, "runs", cfg.Runs, "runs per binary; medians are printed")
	flag.IntVar(&cfg.Conns, "conns", cfg.Conns, "idle Kafka connections")
	flag.IntVar(&cfg.Producers, "producers", cfg.Producers, "concurrent franz-go producers")
	flag.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "partitions of the produced topic")
	flag.IntVar(&cfg.Value, "value", cfg.Value, "bytes per record value")
	flag.IntVar(&cfg.PoolSize, "pool", cfg.PoolSize, "random value buffers the producers draw from")
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the producers produce")
	flag.StringVar(&cfg.Logs, "logs", cfg.Logs, "directory that keeps each child's output, as NAME-RUN.log (default: discarded)")
	var args, env binFlag
	flag.Var(&args, "arg", "extra argument of every child's serve command (repeatable), e.g. -arg=--buffer-budget=32MiB")
	flag.Var(&env, "env", "KEY=VALUE in every child's environment only (repeatable), e.g. -env GOGC=50")
	flag.Parse()
	cfg.Args, cfg.Env = args, env
	if err := run(bins, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "connmem:", err)
		os.Exit(1)
	}
}

func run(bins []string, cfg connmem.Config) error {
	type target struct{ name, path string }
	var targets []target
	if len(bins) == 0 {
		dir, err := os.MkdirTemp("", "connmem-bin")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		p := filepath.Join(dir, "iggy-kafka")
		b := exec.Command("go", "build", "-o", p, "./cmd/iggy-kafka")
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		if err := b.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
		targets = append(targets, target{"current", p})
	}
	for _, b := range bins {
		name, path, ok := strings.Cut(b, "=")
		if !ok {
			name, path = filepath.Base(b), b
		}
		targets = append(targets, target{name, path})
	}
	pool := connmem.Pool(cfg)
	results := make([][]connmem.Result, len(targets))
	for r := range cfg.Runs {
		for i, tg := range targets {
			logPath := ""
			if cfg.Logs != "" {
				logPath = filepath.Join(cfg.Logs, fmt.Sprintf("%s-%d.log", tg.name, r+1))
			}
			res, err := connmem.Measure(tg.path, logPath, cfg, pool)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", tg.name, r+1, err)
			}
			fmt.Fprintf(os.Stderr, "%s run %d: idle %s, %d conns %s (%s each), produce peak %s (anonymous %s, VmHWM %s), %.0f MB/s\n",
				tg.name, r+1, mib(res.Idle), cfg.Conns, mib(res.WithConns), kib(res.PerConn), mib(res.Peak), mib(res.PeakAnon), mib(res.HWM), res.MBps)
			results[i] = append(results[i], res)
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("connmem: %d runs, %d idle conns, %d producers x %v, %d B values, %d partitions; load average %s\n",
		cfg.Runs, cfg.Conns, cfg.Producers, cfg.Duration, cfg.Value, cfg.Partitions, strings.TrimSpace(string(la)))
	fmt.Printf("%-10s %12s %14s %14s %16s %10s\n", "binary", "idle RSS", "RSS+conns", "per idle conn", "produce peak RSS", "MB/s")
	for i, tg := range targets {
		rs := results[i]
		fmt.Printf("%-10s %12s %14s %14s %16s %10.0f\n", tg.name,
			mib(connmem.Median(rs, func(r connmem.Result) int64 { return r.Idle })),
			mib(connmem.Median(rs, func(r connmem.Result) int64 { return r.WithConns })),
			kib(connmem.Median(rs, func(r connmem.Result) int64 { return r.PerConn })),
			mib(connmem.Median(rs, func(r connmem.Result) int64 { return r.Peak })),
			float64(connmem.Median(rs, func(r connmem.Result) int64 { return int64(r.MBps) })))
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10)) }
