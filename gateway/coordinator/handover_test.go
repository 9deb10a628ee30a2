package coordinator

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// answers reports whether c answers as coordinator of group g now.
func answers(c *Coordinator, g string) bool {
	_, code := (directory{c}).Manager(g)
	return code == 0
}

// When a gateway joins kafka-gateways, Iggy moves partitions away from a live owner at once,
// and the owner learns it only at its next lease read. The gaining gateway waits (HandoverBound
// after the sync answer, or the owner's release) so that at no moment do both answer for one
// partition: a sampler asks a, then b, then a again, and a partition answered by all three
// is a moment when both served it. The old owner's tail is off, so only the lease and the wait
// keep them apart.
func TestRebalanceNeverServesTwice(t *testing.T) {
	s := newStore(t)
	// HandoverBound keeps the product's ratio to LeasePoll (3 x, Config.defaults): with the
	// helper's 250 ms the lease stays fresh only 50 ms past each 200 ms read, so on a loaded
	// machine a lease read slower than that makes every partition stop serving for a moment,
	// and a claim appended after it is fenced and tried again at the next lease read.
	slow := func(c *Config) { c.LeasePoll, c.HandoverBound = 200*time.Millisecond, 600*time.Millisecond }
	a := start(t, s, 1, func(c *Config) { slow(c); c.TailPoll = time.Hour })
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	groups := make([]string, record.Partitions)
	for p := range groups {
		groups[p] = groupIn(p, "rebalance")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var both []string
	var b atomic.Pointer[Coordinator]
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			bc := b.Load()
			if bc == nil {
				continue
			}
			for p, g := range groups {
				if answers(a, g) && answers(bc, g) && answers(a, g) {
					mu.Lock()
					both = append(both, fmt.Sprintf("partition %d at %s", p, time.Now().Format("15:04:05.000000")))
					mu.Unlock()
				}
			}
		}
	}()
	bc := start(t, s, 2, slow)
	b.Store(bc)
	waitServing(t, "b serves its share, a the rest", func() error {
		sa, sb := serving(a), serving(bc)
		return checkfor.True(len(sb) > 0 && len(sa)+len(sb) == 16, "a %d b %d", len(sa), len(sb))
	})
	stop.Store(true)
	wg.Wait()
	if len(both) > 0 {
		t.Fatalf("both gateways answered as coordinator %d times: %s", len(both), strings.Join(both[:min(5, len(both))], ", "))
	}
}

// takenOver waits until b serves a partition p and a no longer answers for a group of p named
// from prefix, and returns both.
func takenOver(t *testing.T, a, b *Coordinator, prefix string) (int, string) {
	t.Helper()
	var p int
	waitServing(t, "b serves a partition", func() error {
		for q := range serving(b) {
			p = q
			return nil
		}
		return fmt.Errorf("b serves none")
	})
	g := groupIn(p, prefix)
	waitServing(t, "a stops serving the partition b claimed", func() error {
		return checkfor.True(!answers(a, g), "a still answers for %s (partition %d)", g, p)
	})
	return p, g
}

// A gateway that wins back a partition another gateway claimed in between serves what the
// interim owner wrote: a loses p to b without a lease read showing it (a reads its lease only
// when told), its tail finds b's claim and stops p, b writes a new generation and a commit,
// b leaves, and a regains p by replaying the log. b announced the release on leaving, so a
// serves at once instead of after its 20 s HandoverBound.
func TestRegainServesInterimOwnersState(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, func(c *Config) {
		c.LeasePoll = time.Hour // one read at start, then only kickLease
		c.LeaseBound, c.HandoverBound = 30*time.Second, 20*time.Second
		c.TailPoll = 10 * time.Millisecond
	})
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	ctx := ctxT(t)
	for p := range record.Partitions {
		g := stableGroup(groupIn(p, "regain"), 1)
		if err := (journal{part(a, p)}).Append(ctx, record.Record{Type: record.TypeGroup, Group: &g}); err != nil {
			t.Fatal(err)
		}
	}
	b := start(t, s, 2, nil)
	p, g := takenOver(t, a, b, "regain")
	rg := stableGroup(g, 2)
	rg.Members = rg.Members[:1]
	if err := (journal{part(b, p)}).Append(ctx, record.Record{Type: record.TypeGroup, Group: &rg}, commit(g, "orders", 4, 77)); err != nil {
		t.Fatal(err)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	a.kickLease()
	checkfor.Eventually(t, 10*time.Second, "a serves b's state of "+g, func() error {
		m, code := (directory{a}).Manager(g)
		if code != 0 {
			a.kickLease()
			return fmt.Errorf("a answers %d", code)
		}
		groups, offsets := m.State()
		for _, got := range groups {
			if got.Name == g && (got.Generation != 2 || len(got.Members) != 1) {
				return fmt.Errorf("a serves generation %d with %d members", got.Generation, len(got.Members))
			}
		}
		for _, o := range offsets {
			if o.Group == g && o.Topic == "orders" && o.Partition == 4 && o.Offset == 77 {
				return nil
			}
		}
		return fmt.Errorf("a has not b's commit: %+v", offsets)
	})
	// a's next append lands: its claim is the newest.
	if err := (journal{part(a, p)}).Append(ctx, commit(g, "orders", 4, 78)); err != nil {
		t.Fatalf("append after the regain: %v", err)
	}
}

// A leaving gateway whose partition closes only after Leave's wait (HandoverBound) announces
// the release when the close ends, and the gateway that gained the partition meanwhile claims
// and serves then, not after its own HandoverBound (20 s here): b's close of p is held back
// until a waits for the claim.
func TestLeaveAnnouncesLateRelease(t *testing.T) {
	s := newStore(t)
	var served sync.Map // partition -> whether a served it with the previous owner's release known
	a := start(t, s, 1, func(c *Config) {
		c.LeasePoll = time.Hour // one read at start, then only kickLease
		c.LeaseBound, c.HandoverBound = 30*time.Second, 20*time.Second
		c.TailPoll = 10 * time.Millisecond
		c.onServe = func(p int, released bool) { served.Store(p, released) }
	})
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	hold := make(chan struct{})
	var unhold sync.Once
	b := start(t, s, 2, func(c *Config) { c.beforeRelease = func(int) { <-hold } })
	t.Cleanup(func() { unhold.Do(func() { close(hold) }) })
	p, g := takenOver(t, a, b, "late")
	claim := part(b, p).claim.Load()
	ctx := ctxT(t)
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.readOwners(ctx); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	ann, ok := a.fv.Announcement(2)
	a.mu.Unlock()
	if !ok || !ann.Leaving || ann.Released[p] == claim {
		t.Fatalf("b's leaving announcement (%v): leaving %v, released %v: want it leaving without the release of %d (claim %d)", ok, ann.Leaving, ann.Released, p, claim)
	}
	a.kickLease()
	checkfor.Eventually(t, 10*time.Second, "a gains "+g+"'s partition and waits to claim it", func() error {
		if part(a, p) == nil {
			a.kickLease()
			return fmt.Errorf("a has not gained %d", p)
		}
		return nil
	})
	unhold.Do(func() { close(hold) })
	checkfor.Eventually(t, 10*time.Second, "a serves "+g, func() error {
		_, code := (directory{a}).Manager(g)
		return checkfor.True(code == 0, "a answers %d", code)
	})
	if released, _ := served.Load(p); released != true {
		t.Errorf("a served %d without b's release known", p)
	}
}

// A HandoverBound above LeaseBound is refused.
func TestHandoverBoundRefused(t *testing.T) {
	s := newStore(t)
	_, err := Start(ctxT(t), Config{Client: s.client(t), Log: true, LeaseBound: time.Second, HandoverBound: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "handover bound 2s must not be above the lease bound 1s") {
		t.Fatalf("Start with a 2 s handover bound and a 1 s lease bound: %v", err)
	}
}

// Without the log, an OffsetFetch of every topic (null topics) answers after a restart every
// offset committed before it.
func TestLogOffFetchAllAfterRestart(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	ctx := ctxT(t)
	st, err := cl.CreateStream(ctx, "kafka")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orders", "payments"} {
		if _, err := cl.CreateTopic(ctx, wire.NumericID(st.ID), name, 3, iggy.TopicOptions{}); err != nil {
			t.Fatal(err)
		}
		for p := range uint32(3) {
			for range 20 {
				if _, err := cl.SendMessages(ctx, wire.NamedID("kafka"), wire.NamedID(name), p, []iggy.Message{{Payload: []byte("x")}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	off := func(c *Config) { c.Log = false }
	before := start(t, s, 1, off)
	commitReq := kmsg.NewPtrOffsetCommitRequest()
	commitReq.Version, commitReq.Group, commitReq.Generation = 2, "g", -1
	for _, c := range []struct {
		topic string
		p     int32
		off   int64
	}{{"orders", 0, 5}, {"orders", 2, 11}, {"payments", 1, 17}} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = c.topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = c.p, c.off
		rt.Partitions = append(rt.Partitions, rp)
		commitReq.Topics = append(commitReq.Topics, rt)
	}
	resp, err := before.Groups().OffsetCommit(ctx, kafkaIdentity(), commitReq)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("commit %s/%d: code %d", rt.Topic, rp.Partition, rp.ErrorCode)
			}
		}
	}
	fetchAll := func(c *Coordinator) string {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group = 7, "g"
		resp, err := c.Groups().OffsetFetch(ctx, kafkaIdentity(), req)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("fetch all: %v code %d", err, resp.ErrorCode)
		}
		var got []string
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				got = append(got, fmt.Sprintf("%s/%d=%d", rt.Topic, rp.Partition, rp.Offset))
			}
		}
		return strings.Join(got, " ")
	}
	const want = "orders/0=5 orders/2=11 payments/1=17"
	if got := fetchAll(before); got != want {
		t.Fatalf("fetch all before the restart: %q, want %q", got, want)
	}
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}
	after := start(t, s, 1, off)
	if got := fetchAll(after); got != want {
		t.Fatalf("fetch all after the restart: %q, want %q", got, want)
	}
}

// After an Iggy restart the group `kafka-gateways` still lists the members of the sessions the
// restart ended (the real server and the store keep them), and the gateways join again with new
// member ids. The lease counts live members alone, so the two gateways serve all 16 partitions
// between them again; counting the dead members would leave about half of them unserved.
func TestDeadMembersHoldNothing(t *testing.T) {
	s := newStore(t)
	a, b := start(t, s, 1, nil), start(t, s, 2, nil)
	all := func(what string) {
		t.Helper()
		waitServing(t, what, func() error {
			sa, sb := serving(a), serving(b)
			return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == 16, "a %d b %d", len(sa), len(sb))
		})
	}
	all("a and b serve all")
	s.restart(t)
	cl := s.client(t)
	checkfor.Eventually(t, 10*time.Second, "both gateways rejoined beside their dead members", func() error {
		g, err := cl.GetConsumerGroup(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(fleet.LogTopic), wire.NamedID(fleet.LeaseGroup))
		if err != nil {
			return err
		}
		return checkfor.True(len(g.Members) == 4, "members %+v", g.Members)
	})
	all("a and b serve all again")
}

// Each Iggy restart leaves the members of the sessions it ended in `kafka-gateways`; with two
// gateways, a few restarts fill its 16 places with dead members. A gateway that finds the group
// full of them creates it anew, and the two serve all 16 partitions after every restart.
func TestLeaseGroupFullOfDeadMembers(t *testing.T) {
	s := newStore(t)
	a, b := start(t, s, 1, nil), start(t, s, 2, nil)
	cl := s.client(t)
	members := func() int {
		g, err := cl.GetConsumerGroup(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(fleet.LogTopic), wire.NamedID(fleet.LeaseGroup))
		if err != nil {
			return -1
		}
		return len(g.Members)
	}
	prev := 0
	for i := range 40 {
		waitServing(t, fmt.Sprintf("a and b serve all after %d restarts", i), func() error {
			sa, sb := serving(a), serving(b)
			return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == 16, "a %d b %d, %d members", len(sa), len(sb), members())
		})
		n := members()
		t.Logf("after %d restarts: %d members", i, n)
		if prev >= 15 && n < prev {
			return // the full group was created anew, and the fleet serves
		}
		prev = n
		s.restart(t)
	}
	t.Fatalf("40 restarts and the group was never found full and created anew (last %d members)", prev)
}
