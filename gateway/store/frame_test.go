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
	checkfor.Eventually(t, 2*time.Second, "budget spent", func() error {
		if used := s.netBudget.Used(); used != budget {
			return errors.New("budget not spent yet")
		}
		return nil
	})
	if used := s.netBudget.Used(); used > budget {
		t.Fatalf("budget of %d holds %d", budget, used)
	}
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
