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
	// The oldest frame may take its second chunk past the limit, the others not.
	checkfor.Eventually(t, 2*time.Second, "budget spent", func() error {
		used := ts.s.budget.Used()
		return checkfor.True(used >= budget && used <= budget+framebuf.ChunkBytes, "%d of %d charged", used, budget)
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

// bigProduce is an acks=1 produce of one partition whose records are n bytes.
func bigProduce(c *rawConn, n int) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = 1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = make([]byte, n)
	rp.Records[magicAt] = 2 // looks like a record batch, so the handler hands it to the Storage
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	c.corr++
	return encodeRequest(req, c.corr)
}

func TestHandledRequestsHoldTheBudget(t *testing.T) {
	const budget = 4 * framebuf.ChunkBytes
	ts := startServer(t, func(c *Config) {
		c.BufferBudget = budget
		c.ReadTimeout = 300 * time.Millisecond
	})
	gate := make(chan struct{})
	entered := make(chan int, 8)
	ts.storage.onProduce(func(_ string, _ int32, records []byte) error {
		entered <- len(records)
		<-gate
		return nil
	})
	opened := false
	defer func() {
		if !opened {
			close(gate)
		}
	}()
	// The first request fits the budget, the second goes past it as the oldest one arriving;
	// both are held by their handlers.
	var conns []*rawConn
	for i, n := range []int{2 * framebuf.ChunkBytes, 3 * framebuf.ChunkBytes} {
		c := dialRaw(t, ts.addr)
		c.write(t, bigProduce(c, n))
		if got := <-entered; got != n {
			t.Fatalf("request %d: handler saw %d bytes of records", i, got)
		}
		conns = append(conns, c)
	}
	held := ts.s.budget.Used()
	if held <= budget {
		t.Fatalf("two requests of 5 chunks in their handlers hold %d of a %d budget", held, budget)
	}
	// A third large request is not read while they are held: its connection stops reading.
	third := dialRaw(t, ts.addr)
	thirdReq := bigProduce(third, 2*framebuf.ChunkBytes)
	third.write(t, thirdReq[:framebuf.ChunkBytes])
	checkfor.Eventually(t, 2*time.Second, "third request waiting for the budget", func() error {
		return checkfor.True(ts.s.budget.Waiting() == 1, "%d waiting", ts.s.budget.Waiting())
	})
	// Small requests (control traffic) are answered meanwhile on any other connection.
	fresh := dialRaw(t, ts.addr)
	fresh.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	if r := fresh.roundTrip(t, kmsg.NewPtrInitProducerIDRequest()).(*kmsg.InitProducerIDResponse); r.ErrorCode != 0 {
		t.Fatalf("InitProducerID while the budget is held: error %d", r.ErrorCode)
	}
	// The wait is the server's backlog, not a slow peer: it outlasts the read timeout and the
	// connection stays open.
	past := time.Now().Add(3 * ts.s.cfg.ReadTimeout)
	checkfor.Eventually(t, 5*time.Second, "the read timeout passing", func() error {
		return checkfor.True(time.Now().After(past), "not yet")
	})
	if used := ts.s.budget.Used(); used != held || ts.s.budget.Waiting() != 1 {
		t.Fatalf("%d charged and %d waiting with the third request waiting, %d before", used, ts.s.budget.Waiting(), held)
	}
	select {
	case n := <-entered:
		t.Fatalf("a handler got %d bytes while the budget was held", n)
	default:
	}
	opened = true
	close(gate)
	for _, c := range conns {
		c.readFrame(t)
	}
	third.write(t, thirdReq[framebuf.ChunkBytes:])
	third.readFrame(t)
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		used := ts.s.budget.Used()
		return checkfor.True(used == 0, "%d still charged", used)
	})
}

func TestRequestLargerThanTheBudgetIsServed(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.BufferBudget = 4 * framebuf.ChunkBytes })
	ts.storage.onProduce(func(string, int32, []byte) error { return nil })
	c := dialRaw(t, ts.addr)
	c.write(t, bigProduce(c, 12*framebuf.ChunkBytes))
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 7
	body := c.readFrame(t)
	if err := resp.ReadFrom(body[4:]); err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("answer %v %+v", err, resp)
	}
	checkfor.Eventually(t, 2*time.Second, "budget released", func() error {
		used := ts.s.budget.Used()
		return checkfor.True(used == 0, "%d still charged", used)
	})
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
		rp.Records[magicAt] = 2
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		c.corr++
		c.write(t, encodeRequest(req, c.corr))
	}
	c := dialRaw(t, ts.addr)
	produce(c)
	c.expectClosed(t)
}
