package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
)

// A leaving gateway asks the others' Metadata whether they still name it leader: while it has
// not left, gateway 1 names gateway 2 leader of some partitions, and the wait gives up at its
// bound (on a fake clock) with an error naming one; once gateway 2 has left the coordinator's
// group, gateway 1 stops naming it and the wait ends without one.
func TestWaitLeadersMovedAsksTheOthers(t *testing.T) {
	base := freeport.Consecutive(t, 2)
	f, err := StartFleet(testCtx(t), fleetConfig(base, t.TempDir()), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Shutdown(testCtx(t)) })
	gws := f.Gateways()
	cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if r, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 8, 1, nil, "moved"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	g2 := gws[1]
	checkfor.Eventually(t, 10*time.Second, "gateway 1 names gateway 2 leader", func() error {
		if g2.namesMeLeader(testCtx(t), gws[0].Addr().String()) == nil {
			return checkfor.True(false, "gateway 1 names gateway 2 leader of nothing")
		}
		return nil
	})
	clk := clock.NewFake(time.Now())
	done := make(chan error, 1)
	go func() { done <- g2.waitLeadersMoved(testCtx(t), clk) }()
	checkfor.Eventually(t, 10*time.Second, "the wait gives up at its bound", func() error {
		clk.Advance(leadersMovedBound)
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "names node 2 leader of ") {
				t.Fatalf("waitLeadersMoved before the leave: %v, want an error naming a partition", err)
			}
			return nil
		default:
			return checkfor.True(false, "still waiting")
		}
	})
	if err := g2.coord.Leave(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := g2.waitLeadersMoved(testCtx(t), clock.Real); err != nil {
		t.Fatalf("waitLeadersMoved after the leave: %v", err)
	}
	if err := g2.namesMeLeader(testCtx(t), gws[0].Addr().String()); err != nil {
		t.Fatalf("after the wait: %v", err)
	}
}

// Without the coordinator log a gateway's leave is never read by the others, which go on naming
// it leader: the wait returns at once, with no error, and the clock never moves.
func TestWaitLeadersMovedWithoutTheLog(t *testing.T) {
	cfg := fleetConfig(freeport.Consecutive(t, 2), t.TempDir())
	cfg.CoordinatorLog = false
	f, err := StartFleet(testCtx(t), cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Shutdown(testCtx(t)) })
	gws := f.Gateways()
	cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if r, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 8, 1, nil, "static"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if gws[1].namesMeLeader(testCtx(t), gws[0].Addr().String()) == nil {
		t.Fatal("gateway 1 names gateway 2 leader of nothing: the test does not reach its case")
	}
	if err := gws[1].waitLeadersMoved(testCtx(t), clock.NewFake(time.Now())); err != nil {
		t.Fatalf("waitLeadersMoved without the log: %v", err)
	}
}
