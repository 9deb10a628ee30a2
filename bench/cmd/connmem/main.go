// Command connmem measures what a gateway process holds in memory for its connections: it runs
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
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type binFlag []string

func (b *binFlag) String() string     { return strings.Join(*b, ",") }
func (b *binFlag) Set(v string) error { *b = append(*b, v); return nil }

type config struct {
	runs, conns, producers, partitions, value, poolSize int
	duration                                            time.Duration
	logs                                                string
	args, env                                           []string
}

// result is one run's figures; memory in bytes.
type result struct {
	idle, withConns, perConn, peak, peakAnon, hwm int64
	mbps                                          float64
}

func main() {
	var bins binFlag
	var cfg config
	flag.Var(&bins, "bin", "name=path of a gateway binary to measure (repeatable; default: build ./cmd/iggy-kafka)")
	flag.IntVar(&cfg.runs, "runs", 3, "runs per binary; medians are printed")
	flag.IntVar(&cfg.conns, "conns", 1000, "idle Kafka connections")
	flag.IntVar(&cfg.producers, "producers", 50, "concurrent franz-go producers")
	flag.IntVar(&cfg.partitions, "partitions", 50, "partitions of the produced topic")
	flag.IntVar(&cfg.value, "value", 1024, "bytes per record value")
	flag.IntVar(&cfg.poolSize, "pool", 256, "random value buffers the producers draw from")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long the producers produce")
	flag.StringVar(&cfg.logs, "logs", "", "directory that keeps each child's output, as NAME-RUN.log (default: discarded)")
	var args, env binFlag
	flag.Var(&args, "arg", "extra argument of every child's serve command (repeatable), e.g. -arg=--buffer-budget=32MiB")
	flag.Var(&env, "env", "KEY=VALUE in every child's environment only (repeatable), e.g. -env GOGC=50")
	flag.Parse()
	cfg.args, cfg.env = args, env
	if err := run(bins, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "connmem:", err)
		os.Exit(1)
	}
}

func run(bins []string, cfg config) error {
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
	pool := make([][]byte, cfg.poolSize)
	for i := range pool {
		pool[i] = make([]byte, cfg.value)
		for j := range pool[i] {
			pool[i][j] = byte(rand.Uint32())
		}
	}
	results := make([][]result, len(targets))
	for r := range cfg.runs {
		for i, tg := range targets {
			logPath := ""
			if cfg.logs != "" {
				logPath = filepath.Join(cfg.logs, fmt.Sprintf("%s-%d.log", tg.name, r+1))
			}
			res, err := measure(tg.path, logPath, cfg, pool)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", tg.name, r+1, err)
			}
			fmt.Fprintf(os.Stderr, "%s run %d: idle %s, %d conns %s (%s each), produce peak %s (anonymous %s, VmHWM %s), %.0f MB/s\n",
				tg.name, r+1, mib(res.idle), cfg.conns, mib(res.withConns), kib(res.perConn), mib(res.peak), mib(res.peakAnon), mib(res.hwm), res.mbps)
			results[i] = append(results[i], res)
		}
	}
	la, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("connmem: %d runs, %d idle conns, %d producers x %v, %d B values, %d partitions; load average %s\n",
		cfg.runs, cfg.conns, cfg.producers, cfg.duration, cfg.value, cfg.partitions, strings.TrimSpace(string(la)))
	fmt.Printf("%-10s %12s %14s %14s %16s %10s\n", "binary", "idle RSS", "RSS+conns", "per idle conn", "produce peak RSS", "MB/s")
	for i, tg := range targets {
		rs := results[i]
		fmt.Printf("%-10s %12s %14s %14s %16s %10.0f\n", tg.name,
			mib(median(rs, func(r result) int64 { return r.idle })),
			mib(median(rs, func(r result) int64 { return r.withConns })),
			kib(median(rs, func(r result) int64 { return r.perConn })),
			mib(median(rs, func(r result) int64 { return r.peak })),
			float64(median(rs, func(r result) int64 { return int64(r.mbps) })))
	}
	return nil
}

func median(rs []result, f func(result) int64) int64 {
	v := make([]int64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10)) }

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// measure runs one child from start to kill; its output goes to logPath, or is dropped when
// that is empty.
func measure(bin, logPath string, cfg config, pool [][]byte) (result, error) {
	var res result
	dir, err := os.MkdirTemp("", "connmem-data")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return res, err
	}
	store, err := freeAddr()
	if err != nil {
		return res, err
	}
	if logPath == "" {
		logPath = filepath.Join(dir, "gateway.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--bind", addr, "--advertised-addr", addr, "--store-listen", store,
		"--data", filepath.Join(dir, "data"), "--fsync", "never", "--log-level", "warn"}, cfg.args...)...)
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+dir), cfg.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return res, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	if err := waitListening(addr, 30*time.Second); err != nil {
		return res, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const topic = "connmem"
	adm, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return res, err
	}
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, int32(cfg.partitions), 1, nil, topic); err != nil {
		adm.Close()
		return res, fmt.Errorf("create topic: %w", err)
	}
	adm.Close()

	if res.idle, err = status(pid, "VmRSS"); err != nil {
		return res, err
	}
	conns, err := idleConns(addr, cfg.conns)
	if err != nil {
		return res, err
	}
	if res.withConns, err = status(pid, "VmRSS"); err != nil {
		return res, err
	}
	res.perConn = (res.withConns - res.idle) / int64(cfg.conns)
	for _, c := range conns {
		c.Close()
	}

	var peak, peakAnon atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := status(pid, "VmRSS"); err == nil && v > peak.Load() {
				peak.Store(v)
			}
			if v, err := status(pid, "RssAnon"); err == nil && v > peakAnon.Load() {
				peakAnon.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	bytes, err := produce(ctx, addr, topic, cfg, pool)
	close(stop)
	<-sampled
	if err != nil {
		return res, err
	}
	res.peak, res.peakAnon = peak.Load(), peakAnon.Load()
	res.mbps = float64(bytes) / cfg.duration.Seconds() / 1e6
	res.hwm, err = status(pid, "VmHWM")
	return res, err
}

func waitListening(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gateway not listening on %s: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a child's listener, nothing to wait on
	}
}

// status reads one kB figure of /proc/<pid>/status, in bytes.
func status(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("%s not in /proc/%d/status", field, pid)
}

// apiVersionsV0 is a whole ApiVersions v0 request: size, key 18, version 0, correlation id 1,
// client id "connmem".
func apiVersionsV0() []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, 18)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len("connmem")))
	b = append(b, "connmem"...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// idleConns opens n connections that each send one ApiVersions and read its whole answer, and
// returns them open and quiet.
func idleConns(addr string, n int) ([]net.Conn, error) {
	req := apiVersionsV0()
	conns := make([]net.Conn, 0, n)
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		firstEr error
	)
	sem := make(chan struct{}, 32)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := openIdle(addr, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstEr == nil {
					firstEr = err
				}
				return
			}
			conns = append(conns, c)
		}()
	}
	wg.Wait()
	if firstEr != nil {
		for _, c := range conns {
			c.Close()
		}
		return nil, firstEr
	}
	return conns, nil
}

func openIdle(addr string, req []byte) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, err
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions answer: %w", err)
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:4]))-4); err != nil {
		c.Close()
		return nil, fmt.Errorf("ApiVersions answer: %w", err)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// produce runs the producers for cfg.duration and returns the value bytes acknowledged.
func produce(ctx context.Context, addr, topic string, cfg config, pool [][]byte) (int64, error) {
	var (
		acked   atomic.Int64
		wg      sync.WaitGroup
		errMu   sync.Mutex
		firstEr error
	)
	setErr := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if firstEr == nil {
			firstEr = err
		}
	}
	clients := make([]*kgo.Client, cfg.producers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for pctx.Err() == nil {
				v := pool[r.IntN(len(pool))]
				cl.Produce(pctx, &kgo.Record{Value: v}, func(rec *kgo.Record, err error) {
					switch {
					case err == nil:
						acked.Add(int64(len(rec.Value)))
					case os.Getenv("CONNMEM_DEBUG") != "":
						fmt.Fprintln(os.Stderr, err)
					case !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
						setErr(err)
					}
				})
			}
		}()
	}
	wg.Wait()
	n := acked.Load()
	errMu.Lock()
	defer errMu.Unlock()
	return n, firstEr
}
