package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/framebuf"
)

// closedWithin waits for the server to close c and returns how long that took.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	var b [512]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("connection still open after %v", limit)
			}
			return time.Since(start)
		}
	}
}

func sizePrefix(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

func TestClaimedRequestCostsNothingAndTimesOut(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	var conns []*rawConn
	for range 20 {
		c := dialRaw(t, ts.addr)
		c.write(t, sizePrefix(100<<20))
		conns = append(conns, c)
	}
	fresh := dialRaw(t, ts.addr)
	fresh.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	if used := ts.s.budget.Used(); used != 0 {
		t.Fatalf("size prefixes alone charged %d bytes", used)
	}
	for _, c := range conns {
		if d := closedWithin(t, c.Conn, 3*time.Second); d > 2*time.Second {
			t.Fatalf("closed after %v with a 300ms read timeout", d)
		}
	}
	fresh.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
}

func TestRequestBudgetSpentStopsReadingAndCloses(t *testing.T) {
	const budget = 4 * framebuf.ChunkBytes
	ts := startServer(t, func(c *Config) {
		c.BufferBudget = budget
		c.ReadTimeout = 500 * time.Millisecond
	})
	part := make([]byte, 3*framebuf.ChunkBytes/2)
	var conns []*rawConn
	for range 4 {
		c := dialRaw(t, ts.addr)
		c.write(t, append(sizePrefix(100<<20), part...))
		conns = append(conns, c)
	}
	checkfor.Eventually(t, 2*time.Second, "budget spent", func() error {
		if used := ts.s.budget.Used(); used != budget {
			return errors.New("not spent")
		}
		return nil
	})
	fresh := dialRaw(t, ts.addr)
	fresh.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	for _, c := range conns {
		closedWithin(t, c.Conn, 3*time.Second)
	}
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		if used := ts.s.budget.Used(); used != 0 {
			return errors.New("still charged")
		}
		return nil
	})
	// A large request that arrives whole still goes through.
	req := kmsg.NewPtrMetadataRequest()
	name := string(make([]byte, 3*framebuf.ChunkBytes/4))
	for range 4 {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
	}
	req.AllowAutoTopicCreation = false
	fresh.roundTrip(t, req)
}

func TestIdleTimeouts(t *testing.T) {
	t.Run("before SASL authentication", func(t *testing.T) {
		ts := startServer(t, func(c *Config) {
			c.SASL = true
			c.Authenticate = func(_ context.Context, _, _ string) (Storage, error) { return nil, errors.New("no") }
			c.AuthIdleTimeout = 200 * time.Millisecond
		})
		start := time.Now()
		c := dialRaw(t, ts.addr)
		closedWithin(t, c.Conn, 3*time.Second)
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Fatalf("closed after %v, before its 200ms", d)
		}
	})
	t.Run("authenticated", func(t *testing.T) {
		ts := startServer(t, func(c *Config) { c.IdleTimeout = 300 * time.Millisecond })
		c := dialRaw(t, ts.addr)
		c.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
		// The idle time counts from after the answer was written, so from before it is read.
		start := time.Now()
		closedWithin(t, c.Conn, 3*time.Second)
		if d := time.Since(start); d < 250*time.Millisecond {
			t.Fatalf("closed after %v, before its 300ms", d)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		ts := startServer(t, nil)
		cfg := ts.s.cfg
		if cfg.IdleTimeout != 10*time.Minute || cfg.ReadTimeout != defaultReadTimeout || cfg.AuthIdleTimeout != defaultAuthIdleTimeout || cfg.BufferBudget != defaultBufferBudget {
			t.Fatalf("defaults %v %v %v %d", cfg.IdleTimeout, cfg.ReadTimeout, cfg.AuthIdleTimeout, cfg.BufferBudget)
		}
	})
}

func TestUnknownAPIKeyCloses(t *testing.T) {
	ts := startServer(t, nil)
	c := dialRaw(t, ts.addr)
	c.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	c.write(t, rawRequest(999, 0, 13, nil))
	c.expectClosed(t)
}

func TestRefusedAcksZeroProduceCloses(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.onProduce(func(string, int32, []byte) error { return kerr.CorruptMessage })
	produce := func(c *rawConn) {
		req := kmsg.NewPtrProduceRequest()
		req.Version = 7
		req.Acks = 0
		req.TimeoutMillis = 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = make([]byte, 70)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		c.corr++
		c.write(t, encodeRequest(req, c.corr))
	}
	c := dialRaw(t, ts.addr)
	produce(c)
	c.expectClosed(t)
}
