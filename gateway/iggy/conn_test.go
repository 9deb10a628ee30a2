package iggy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialFake(t *testing.T, f *fakeServer, cfg Config) *Client {
	t.Helper()
	cfg.Addrs = []string{f.addr()}
	c, err := Dial(testContext(t), cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestDialAndPing(t *testing.T) {
	f := newFakeServer(t, "")
	c := dialFake(t, f, Config{})
	for i := 0; i < 3; i++ {
		if err := c.Ping(testContext(t)); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
	}
	if got := f.logins.Load(); got != 1 {
		t.Fatalf("logins = %d, want 1 (pool fills on demand)", got)
	}
}

func TestBadPasswordIsInvalidCredentials(t *testing.T) {
	f := newFakeServer(t, "")
	f.password = "secret"
	_, err := Dial(testContext(t), Config{Addrs: []string{f.addr()}})
	if !errors.Is(err, wire.InvalidCredentials) {
		t.Fatalf("Dial with a wrong password: %v, want InvalidCredentials", err)
	}
}

func TestTokenLogin(t *testing.T) {
	f := newFakeServer(t, "")
	c := dialFake(t, f, Config{Token: "token"})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	_, err := Dial(testContext(t), Config{Addrs: []string{f.addr()}, Token: "wrong"})
	if !errors.Is(err, wire.InvalidCredentials) {
		t.Fatalf("Dial with a wrong token: %v", err)
	}
}

func TestNoServerIsUnavailable(t *testing.T) {
	f := newFakeServer(t, "")
	addr := f.addr()
	f.close()
	_, err := Dial(testContext(t), Config{Addrs: []string{addr}, DialTimeout: time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Dial to a closed port: %v, want ErrUnavailable", err)
	}
}

func TestConcurrentCallersShareThePool(t *testing.T) {
	f := newFakeServer(t, "")
	c := dialFake(t, f, Config{PoolSize: 3})
	var wg sync.WaitGroup
	var failures atomic.Int64
	for g := 0; g < 12; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := c.Ping(testContext(t)); err != nil {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Fatalf("%d pings failed", n)
	}
	if got := f.logins.Load(); got > 3 {
		t.Fatalf("logins = %d, want at most the pool size 3", got)
	}
}

func TestReconnectAfterServerRestart(t *testing.T) {
	f := newFakeServer(t, "")
	addr := f.addr()
	c := dialFake(t, f, Config{PoolSize: 2})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	f.close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := c.Ping(ctx)
	cancel()
	if err == nil {
		t.Fatal("ping succeeded with the server down")
	}
	f2 := newFakeServer(t, addr)
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatalf("ping after restart: %v", err)
	}
	if f2.logins.Load() == 0 {
		t.Fatal("the client did not log in again after the restart")
	}
}

func TestContextDeadlineBoundsACall(t *testing.T) {
	f := newFakeServer(t, "")
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Code == wire.CmdGetStats {
			<-hang
			return nil, 0, false
		}
		return nil, wire.OK, true
	}
	c := dialFake(t, f, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.api.run(ctx, &call{cmd: wire.CmdGetStats}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("call took %v despite a 100ms deadline", d)
	}
	// The pool recovers: the broken connection is replaced.
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatalf("ping after a timed-out call: %v", err)
	}
}

func TestRequestTimeoutWithoutContextDeadline(t *testing.T) {
	f := newFakeServer(t, "")
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Code == wire.CmdGetClusterMetadata {
			return nil, wire.FeatureUnavailable, true
		}
		<-hang
		return nil, 0, false
	}
	c := dialFake(t, f, Config{RequestTimeout: 100 * time.Millisecond})
	err := c.api.run(context.Background(), &call{cmd: wire.CmdGetStats}, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("err = %v, want DeadlineExceeded and ErrConnectionLost", err)
	}
}

func TestBrokenWriteIsNotResentButReadIs(t *testing.T) {
	f := newFakeServer(t, "")
	var writes, reads atomic.Int64
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		switch {
		case h.Operation == wire.OpCreateStream:
			writes.Add(1)
			return nil, 0, false // drop the connection: outcome unknown
		case h.Code == wire.CmdGetStreams:
			if reads.Add(1) == 1 {
				return nil, 0, false
			}
			return nil, wire.OK, true
		}
		return nil, wire.OK, true
	}
	c := dialFake(t, f, Config{PoolSize: 1})
	err := c.api.run(testContext(t), &call{cmd: wire.CmdCreateStream, body: []byte{1, 'x'}}, nil)
	if !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("write on a dropped connection: %v, want ErrConnectionLost", err)
	}
	if n := writes.Load(); n != 1 {
		t.Fatalf("server saw the write %d times, want exactly 1", n)
	}
	if err := c.api.run(testContext(t), &call{cmd: wire.CmdGetStreams}, nil); err != nil {
		t.Fatalf("read should be resent once on a fresh connection: %v", err)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("server saw the read %d times, want 2", n)
	}
}

func TestStatusAndResultCodesAreTyped(t *testing.T) {
	f := newFakeServer(t, "")
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		switch {
		case h.Code == wire.CmdGetStats:
			return nil, wire.Unauthorized, true
		case h.Operation == wire.OpCreateStream:
			// A committed rejection: framed body with one result entry.
			return []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xf4, 0x03, 0, 0}, wire.OK, true
		}
		return nil, wire.OK, true
	}
	c := dialFake(t, f, Config{})
	if err := c.api.run(testContext(t), &call{cmd: wire.CmdGetStats}, nil); !errors.Is(err, wire.Unauthorized) {
		t.Fatalf("status error: %v", err)
	}
	err := c.api.run(testContext(t), &call{cmd: wire.CmdCreateStream, body: []byte{1, 'x'}}, nil)
	if !errors.Is(err, wire.StreamNameAlreadyExists) {
		t.Fatalf("result entry error: %v", err)
	}
	// Neither breaks the connection.
	if err := c.Ping(testContext(t)); err != nil || f.logins.Load() != 1 {
		t.Fatalf("ping: %v, logins %d", err, f.logins.Load())
	}
}

func TestLeaderFollowing(t *testing.T) {
	follower := newFakeServer(t, "")
	leader := newFakeServer(t, "")
	nodes := clusterReply(
		fakeNode{addr: follower.addr(), role: 1},
		fakeNode{addr: leader.addr(), role: 0},
	)
	follower.nodes, leader.nodes = nodes, nodes
	c := dialFake(t, follower, Config{})
	if got := c.Leader(); got != leader.addr() {
		t.Fatalf("Leader() = %s, want %s", got, leader.addr())
	}
	before := leader.requests.Load()
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if leader.requests.Load() == before {
		t.Fatal("ping did not go to the leader")
	}
}

func TestLeaderFollowingStaysOnSingleNodeOrError(t *testing.T) {
	a := newFakeServer(t, "")
	other := newFakeServer(t, "")
	a.nodes = clusterReply(fakeNode{addr: other.addr(), role: 0})
	c := dialFake(t, a, Config{})
	if got := c.Leader(); got != a.addr() {
		t.Fatalf("single node roster: Leader() = %s, want to stay on %s", got, a.addr())
	}
	b := newFakeServer(t, "") // answers metadata with an error
	c2 := dialFake(t, b, Config{})
	if got := c2.Leader(); got != b.addr() {
		t.Fatalf("metadata error: Leader() = %s, want %s", got, b.addr())
	}
	if other.logins.Load() != 0 {
		t.Fatal("a single-node roster must not redirect")
	}
}

func TestEvictionMapsToCodeAndDropsConnection(t *testing.T) {
	f := newFakeServer(t, "")
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Code == wire.CmdGetClusterMetadata {
			return nil, wire.FeatureUnavailable, true
		}
		return nil, wire.OK, true
	}
	f.evictOn = wire.CmdGetStats
	c := dialFake(t, f, Config{PoolSize: 1})
	err := c.api.run(testContext(t), &call{cmd: wire.CmdGetStats}, nil)
	if !errors.Is(err, wire.StaleClient) {
		t.Fatalf("eviction: %v, want StaleClient", err)
	}
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if got := f.logins.Load(); got != 2 {
		t.Fatalf("logins = %d, want 2 (a new session after the eviction)", got)
	}
}

func TestOversizedRequestIsRefusedLocally(t *testing.T) {
	f := newFakeServer(t, "")
	c := dialFake(t, f, Config{PoolSize: 1})
	before := f.requests.Load()
	batch := make([]byte, wire.MaxFrameSize)
	err := c.api.run(testContext(t), &call{cmd: wire.CmdSendMessages, body: []byte{0}, tail: batch}, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized send: %v, want ErrTooLarge", err)
	}
	if f.requests.Load() != before {
		t.Fatal("an oversized request reached the server")
	}
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
}

// A cluster that lists no healthy leader is polled every leaderlessPoll on Config.Clock for
// leaderlessBudget, then the connection fails as unavailable.
func TestLeaderlessClusterFailsAfterBudget(t *testing.T) {
	a := newFakeServer(t, "")
	b := newFakeServer(t, "")
	nodes := clusterReply(fakeNode{addr: a.addr(), role: 1}, fakeNode{addr: b.addr(), role: 1})
	a.nodes, b.nodes = nodes, nodes
	clk := clock.NewFake(time.Unix(1e9, 0))
	type dialed struct {
		c   *Client
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		c, err := Dial(testContext(t), Config{Addrs: []string{a.addr()}, Clock: clk})
		done <- dialed{c, err}
	}()
	// Each poll waits on a timer of the clock: advance it poll by poll until Dial gives up.
	var waited time.Duration
	var d dialed
	for got := false; !got; {
		checkfor.Eventually(t, 5*time.Second, "the leader wait's timer, or Dial's end", func() error {
			select {
			case d = <-done:
				got = true
				return nil
			default:
			}
			return checkfor.True(clk.Timers() == 1, "%d timers after %v", clk.Timers(), waited)
		})
		if !got {
			clk.Advance(leaderlessPoll)
			waited += leaderlessPoll
		}
	}
	if waited < leaderlessBudget || waited > leaderlessBudget+leaderlessPoll {
		t.Fatalf("Dial gave up on a leader after %v on the clock, budget %v", waited, leaderlessBudget)
	}
	// No leader: no connection, since a follower refuses writes and may answer reads from
	// behind what the cluster acknowledged.
	if !errors.Is(d.err, ErrUnavailable) || !strings.Contains(fmt.Sprint(d.err), "no healthy leader") {
		t.Fatalf("Dial to a leaderless cluster: %v, %v; want ErrUnavailable naming no healthy leader", d.c, d.err)
	}
	if b.logins.Load() != 0 {
		t.Fatal("moved to a follower")
	}
}

// The reconnect backoff runs on Config.Clock: with the server gone, a call dials again at once,
// then waits backoffMin on the clock before the next dial, then twice that.
func TestReconnectBackoffOnClock(t *testing.T) {
	f := newFakeServer(t, "")
	clk := clock.NewFake(time.Unix(1e9, 0))
	var dials atomic.Int32
	c := dialFake(t, f, Config{PoolSize: 1, Clock: clk, DialTimeout: time.Minute,
		Dial: func(ctx context.Context, addr string) (net.Conn, error) {
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		}})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	f.close()
	base := dials.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Ping(ctx) }()
	waitDial := func(n int32) {
		t.Helper()
		checkfor.Eventually(t, 5*time.Second, fmt.Sprintf("dial %d, then a backoff timer", n), func() error {
			return checkfor.True(dials.Load() == base+n && clk.Timers() == 1, "%d dials, %d timers", dials.Load()-base, clk.Timers())
		})
	}
	waitDial(1)
	for i, backoff := range []time.Duration{backoffMin, 2 * backoffMin} {
		clk.Advance(backoff - time.Nanosecond)
		if n := dials.Load() - base; n != int32(i+1) {
			t.Fatalf("dialled %d times before backoff %v passed on the clock", n, backoff)
		}
		clk.Advance(time.Nanosecond)
		waitDial(int32(i + 2))
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("ping succeeded with the server down")
	}
}

func TestIdleConnectionClosedByServerIsNotSpentOnAWrite(t *testing.T) {
	old := idleProbeAfter
	idleProbeAfter = 0
	t.Cleanup(func() { idleProbeAfter = old })
	f := newFakeServer(t, "")
	var writes atomic.Int64
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Operation == wire.OpCreateStream {
			writes.Add(1)
			return wire.AppendResultOK(nil), wire.OK, true
		}
		return nil, wire.OK, true
	}
	c := dialFake(t, f, Config{PoolSize: 1})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	f.dropConns()
	err := c.api.run(testContext(t), &call{cmd: wire.CmdCreateStream, body: []byte{1, 'x'}}, nil)
	if err != nil {
		t.Fatalf("write after the server dropped the idle connection: %v", err)
	}
	if writes.Load() != 1 || f.logins.Load() != 2 {
		t.Fatalf("writes %d logins %d, want 1 and 2", writes.Load(), f.logins.Load())
	}
}

// TestRefusedProtocolVersionSaysBoth checks that a server refusing our protocol version (Iggy
// 0.10 speaks 0.12 and refuses 0.11 clients at login) is reported in one sentence naming both
// versions, with the IncompatibleProtocolVersion code.
func TestRefusedProtocolVersionSaysBoth(t *testing.T) {
	f := newFakeServer(t, "")
	f.window = [2]uint32{wire.PackVersion(0, 12, 1), wire.PackVersion(0, 12, 0)}
	_, err := Dial(testContext(t), Config{Addrs: []string{f.addr()}})
	if !errors.Is(err, wire.IncompatibleProtocolVersion) {
		t.Fatalf("Dial: %v, want IncompatibleProtocolVersion", err)
	}
	for _, want := range []string{"binary protocol 0.12.1", "from 0.12.0", "refuses this gateway's 0.11.0", f.addr()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// TestLoginNamesTheGateway checks that the gateway announces itself, not another SDK, at login.
func TestLoginNamesTheGateway(t *testing.T) {
	f := newFakeServer(t, "")
	var name string
	var mu sync.Mutex
	f.observe = func(h *wire.RequestHeader, body []byte) {
		if h.Operation != wire.OpRegister {
			return
		}
		r := wire.NewReader(body)
		r.U32("version")
		mu.Lock()
		name = r.Name("sdk")
		mu.Unlock()
	}
	c := dialFake(t, f, Config{})
	if err := c.Ping(testContext(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if name != "iggy-kafka" {
		t.Fatalf("login announced SDK %q, want iggy-kafka", name)
	}
}

// TestWritesFollowTheNewLeader: after a leader change the node the client settled on answers
// writes with TransientNotAccepted; the client gives that connection up within
// notAcceptedRecheck, asks the cluster for its leader and sends the write there, instead of
// resending it to the follower until its 30 s deadline.
func TestWritesFollowTheNewLeader(t *testing.T) {
	oldLeader, newLeader := newFakeServer(t, ""), newFakeServer(t, "")
	var changed atomic.Bool
	metadata := func() []byte {
		if changed.Load() {
			return clusterReply(fakeNode{addr: oldLeader.addr(), role: wire.RoleFollower}, fakeNode{addr: newLeader.addr(), role: wire.RoleLeader})
		}
		return clusterReply(fakeNode{addr: oldLeader.addr(), role: wire.RoleLeader}, fakeNode{addr: newLeader.addr(), role: wire.RoleFollower})
	}
	var applied atomic.Int64
	handle := func(node *fakeServer) func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		return func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
			if h.Operation == wire.OpNonReplicated && h.Code == wire.CmdGetClusterMetadata {
				return metadata(), wire.OK, true
			}
			if (node == oldLeader) == changed.Load() {
				return nil, wire.TransientNotAccepted, true
			}
			applied.Add(1)
			return []byte{0, 0, 0, 0}, wire.OK, true
		}
	}
	oldLeader.handle, newLeader.handle = handle(oldLeader), handle(newLeader)
	c := dialFake(t, oldLeader, Config{PoolSize: 1, RequestTimeout: 30 * time.Second})
	ctx := testContext(t)
	if err := c.DeleteStream(ctx, wire.NumericID(1)); err != nil {
		t.Fatalf("write on the leader: %v", err)
	}
	changed.Store(true)
	start := time.Now()
	if err := c.DeleteStream(ctx, wire.NumericID(2)); err != nil {
		t.Fatalf("write after the leader change: %v", err)
	}
	took := time.Since(start)
	t.Logf("the write reached the new leader after %v", took)
	if got := c.Leader(); got != newLeader.addr() {
		t.Fatalf("Leader() = %s, want the new leader %s", got, newLeader.addr())
	}
	if took > 5*time.Second {
		t.Fatalf("the write took %v to reach the new leader", took)
	}
	if n := applied.Load(); n != 2 {
		t.Fatalf("%d writes applied, want 2 (each once)", n)
	}
}

// TestUnansweredLoginAndDuplicateReply: a login the server leaves without a reply is dialled
// again; a reply a server sends twice for one request number is skipped by the next request.
func TestUnansweredLoginAndDuplicateReply(t *testing.T) {
	f := newFakeServer(t, "")
	var logins, deletes atomic.Int64
	f.copies = func(h *wire.RequestHeader) int {
		switch {
		case h.Operation == wire.OpRegister && logins.Add(1) == 1:
			return 0 // the first login gets no reply
		case h.Operation == wire.OpDeleteStream && deletes.Add(1) == 1:
			return 2 // the first write is answered twice
		}
		return 1
	}
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		if h.Operation == wire.OpNonReplicated && h.Code == wire.CmdGetClusterMetadata {
			return nil, wire.FeatureUnavailable, true
		}
		return []byte{0, 0, 0, 0}, wire.OK, true
	}
	c := dialFake(t, f, Config{PoolSize: 1})
	if n := logins.Load(); n != 2 {
		t.Fatalf("%d logins, want 2 (the first got no reply and was dialled again)", n)
	}
	ctx := testContext(t)
	for i := range 2 {
		if err := c.DeleteStream(ctx, wire.NumericID(uint32(i+1))); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping after a duplicate reply: %v", err)
	}
}
