package iggy_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// A client whose Config.Dial reaches an embedded store in memory works as
// over TCP, with large batches both ways, and finds a restarted store again:
// the pool drops connections the old store closed before using them.
func TestEmbeddedInProcessDial(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	cur := startStore(t, dir, "")
	memDial := func(ctx context.Context, _ string) (net.Conn, error) {
		mu.Lock()
		s := cur
		mu.Unlock()
		return s.Dial(ctx)
	}
	c := dial(t, "in-process", iggy.Config{PoolSize: 2, Dial: memDial})
	ctx := ctxT(t)
	st := okv(c.CreateStream(ctx, "s")).get(t)
	sid, tid := wire.NumericID(st.ID), wire.NamedID("t")
	okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{})).get(t)

	sendBigAndPoll(t, c, sid, tid)

	cur.Stop()
	mu.Lock()
	cur = startStore(t, dir, "")
	mu.Unlock()
	if got := okv(c.GetStream(ctx, wire.NamedID("s"))).get(t); got.Name != "s" {
		t.Fatalf("stream after restart %+v", got)
	}
	okv(c.CreateStream(ctx, "after")).get(t)

	// A dial error surfaces as unavailability.
	failing := iggy.Config{Addrs: []string{"x"}, Dial: func(context.Context, string) (net.Conn, error) {
		return nil, errors.New("no store")
	}}
	if _, err := iggy.Dial(ctx, failing); !errors.Is(err, iggy.ErrUnavailable) {
		t.Fatalf("Dial with a failing dialer: %v", err)
	}
}

// sendBigAndPoll sends twelve 1 MiB messages from four goroutines at once and polls them back.
func sendBigAndPoll(t *testing.T, c *iggy.Client, sid, tid wire.Identifier) {
	t.Helper()
	ctx := ctxT(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for range 3 {
				if _, err := c.SendMessages(ctx, sid, tid, 0, []iggy.Message{{Payload: big}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 100})).get(t)
	got, _ := payloads(t, p)
	p.Release()
	if len(got) != 12 || got[11] != string(big) {
		t.Fatalf("polled %d messages", len(got))
	}
}
