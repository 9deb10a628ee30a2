package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// These tests run the real binary as a child process and attack it the way a peer on the same
// network could before logging in, measuring the child's resident memory from /proc.

const (
	hostileConns = 50
	readTimeout  = 2 * time.Second
	// rssSlack is what the acceptance allows above the configured budget.
	rssSlack = 64 << 20
)

// child runs the binary with args and returns its pid once addr accepts connections.
func child(t *testing.T, addr string, args ...string) int {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("child output:\n%s", testbin.TailFile(logf.Name(), 30))
		}
	})
	checkfor.Eventually(t, 20*time.Second, "child listening on "+addr, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
	return cmd.Process.Pid
}

// rss reads the child's resident set size.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// attack opens hostileConns connections to addr, writes prefix and then up to body bytes of
// the frame in 64 KiB pieces (the server stops taking them once its budget is spent), and waits
// for the server to close every one. It fails when the child's RSS passes limit at any sample,
// when a connection outlives the read timeout by more than a second, or when answer takes
// longer than a quick reply should while the connections are held.
func attack(t *testing.T, pid int, addr string, prefix []byte, body int, limit int64, answer func() error) {
	t.Helper()
	conns := make([]net.Conn, hostileConns)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	start := time.Now()
	piece := make([]byte, 64<<10)
	var wg sync.WaitGroup
	closedAfter := make([]time.Duration, len(conns))
	for i, c := range conns {
		wg.Go(func() {
			_ = c.SetWriteDeadline(start.Add(readTimeout + time.Second))
			if _, err := c.Write(prefix); err != nil {
				return
			}
			for sent := 0; sent < body; sent += len(piece) {
				if _, err := c.Write(piece[:min(len(piece), body-sent)]); err != nil {
					break
				}
			}
			// The server answers nothing and closes.
			_ = c.SetReadDeadline(start.Add(readTimeout + 3*time.Second))
			_, err := io.Copy(io.Discard, c)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				closedAfter[i] = -1
				return
			}
			closedAfter[i] = time.Since(start)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var peak int64
	answered := false
	for sampling := true; sampling; {
		select {
		case <-done:
			sampling = false
		case <-time.After(50 * time.Millisecond):
		}
		peak = max(peak, rss(t, pid))
		if !answered && time.Since(start) > readTimeout/2 {
			answered = true
			t0 := time.Now()
			if err := answer(); err != nil {
				t.Fatalf("fresh client while %d connections are held: %v", hostileConns, err)
			}
			if d := time.Since(t0); d > 500*time.Millisecond {
				t.Errorf("fresh client answered after %v", d)
			}
		}
	}
	t.Logf("peak RSS %d MiB (limit %d MiB) with %d connections each sending %d bytes", peak>>20, limit>>20, hostileConns, len(prefix)+body)
	if peak > limit {
		t.Errorf("peak RSS %d MiB above %d MiB", peak>>20, limit>>20)
	}
	for i, d := range closedAfter {
		if d < 0 || d > readTimeout+time.Second {
			t.Fatalf("connection %d: closed after %v (-1: not at all) with a %v read timeout", i, d, readTimeout)
		}
	}
	if err := answer(); err != nil {
		t.Fatalf("fresh client after the attack: %v", err)
	}
}

// answers is a check that dials addr afresh, sends req and lets read judge the reply.
func answers(addr string, req []byte, read func(net.Conn) error) func() error {
	return func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(req); err != nil {
			return err
		}
		return read(c)
	}
}

// kafkaAnswers sends ApiVersions v0 on a fresh connection and reads the answer.
func kafkaAnswers(addr string) func() error {
	return answers(addr, []byte{0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 7, 0, 0}, func(c net.Conn) error {
		var head [8]byte
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return err
		}
		if corr := binary.BigEndian.Uint32(head[4:]); corr != 7 {
			return fmt.Errorf("correlation id %d", corr)
		}
		return nil
	})
}

// iggyAnswers sends a ping on a fresh connection and reads the reply.
func iggyAnswers(addr string) func() error {
	return answers(addr, iggyHeader(wire.HeaderSize), func(c net.Conn) error {
		frame, err := wire.ReadFrame(c, nil)
		if err != nil {
			return err
		}
		var rh wire.ReplyHeader
		if err := rh.Decode(frame); err != nil {
			return err
		}
		if rh.Status != wire.OK {
			return fmt.Errorf("ping status %v", rh.Status)
		}
		return nil
	})
}

// iggyHeader is a ping header claiming a frame of size bytes.
func iggyHeader(size uint32) []byte {
	h := wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1, Client: wire.Uint128{Lo: 5}}
	h.Size = size
	var b [wire.HeaderSize]byte
	h.Encode(&b)
	return bytes.Clone(b[:])
}

func skipWithoutProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc")
	}
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
}

func TestHostileKafkaConnectionsCostBoundedMemory(t *testing.T) {
	skipWithoutProc(t)
	const budget = 128 << 20
	addrs := freeport.Addrs(t, 2)
	addr, store := addrs[0], addrs[1]
	pid := child(t, addr, "serve", "--bind", addr, "--store-listen", store, "--data", t.TempDir(),
		"--read-timeout", readTimeout.String(), "--buffer-budget", strconv.Itoa(budget), "--log-level", "error")
	claim := binary.BigEndian.AppendUint32(nil, 100<<20)
	t.Run("claimed size only", func(t *testing.T) {
		attack(t, pid, addr, claim, 0, budget+rssSlack, kafkaAnswers(addr))
	})
	t.Run("slow partial frames", func(t *testing.T) {
		// 50 x 6 MiB is more than the budget: some connections find it spent.
		attack(t, pid, addr, claim, 6<<20, budget+rssSlack, kafkaAnswers(addr))
	})
}

func TestHostileIggyConnectionsCostBoundedMemory(t *testing.T) {
	skipWithoutProc(t)
	const budget = 64 << 20
	addr := freeport.Addr(t)
	pid := child(t, addr, "store", "--listen", addr, "--data", t.TempDir(),
		"--read-timeout", readTimeout.String(), "--buffer-budget", strconv.Itoa(budget), "--log-level", "error")
	claim := iggyHeader(wire.MaxFrameSize)
	t.Run("claimed size only", func(t *testing.T) {
		attack(t, pid, addr, claim, 0, budget+rssSlack, iggyAnswers(addr))
	})
	t.Run("slow partial frames", func(t *testing.T) {
		attack(t, pid, addr, claim, 4<<20, budget+rssSlack, iggyAnswers(addr))
	})
}
