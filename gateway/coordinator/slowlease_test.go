package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// lagLink is a link to the store on which every request takes lag on a fake clock: each write
// moves the clock lag ahead before it goes out, so the answer arrives lag after it was sent,
// whatever the machine's load. Nothing else moves the clock, so every time the test checks is
// a sum of lags.
type lagLink struct {
	clk *clock.Fake
	lag atomic.Int64 // ns
}

type lagConn struct {
	net.Conn
	l *lagLink
}

func (c lagConn) Write(b []byte) (int, error) {
	c.l.clk.Advance(time.Duration(c.l.lag.Load()))
	return c.Conn.Write(b)
}

// client is an Iggy client of s whose connections go through the link.
func (l *lagLink) client(t *testing.T, s *testStore) *iggy.Client {
	t.Helper()
	c, err := iggy.Dial(ctxT(t), iggy.Config{Addrs: []string{"memory"}, PoolSize: 1,
		Dial: func(ctx context.Context, _ string) (net.Conn, error) {
			nc, err := s.st.Load().Dial(ctx)
			if err != nil {
				return nil, err
			}
			return lagConn{Conn: nc, l: l}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// slowLeaseGateway starts a gateway whose lease session goes through link, on link's fake
// clock, reading its lease only when kicked (LeasePoll an hour): the test paces every read. Its
// announcements stay live for an hour, since the fake clock runs ahead of the other gateways'.
func slowLeaseGateway(t *testing.T, s *testStore, link *lagLink, node int32) *Coordinator {
	t.Helper()
	lc := link.client(t, s)
	return start(t, s, node, func(c *Config) {
		c.Clock = link.clk
		c.Dial = lc.Session
		c.LeasePoll, c.HeartbeatInterval = time.Hour, 10*time.Hour
		c.TailPoll = 10 * time.Millisecond
		c.Live = time.Hour
		c.standDownAfter = 0 // the default, slowLeaseFactor x HandoverBound
	})
}

func holdsNone(c *Coordinator) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, pt := range c.parts {
		if pt != nil {
			return fmt.Errorf("it still holds partition %d", p)
		}
	}
	return checkfor.True(c.standby.Load(), "it has not stood down")
}

// A gateway whose lease confirmations all come late (every lease read takes HandoverBound, so
// its partitions keep lapsing) stands down once they have come late for 20 x HandoverBound
// while another gateway serves, and not before: it holds no partition, and the other gateway,
// no longer counting it in the lease, serves all 16. Once its reads come back in time again (a
// fifth of HandoverBound each) for 20 x HandoverBound, and not before, it takes part again and
// serves its share. All the times are on the slow gateway's fake clock, moved only by its lease reads.
func TestSlowLeaseStandsDownAndComesBack(t *testing.T) {
	s := newStore(t)
	link := &lagLink{clk: clock.NewFake(time.Now())}
	a := slowLeaseGateway(t, s, link, 1)
	hb := a.cfg.HandoverBound
	link.lag.Store(int64(hb / 5))
	bound := slowLeaseFactor * hb
	driveUntil(t, a, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	b := start(t, s, 2, func(c *Config) { c.Live = time.Hour })
	driveUntil(t, a, "a and b share the partitions", func() error {
		sa, sb := serving(a), serving(b)
		return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == 16, "a %d b %d", len(sa), len(sb))
	})

	// A long quick stretch before the link turns slow: what it counted must not bring the
	// gateway back as soon as it stood down.
	quickEnd := link.clk.Now().Add(3 * bound)
	driveUntil(t, a, "a long quick stretch", func() error {
		return checkfor.True(!link.clk.Now().Before(quickEnd), "%v to go", quickEnd.Sub(link.clk.Now()))
	})

	link.lag.Store(int64(hb))
	slowAt := link.clk.Now()
	driveUntil(t, a, "a stands down", func() error { return holdsNone(a) })
	downAt := link.clk.Now()
	// Every confirmation comes 2 x HandoverBound after the one before; the lease first lapsed
	// at slowAt + HandoverBound - a fifth of it. The upper bound adds the last read, the leave
	// and the reads made before the test looked.
	if d := downAt.Sub(slowAt); d < bound || d > bound+6*hb {
		t.Fatalf("stood down %v after its reads turned slow, want %v to %v", d, bound, bound+6*hb)
	}
	t.Logf("stood down %v after its reads turned slow (bound %v)", downAt.Sub(slowAt), bound)
	waitServing(t, "b serves all", func() error { return checkfor.True(len(serving(b)) == 16, "%d", len(serving(b))) })

	link.lag.Store(int64(hb / 5))
	quickAt := link.clk.Now()
	driveUntil(t, a, "a takes part again", func() error {
		return checkfor.True(!a.standby.Load(), "still standing down")
	})
	joinAt := link.clk.Now()
	// The first quick read still comes late (the slow one before it took HandoverBound); every
	// later one comes in time. The upper bound adds the reads made before the test looked.
	if d := joinAt.Sub(quickAt); d < bound || d > bound+4*hb {
		t.Fatalf("took part again %v after its reads turned quick, want %v to %v", d, bound, bound+4*hb)
	}
	t.Logf("took part again %v after its reads turned quick", joinAt.Sub(quickAt))
	driveUntil(t, a, "a serves its share again", func() error {
		sa, sb := serving(a), serving(b)
		return checkfor.True(len(sa) > 0 && len(sa)+len(sb) == 16, "a %d b %d", len(sa), len(sb))
	})
}

// The watch's two counts, answer by answer: a single confirmation in time ends a run of late
// ones, and a quick stretch tolerates one late confirmation in lateTolerance but no more.
func TestLeaseWatchCounts(t *testing.T) {
	const hb = 300 * time.Millisecond
	bound := slowLeaseFactor * hb
	at := time.Unix(1000, 0)
	w := newLeaseWatch(hb, bound)
	// read answers one read that took took; the next is sent 100 ms after the answer.
	read := func(took time.Duration) {
		sent := at
		at = at.Add(took)
		w.answered(sent, at)
		at = at.Add(100 * time.Millisecond)
	}
	read(time.Millisecond)
	lapsed := at.Add(-100*time.Millisecond - time.Millisecond).Add(hb)
	for !at.After(lapsed.Add(bound)) {
		if w.slow(at) {
			t.Fatalf("slow at %v, %v after the lease lapsed", at, at.Sub(lapsed))
		}
		read(200 * time.Millisecond)
	}
	if !w.slow(at.Add(-100 * time.Millisecond)) {
		t.Fatalf("not slow %v after the lease lapsed, every confirmation late", at.Sub(lapsed))
	}
	read(time.Millisecond) // late still: the one before took 200 ms
	read(time.Millisecond)
	if w.slow(at) {
		t.Fatal("still slow after a confirmation in time")
	}
	w.stoodDown()
	// A read that takes HandoverBound makes two confirmations late, its own and the next one's.
	// One such read in 4 x lateTolerance (one late confirmation in 2 x lateTolerance): quick
	// after the bound.
	start := at
	for i := 0; !w.quick(at); i++ {
		if at.Sub(start) > 2*bound {
			t.Fatal("never quick with one late confirmation in 20")
		}
		if i%(4*lateTolerance) == 4*lateTolerance-1 {
			read(hb)
		} else {
			read(time.Millisecond)
		}
	}
	if d := at.Sub(start); d < bound {
		t.Fatalf("quick %v after the stand-down, before the bound %v", d, bound)
	}
	// One such read in lateTolerance/2 (two late confirmations in 5): never quick.
	w.stoodDown()
	start = at
	for i := 0; at.Sub(start) < 3*bound; i++ {
		if i%(lateTolerance/2) == 0 {
			read(hb)
		} else {
			read(time.Millisecond)
		}
		if w.quick(at) {
			t.Fatalf("quick %v after the stand-down with two late confirmations in 5", at.Sub(start))
		}
	}
}

// A gateway alone in the fleet never stands down, however late its confirmations come: nobody
// else could serve its partitions.
func TestSlowLeaseAloneKeepsItsPartitions(t *testing.T) {
	s := newStore(t)
	link := &lagLink{clk: clock.NewFake(time.Now())}
	a := slowLeaseGateway(t, s, link, 1)
	hb := a.cfg.HandoverBound
	link.lag.Store(int64(hb / 5))
	driveUntil(t, a, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	link.lag.Store(int64(hb))
	end := link.clk.Now().Add(3 * slowLeaseFactor * hb)
	driveUntil(t, a, "three times the stand-down bound of late reads", func() error {
		return checkfor.True(!link.clk.Now().Before(end), "%v to go", end.Sub(link.clk.Now()))
	})
	if a.standby.Load() {
		t.Fatal("the only gateway stood down")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for p, pt := range a.parts {
		if pt == nil {
			t.Errorf("the only gateway gave partition %d up", p)
		}
	}
}

// cutConn is a connection to the store whose writes fail while cut is set.
type cutConn struct {
	net.Conn
	cut *atomic.Bool
}

func (c cutConn) Write(b []byte) (int, error) {
	if c.cut.Load() {
		_ = c.Conn.Close()
		return 0, errors.New("the link is cut")
	}
	return c.Conn.Write(b)
}

// cutClient is an Iggy client of s that gets no answer while cut is set.
func cutClient(t *testing.T, s *testStore, cut *atomic.Bool) *iggy.Client {
	t.Helper()
	c, err := iggy.Dial(ctxT(t), iggy.Config{Addrs: []string{"memory"}, PoolSize: 4,
		Dial: func(ctx context.Context, _ string) (net.Conn, error) {
			if cut.Load() {
				return nil, errors.New("the link is cut")
			}
			nc, err := s.st.Load().Dial(ctx)
			if err != nil {
				return nil, err
			}
			return cutConn{Conn: nc, cut: cut}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A gateway that stood down stays down while its reads of the others' announcements get no
// answer, however long, as long as its lease reads show the others' members: it has heard
// nothing new of them, which tells nothing. Judged on its clock alone, their last announcements
// aged past Live and it took part again "as no other gateway serves", taking partitions that
// were served only to load them over its slow link and stand down again (scenario d of
// docs/reliability.md: 7.8 s without a coordinator).
func TestSlowLeaseStoodDownHearingNothing(t *testing.T) {
	s := newStore(t)
	link := &lagLink{clk: clock.NewFake(time.Now())}
	var cut atomic.Bool
	lc := link.client(t, s)
	const live = 30 * time.Second
	a := start(t, s, 1, func(c *Config) {
		c.Client = cutClient(t, s, &cut)
		c.Clock = link.clk
		c.Dial = lc.Session
		c.LeasePoll, c.HeartbeatInterval = time.Hour, 10*time.Hour
		c.TailPoll = 10 * time.Millisecond
		c.Live = live
		c.standDownAfter = 0 // the default, slowLeaseFactor x HandoverBound
	})
	hb := a.cfg.HandoverBound
	link.lag.Store(int64(hb / 5))
	driveUntil(t, a, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	b := start(t, s, 2, func(c *Config) { c.Live = time.Hour })
	driveUntil(t, a, "a and b share the partitions", func() error {
		sa, sb := serving(a), serving(b)
		return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == 16, "a %d b %d", len(sa), len(sb))
	})
	link.lag.Store(int64(hb))
	driveUntil(t, a, "a stands down", func() error { return holdsNone(a) })
	waitServing(t, "b serves all", func() error { return checkfor.True(len(serving(b)) == 16, "%d", len(serving(b))) })
	// Stand-down took tens of lease reads on a's fake clock, which runs ahead of b's: b's
	// announcements must still be live on it when the cut begins, or the test proves nothing.
	if ahead := time.Until(link.clk.Now()); ahead > live/2 {
		t.Fatalf("a's clock ran %v ahead of b's before the cut, want under %v", ahead, live/2)
	}
	cut.Store(true)
	end := link.clk.Now().Add(2 * live)
	driveUntil(t, a, "twice Live of lease reads hearing nothing of b", func() error {
		if !a.standby.Load() {
			return nil
		}
		return checkfor.True(!link.clk.Now().Before(end), "%v to go", end.Sub(link.clk.Now()))
	})
	if !a.standby.Load() {
		t.Fatalf("a took part again within %v of the cut of its announcement reads (Live %v), b serving %d partitions", 2*live, live, len(serving(b)))
	}
	if n := len(serving(b)); n != 16 {
		t.Fatalf("b serves %d partitions, want 16", n)
	}
}
