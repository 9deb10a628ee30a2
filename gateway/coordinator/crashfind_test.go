package coordinator

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Three gateways split the log and the owner of log partition p crashes: its lease session
// ends and it announces nothing more. A survivor that has read the membership without it, before
// the gateway the lease now gives p to has claimed p, knows no owner of p; its FindCoordinator
// must name that gateway, which answers a code clients retry, and not answer
// COORDINATOR_NOT_AVAILABLE. franz-go's classic member whose heartbeat found the crashed
// coordinator's port closed looks the coordinator up again, and gives its session up when two
// lookups in a row fail: a dial of the crashed gateway (kgo still lists it) then that answer
// (docs/reliability.md, "What a SIGKILL costs each client"). On a fake clock: lease and owner
// reads happen only when the test asks for them.
func TestFindCoordinatorAfterOwnerCrash(t *testing.T) {
	s := newStore(t)
	clk := clock.NewFake(time.Now())
	const bound = time.Second
	cfg := func(c *Config) {
		c.Clock = clk
		c.LeasePoll, c.TailPoll = time.Hour, time.Millisecond
		c.LeaseBound, c.HandoverBound = 10*time.Second, bound
		c.AnnounceInterval, c.FollowInterval = time.Hour, time.Hour
	}
	a := start(t, s, 1, cfg)
	driveUntil(t, a, "a serves all", func() error { return servesAll(a) })
	b := start(t, s, 2, cfg)
	c := start(t, s, 3, cfg)
	all := []*Coordinator{a, b, c}
	// Each reads the others' announcements (their lease members), then its lease: a gives b's
	// and c's shares away, and they claim them HandoverBound after their gain and serve two
	// tail polls after the claim. The clock moves only here, half a bound per step.
	waitServing(t, "the three split the log", func() error {
		for _, g := range all {
			if err := g.readOwners(ctxT(t)); err != nil {
				return err
			}
		}
		confirmLeases(t, clk, all...)
		na, nb, nc := len(serving(a)), len(serving(b)), len(serving(c))
		if na > 0 && nb > 0 && nc > 0 && na+nb+nc == 16 && settled(a) && settled(b) && settled(c) {
			return nil
		}
		clk.Advance(bound / 2)
		return fmt.Errorf("a %d, b %d, c %d", na, nb, nc)
	})
	for _, g := range all {
		if err := g.readOwners(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	var p int
	for q := range serving(a) {
		p = q
		break
	}
	group := groupIn(p, "g")
	find := func(g *Coordinator) kmsg.FindCoordinatorResponseCoordinator {
		t.Helper()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKeys = 4, []string{group}
		resp, err := g.Groups().FindCoordinator(ctxT(t), kafkaIdentity(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Coordinators[0]
	}
	for _, g := range []*Coordinator{b, c} {
		if r := find(g); r.ErrorCode != 0 || r.NodeID != 1 {
			t.Fatalf("FindCoordinator at node %d before the crash: node %d code %d, want node 1", g.cfg.NodeID, r.NodeID, r.ErrorCode)
		}
	}

	_ = a.Close()
	// The survivors' next lease reads find a gone; the lease gives p to one of them (next),
	// which holds it loading until HandoverBound has passed on the clock, which stands still.
	// a's session ends in the store while the two read their leases one after the other, so
	// one may gain p before the other has read a lease without a: wait for both.
	var next, other *Coordinator
	checkfor.Eventually(t, 10*time.Second, "a survivor gains p and both count a gone", func() error {
		clk.Advance(time.Millisecond)
		confirmLeases(t, clk, b, c)
		next = nil
		for _, g := range []*Coordinator{b, c} {
			if part(g, p) != nil {
				next = g
			}
			g.mu.Lock()
			aliveA := g.fv.Alive(1, clk.Now())
			g.mu.Unlock()
			if aliveA {
				return fmt.Errorf("node %d still counts a live", g.cfg.NodeID)
			}
		}
		return checkfor.True(next != nil, "neither b nor c holds %d", p)
	})
	other = b
	if next == b {
		other = c
	}
	other.mu.Lock()
	_, _, owned := other.fv.Owner(p, clk.Now(), other.cfg.NodeID)
	aliveA := other.fv.Alive(1, clk.Now())
	other.mu.Unlock()
	if owned || aliveA {
		t.Fatalf("node %d knows an owner of %d (%v) or still counts a live (%v): the test does not reach the window it is about", other.cfg.NodeID, p, owned, aliveA)
	}

	for _, g := range []*Coordinator{other, next} {
		if r := find(g); r.ErrorCode != 0 || r.NodeID != next.cfg.NodeID || r.Port != 9000+next.cfg.NodeID {
			t.Errorf("FindCoordinator at node %d after a's crash: node %d port %d code %d (%s), want node %d (the lease's) with no error",
				g.cfg.NodeID, r.NodeID, r.Port, r.ErrorCode, kerr.ErrorForCode(r.ErrorCode), next.cfg.NodeID)
		}
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, "m", 1
	resp, err := next.Groups().Heartbeat(ctxT(t), kafkaIdentity(), hb)
	if err != nil {
		t.Fatal(err)
	}
	// The codes kgo's coordinator requests drop the coordinator for and look it up again.
	if code := resp.ErrorCode; code != kerr.CoordinatorLoadInProgress.Code && code != kerr.NotCoordinator.Code {
		t.Errorf("Heartbeat at node %d while p loads: code %d (%s), want COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR", next.cfg.NodeID, code, kerr.ErrorForCode(code))
	}
}
