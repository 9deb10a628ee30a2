package store

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// claimingHeader is a ping header whose size field claims size bytes.
func claimingHeader(size uint32) []byte {
	h := requestFrame(wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, nil)
	binary.LittleEndian.PutUint32(h[frameSizeAt:], size)
	return h
}

// closedWithin reads nc until the server closes it and returns how long that took.
func closedWithin(t *testing.T, nc net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = nc.SetReadDeadline(start.Add(limit))
	var b [512]byte
	for {
		_, err := nc.Read(b[:])
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("connection still open after %v", limit)
		}
		return time.Since(start)
	}
}

func TestFrameSizeFieldMatchesWire(t *testing.T) {
	f := make([]byte, wire.HeaderSize+7)
	wire.PutFrameSize(f)
	if got := binary.LittleEndian.Uint32(f[frameSizeAt:]); got != uint32(len(f)) {
		t.Fatalf("size field at %d reads %d, want %d", frameSizeAt, got, len(f))
	}
}

func TestClaimedFrameCostsNothingAndTimesOut(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	bystander := loggedIn(t, s)
	var conns []*rawClient
	for range 20 {
		c := dial(t, s)
		if _, err := c.nc.Write(claimingHeader(wire.MaxFrameSize)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	ok(t, bystander.do(wire.CmdPing, nil))
	if used := s.netBudget.Used(); used != 0 {
		t.Fatalf("headers alone charged %d bytes to the budget", used)
	}
	for _, c := range conns {
		if d := closedWithin(t, c.nc, 3*time.Second); d > 2*time.Second {
			t.Fatalf("closed after %v with a 300ms read timeout", d)
		}
	}
	ok(t, bystander.do(wire.CmdPing, nil))
}

func TestBudgetSpentStopsReadingAndCloses(t *testing.T) {
	const budget = 4 * framebuf.ChunkBytes
	s := startServer(t, t.TempDir(), func(c *Config) {
		c.BufferBudget = budget
		c.ReadTimeout = 500 * time.Millisecond
	})
	bystander := loggedIn(t, s)
	part := make([]byte, 3*framebuf.ChunkBytes/2)
	var conns []*rawClient
	for range 4 {
		c := dial(t, s)
		if _, err := c.nc.Write(append(claimingHeader(wire.MaxFrameSize), part...)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// The oldest frame may take its second chunk past the limit, the others not.
	checkfor.Eventually(t, 2*time.Second, "budget spent", func() error {
		used := s.netBudget.Used()
		return checkfor.True(used >= budget && used <= budget+framebuf.ChunkBytes, "%d of %d charged", used, budget)
	})
	// Small requests do not need the budget.
	ok(t, bystander.do(wire.CmdPing, nil))
	for _, c := range conns {
		closedWithin(t, c.nc, 3*time.Second)
	}
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		if used := s.netBudget.Used(); used != 0 {
			return errors.New("still charged")
		}
		return nil
	})
	// A large frame that arrives whole is served once the budget is free again.
	mustCreateStream(t, bystander, "big")
	mustCreateTopic(t, bystander, wire.NamedID("big"), "big", 1)
	big := make([]byte, 3*framebuf.ChunkBytes)
	ok(t, bystander.do(wire.CmdSendMessages, sendBody(wire.NamedID("big"), wire.NamedID("big"), wire.Partitioning{}, batchOf(t, string(big)))))
}

func TestIdleBeforeLoginCloses(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *Config) { c.LoginTimeout = 200 * time.Millisecond })
	start := time.Now()
	idle := dial(t, s)
	authed := loggedIn(t, s)
	closedWithin(t, idle.nc, 3*time.Second)
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Fatalf("closed after %v, before the 200ms login timeout", d)
	}
	// A session has no idle limit: well past the login timeout it still answers.
	deadline := time.Now().Add(600 * time.Millisecond)
	checkfor.Eventually(t, 2*time.Second, "time passing", func() error {
		if time.Now().Before(deadline) {
			return errors.New("waiting")
		}
		return nil
	})
	ok(t, authed.do(wire.CmdPing, nil))
}

func TestInProcessConnectionIsBounded(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	nc, err := s.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write(append(claimingHeader(wire.MaxFrameSize), make([]byte, framebuf.ChunkBytes)...)); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 2*time.Second, "in-process budget charged", func() error {
		if s.memBudget.Used() == 0 {
			return errors.New("nothing charged")
		}
		return nil
	})
	if s.netBudget.Used() != 0 {
		t.Fatal("the in-process frame was charged to the network budget")
	}
	closedWithin(t, nc, 3*time.Second)
	var b [1]byte
	if _, err := nc.Read(b[:]); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
}

// gatedConn writes the first first bytes of its next write, then the rest once gate closes.
type gatedConn struct {
	net.Conn
	first int
	gate  chan struct{}
}

func (g *gatedConn) Write(b []byte) (int, error) {
	if g.gate == nil || len(b) <= g.first {
		return g.Conn.Write(b)
	}
	n, err := g.Conn.Write(b[:g.first])
	if err != nil {
		return n, err
	}
	<-g.gate
	g.gate = nil
	m, err := g.Conn.Write(b[g.first:])
	return n + m, err
}

func TestHandledFrameHoldsTheBudget(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *Config) { c.BufferBudget = 16 * framebuf.ChunkBytes })
	c := loggedIn(t, s)
	mustCreateStream(t, c, "held")
	mustCreateTopic(t, c, wire.NamedID("held"), "held", 1)
	gate := make(chan struct{})
	c.nc = &gatedConn{Conn: c.nc, first: wire.HeaderSize + framebuf.ChunkBytes + 1, gate: gate}
	big := string(make([]byte, 3*framebuf.ChunkBytes))
	body := sendBody(wire.NamedID("held"), wire.NamedID("held"), wire.Partitioning{}, batchOf(t, big))
	done := make(chan reply, 1)
	go func() {
		r, err := c.try(wire.CmdSendMessages, body)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	// The frame is arriving, so the connection is past the session check that precedes a
	// frame; holding the server's lock now stops the handler, not the read.
	checkfor.Eventually(t, 2*time.Second, "frame arriving", func() error {
		return checkfor.True(s.netBudget.Used() > 0, "nothing charged")
	})
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	close(gate)
	size := int64(len(body))
	checkfor.Eventually(t, 2*time.Second, "whole frame charged", func() error {
		return checkfor.True(s.netBudget.Used() >= size, "%d charged for a frame of %d", s.netBudget.Used(), size)
	})
	if used := s.netBudget.Used(); used < size || len(done) != 0 {
		t.Fatalf("while its handler waits: %d charged for a frame of %d, answered %v", used, size, len(done) != 0)
	}
	locked = false
	s.mu.Unlock()
	ok(t, <-done)
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		return checkfor.True(s.netBudget.Used() == 0, "%d still charged", s.netBudget.Used())
	})
}

func TestFrameLargerThanTheBudgetIsServed(t *testing.T) {
	s := startServer(t, t.TempDir(), func(c *Config) { c.BufferBudget = 4 * framebuf.ChunkBytes })
	c := loggedIn(t, s)
	mustCreateStream(t, c, "big")
	mustCreateTopic(t, c, wire.NamedID("big"), "big", 1)
	big := string(make([]byte, 12*framebuf.ChunkBytes))
	ok(t, c.do(wire.CmdSendMessages, sendBody(wire.NamedID("big"), wire.NamedID("big"), wire.Partitioning{}, batchOf(t, big))))
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		return checkfor.True(s.netBudget.Used() == 0, "%d still charged", s.netBudget.Used())
	})
}
