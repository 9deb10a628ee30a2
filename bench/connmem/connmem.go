// Package connmem measures what a gateway process holds in memory for its connections and its
// producers: it runs the real binary (`iggy-kafka serve` with the embedded store, --fsync never,
// data in a temporary directory) as a child process and reads VmRSS from /proc/<pid>/status at
// three points (idle; after Conns idle Kafka connections sent one ApiVersions each; the peak
// while Producers franz-go clients produce for Duration). bench/cmd/connmem prints it for one or
// more binaries; the benchmark (package bench) takes its memory goals from it. Linux only.
package connmem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/bench/child"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config is one measurement's load.
type Config struct {
	Runs, Conns, Producers, Partitions, Value, PoolSize int
	Duration                                            time.Duration
	Logs                                                string   // directory for the children's output, "" to drop it
	Args, Env                                           []string // extra serve arguments; the children's own environment
}

// Default is the load of the memory goals: 3 runs, 1,000 idle connections, 50 producers of
// 1 KiB random values over 50 partitions for 10 s.
func Default() Config {
	return Config{Runs: 3, Conns: 1000, Producers: 50, Partitions: 50, Value: 1024, PoolSize: 256, Duration: 10 * time.Second}
}

// Result is one run's figures; memory in bytes.
type Result struct {
	Idle, WithConns, PerConn, Peak, PeakAnon, HWM int64
	MBps                                          float64
}

// Pool is cfg.PoolSize random values of cfg.Value bytes for the producers.
func Pool(cfg Config) [][]byte {
	pool := make([][]byte, cfg.PoolSize)
	for i := range pool {
		pool[i] = make([]byte, cfg.Value)
		for j := range pool[i] {
			pool[i][j] = byte(rand.Uint32())
		}
	}
	return pool
}

// Median is the median of f over rs.
func Median(rs []Result, f func(Result) int64) int64 {
	v := make([]int64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// Measure runs one child of bin (an iggy-kafka binary) from start to kill; its output goes to logPath, or is dropped when
// that is empty.
func Measure(bin, logPath string, cfg Config, pool [][]byte) (Result, error) {
	var res Result
	dir, err := os.MkdirTemp("", "connmem-data")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	addrs, err := child.FreeAddrs(2)
	if err != nil {
		return res, err
	}
	addr, store := addrs[0], addrs[1]
	if logPath == "" {
		logPath = filepath.Join(dir, "gateway.log")
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return res, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--bind", addr, "--advertised-addr", addr, "--store-listen", store,
		"--data", filepath.Join(dir, "data"), "--fsync", "never", "--log-level", "warn"}, cfg.Args...)...)
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+dir), cfg.Env...)
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
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, int32(cfg.Partitions), 1, nil, topic); err != nil {
		adm.Close()
		return res, fmt.Errorf("create topic: %w", err)
	}
	adm.Close()

	if res.Idle, err = child.Status(pid, "VmRSS"); err != nil {
		return res, err
	}
	conns, err := idleConns(addr, cfg.Conns)
	if err != nil {
		return res, err
	}
	if res.WithConns, err = child.Status(pid, "VmRSS"); err != nil {
		return res, err
	}
	res.PerConn = (res.WithConns - res.Idle) / int64(cfg.Conns)
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
			if v, err := child.Status(pid, "VmRSS"); err == nil && v > peak.Load() {
				peak.Store(v)
			}
			if v, err := child.Status(pid, "RssAnon"); err == nil && v > peakAnon.Load() {
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
	res.Peak, res.PeakAnon = peak.Load(), peakAnon.Load()
	res.MBps = float64(bytes) / cfg.Duration.Seconds() / 1e6
	res.HWM, err = child.Status(pid, "VmHWM")
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

// produce runs the producers for cfg.Duration and returns the value bytes acknowledged.
func produce(ctx context.Context, addr, topic string, cfg Config, pool [][]byte) (int64, error) {
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
	clients := make([]*kgo.Client, cfg.Producers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic))
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.Duration)
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
