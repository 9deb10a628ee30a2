package coordinator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// requestDrain appends what `iggy-kafka drain node N [--undo]` appends.
func requestDrain(t *testing.T, cl *iggy.Client, node int32, undo bool) {
	t.Helper()
	b := fmt.Appendf(nil, `{"node":%d,"undo":%v,"time":%q}`, node, undo, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := cl.SendMessages(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(fleet.DrainsTopic), 0, []iggy.Message{{Payload: b}}); err != nil {
		t.Fatal(err)
	}
}

// slowHandover makes the HandoverBound wait long, so that a handover by the release path is
// also much faster than one by the wait (a measurement the test logs, not a bound it checks).
func slowHandover(cfg *Config) { cfg.HandoverBound = 5 * time.Second }

// A drained gateway releases every partition to the other without the HandoverBound wait, stays
// live and listed, leads nothing in Metadata, does not join again after a restart while drained,
// and takes partitions again after the undo.
func TestDrainReleasesStaysLiveAndUndo(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, slowHandover)
	var (
		mu       sync.Mutex
		promoted = map[int]bool{} // b's partitions: served with the previous owner's release known
	)
	b := start(t, s, 2, func(c *Config) {
		slowHandover(c)
		c.onServe = func(p int, released bool) {
			mu.Lock()
			promoted[p] = released
			mu.Unlock()
		}
	})
	td, err := cl.GetTopic(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(fleet.DrainsTopic))
	if err != nil || td.PartitionsCount != 1 {
		t.Fatalf("%s: %+v %v", fleet.DrainsTopic, td, err)
	}
	waitServing(t, "split", func() error {
		return checkfor.True(len(serving(a))+len(serving(b)) == 16 && len(serving(a)) > 0 && len(serving(b)) > 0,
			"a %d b %d", len(serving(a)), len(serving(b)))
	})
	fromA := serving(a)
	requested := time.Now()
	requestDrain(t, cl, 1, false)
	waitServing(t, "b serving all 16", func() error {
		return checkfor.True(len(serving(a)) == 0 && len(serving(b)) == 16, "a %d b %d", len(serving(a)), len(serving(b)))
	})
	t.Logf("drain handed a's partitions to b within %v (HandoverBound %v)", time.Since(requested), b.cfg.HandoverBound)
	// Every partition a held was served by b on a's release, not after the wait.
	mu.Lock()
	for p := range fromA {
		if released, ok := promoted[p]; !ok || !released {
			t.Errorf("partition %d: b served it without a's release known (served %v)", p, ok)
		}
	}
	mu.Unlock()
	waitServing(t, "b sees a live, listed and draining", func() error {
		b.mu.Lock()
		ann, _ := b.fv.Announcement(1)
		b.mu.Unlock()
		live := b.Fleet().View().Live
		return checkfor.True(ann.Draining && !ann.Leaving && len(ann.Claims) == 0 && len(live) == 2 && slices.Contains(b.Fleet().View().Draining, 1) && !slices.Contains(b.Fleet().View().Draining, 2),
			"announcement %+v live %v", ann, live)
	})
	if a.sess.Load() != nil {
		t.Fatal("the drained gateway kept its lease session")
	}
	waitServing(t, "a leads nothing in its own view", func() error {
		return checkfor.True(slices.Contains(a.Fleet().View().Draining, 1), "%+v", a.Fleet().View())
	})

	// A restart while drained reads the drain before joining: no session, no partition.
	_ = a.Close()
	a = start(t, s, 1, slowHandover)
	if a.sess.Load() != nil || !a.dr.self.Load() {
		t.Fatal("a drained gateway joined kafka-gateways at start")
	}
	if n := len(serving(b)); n != 16 {
		t.Fatalf("b serves %d after the drained gateway restarted", n)
	}

	requestDrain(t, cl, 1, true)
	waitServing(t, "a takes partitions again after the undo", func() error {
		return checkfor.True(len(serving(a)) > 0 && len(serving(a))+len(serving(b)) == 16 && !slices.Contains(b.Fleet().View().Draining, 1),
			"a %d b %d", len(serving(a)), len(serving(b)))
	})
	waitServing(t, "b sees a no longer draining", func() error {
		b.mu.Lock()
		ann, _ := b.fv.Announcement(1)
		b.mu.Unlock()
		return checkfor.True(!ann.Draining && len(ann.Claims) > 0, "%+v", ann)
	})
}

// The operator forced a drain of the last gateway: it still leaves, and nobody coordinates.
func TestDrainLastGatewayLeaves(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, nil)
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	requestDrain(t, cl, 1, false)
	waitServing(t, "a serves none", func() error {
		return checkfor.True(len(serving(a)) == 0 && a.sess.Load() == nil, "%d", len(serving(a)))
	})
	if _, _, _, code := (directory{a}).Coordinator("g", 0); code != 15 {
		t.Fatalf("FindCoordinator with every gateway drained: %d, want 15", code)
	}
}

// Only the latest request per node in log order counts; a corrupt one is skipped.
func TestDrainRequestsLatestWins(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, nil)
	send := func(p string) {
		t.Helper()
		if _, err := cl.SendMessages(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(fleet.DrainsTopic), 0, []iggy.Message{{Payload: []byte(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	// The undo of node 3 carries an older time than its drain: log order still wins.
	send(`{"node":3,"undo":false,"time":"2030-01-01T00:00:00Z"}`)
	send(`{"node":3,"undo":true,"time":"2020-01-01T00:00:00Z"}`)
	send(`{"node":4}`)
	send(`{"undo":false}`)
	send(`not json`)
	send(`{"node":5,"undo":false}`)
	waitServing(t, "the drained set", func() error {
		got := []bool{slices.Contains(a.Fleet().View().Draining, 0), slices.Contains(a.Fleet().View().Draining, 1), slices.Contains(a.Fleet().View().Draining, 3), slices.Contains(a.Fleet().View().Draining, 4), slices.Contains(a.Fleet().View().Draining, 5)}
		return checkfor.True(fmt.Sprint(got) == "[false false false true true]", "nodes 0 1 3 4 5 draining: %v", got)
	})
}

// After Leave, WaitHandedOver returns once another gateway holds and serves every log partition
// the leaving gateway released, so FindCoordinator anywhere names it.
func TestWaitHandedOver(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, nil)
	b := start(t, s, 2, nil)
	waitServing(t, "a and b serve every partition between them", func() error {
		sa, sb := serving(a), serving(b)
		return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == record.Partitions, "a %d b %d", len(sa), len(sb))
	})
	if err := a.Leave(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.WaitHandedOver(ctx)
	if ctx.Err() != nil {
		t.Fatal("WaitHandedOver ran out of time")
	}
	for p, o := range b.Owners() {
		if o.Node != 2 {
			t.Fatalf("WaitHandedOver returned with log partition %d owned by %d in b's view", p, o.Node)
		}
	}
}
