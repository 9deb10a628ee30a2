package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// testStore is an embedded store on a temporary directory, reached in memory.
type testStore struct {
	st atomic.Pointer[teststore.Store]
}

func newStore(t *testing.T) *testStore {
	t.Helper()
	s := &testStore{}
	s.st.Store(teststore.Start(t, nil))
	return s
}

// restart stops the store and starts it again on its data: every connection to it breaks.
func (s *testStore) restart(t *testing.T) {
	t.Helper()
	old := s.st.Load()
	_ = old.Stop()
	s.st.Store(teststore.Start(t, func(c *store.Config) { c.DataDir = old.Dir }))
}

func (s *testStore) client(t *testing.T) *iggy.Client {
	t.Helper()
	c, err := iggy.Dial(ctxT(t), iggy.Config{Addrs: []string{"memory"}, PoolSize: 4,
		Dial: func(ctx context.Context, _ string) (net.Conn, error) { return s.st.Load().Dial(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start runs a coordinator of node id on s with the given overrides.
func start(t *testing.T, s *testStore, node int32, mod func(*Config)) *Coordinator {
	t.Helper()
	cfg := Config{
		Client: s.client(t), Stream: "kafka", NodeID: node, Host: "127.0.0.1", Port: 9000 + node,
		Log: true, Logger: testLogger(),
		AnnounceInterval: 50 * time.Millisecond, FollowInterval: 20 * time.Millisecond, LeasePoll: 20 * time.Millisecond,
		// Well above a lease read and a manager's close under -race on a loaded machine, where
		// 3 x LeasePoll (60 ms) made a confirmation or a release miss its bound now and then.
		HandoverBound: 250 * time.Millisecond,
		// Out of reach but in the tests of slowlease_test.go (Config.standDownAfter).
		standDownAfter: time.Hour,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testLogger discards, or with COORDINATOR_TEST_LOG=1 writes to stderr (to follow a failure).
func testLogger() *slog.Logger {
	if os.Getenv("COORDINATOR_TEST_LOG") == "1" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// serving is the set of partitions c serves now.
func serving(c *Coordinator) map[int]bool {
	out := map[int]bool{}
	for p, o := range c.Owners() {
		if o.Node == c.cfg.NodeID && o.Serving {
			out[p] = true
		}
	}
	return out
}

// settled reports whether every partition c holds is served (none loading or waiting).
func settled(c *Coordinator) bool {
	c.mu.Lock()
	parts := c.parts
	c.mu.Unlock()
	for _, pt := range parts {
		if pt != nil && !pt.serving() {
			return false
		}
	}
	return true
}

// confirmLeases has each gateway read its lease now, on clk as it stands (gateways whose
// LeasePoll is out of reach read it only when kicked).
// driveUntil kicks a's lease loop, one read per check, until done holds: on a fake clock lease
// reads never come by themselves, and a partition whose load failed (a slow store read on a
// loaded machine) is loaded again at the next one.
func driveUntil(t *testing.T, a *Coordinator, what string, done func() error) {
	t.Helper()
	checkfor.Eventually(t, 20*time.Second, what, func() error {
		err := done()
		if err != nil {
			a.kickLease()
		}
		return err
	})
}

// servesAll tells whether c serves all 16 log partitions.
func servesAll(c *Coordinator) error {
	n := len(serving(c))
	return checkfor.True(n == 16, "node %d serves %d partitions", c.cfg.NodeID, n)
}

func confirmLeases(t *testing.T, clk clock.Clock, cs ...*Coordinator) {
	t.Helper()
	for _, c := range cs {
		checkfor.Eventually(t, 10*time.Second, fmt.Sprintf("node %d confirms its lease", c.cfg.NodeID), func() error {
			if c.confirmed.Load() < clk.Now().UnixNano() {
				c.kickLease()
				return errors.New("not yet")
			}
			return nil
		})
	}
}

func waitServing(t *testing.T, what string, check func() error) {
	t.Helper()
	checkfor.Eventually(t, 10*time.Second, what, check)
}

// part returns the serving partition entry of c for p.
func part(c *Coordinator, p int) *partition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parts[p]
}

// groupIn finds a group id that lives in log partition p.
func groupIn(p int, prefix string) string {
	for i := 0; ; i++ {
		g := prefix + "-" + strconv.Itoa(i)
		if record.Partition(g) == p {
			return g
		}
	}
}

// fullReplay folds log partition p from its first record.
func fullReplay(t *testing.T, cl *iggy.Client, c *Coordinator, p int) *record.State {
	t.Helper()
	st := record.NewState()
	src := logio.Poll{C: cl, P: logio.Partition{Stream: c.meta, Topic: c.topic, ID: uint32(p)}}
	if _, err := logio.Replay(ctxT(t), src, st, 0, -1, nil, nil); err != nil {
		t.Fatal(err)
	}
	return st
}

func brokerOf(node int32) kafka.Broker {
	return kafka.Broker{NodeID: node, Host: "127.0.0.1", Port: 9000 + node}
}

func kafkaIdentity() kafka.Identity { return kafka.Identity{ClientID: "test"} }

// heldClock tells one time for good while its timers run in real time. On it a gateway's lease
// confirmation never ages, so a single gateway's test of checkpoints or topics is never fenced
// because a loaded machine made one lease read slower than HandoverBound ("lease not confirmed
// within the bound"). The age of the lease has tests of its own on a clock.Fake
// (TestStaleLeaseStopsServing). A single gateway gains every partition from nobody and serves it
// at once, so no HandoverBound wait depends on the time moving either.
type heldClock struct{ at time.Time }

func (h heldClock) Now() time.Time                                { return h.at }
func (heldClock) NewTimer(d time.Duration) clock.Timer            { return clock.Real.NewTimer(d) }
func (heldClock) AfterFunc(d time.Duration, f func()) clock.Timer { return clock.Real.AfterFunc(d, f) }

// heldLease runs a gateway on a heldClock.
func heldLease(c *Config) { c.Clock = heldClock{at: time.Now()} }
