package fleettest

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// handoverBound is the gateways' HandoverBound (3 x LeasePoll, the coordinator's default): a
// gateway answers as coordinator only while its last lease read that succeeded was sent less
// than this long ago.
const handoverBound = 3 * gateway.LeasePoll

// stopBound is how long after its link to the store is cut a gateway may still answer a group
// request with success: handoverBound from the last lease read sent before the cut, plus the
// time an answer already decided takes to reach the probe.
const stopBound = handoverBound + 100*time.Millisecond

// healBound bounds the wait, after a heal, for every log partition to be served again and the
// load to go on.
const healBound = 30 * time.Second

// listenIn listens on addr inside the lab's namespace of role.
func listenIn(t *testing.T, lab *netLab, role, addr string) net.Listener {
	t.Helper()
	var l net.Listener
	err := inNetns(lab.node(role).ns, func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	return l
}

// reaches says whether a connection from role to addr gets its first byte within 500 ms.
func reaches(lab *netLab, role, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	c, err := lab.dialer(role)(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err = c.Read(make([]byte, 1))
	return err
}

// TestPartitionHarness checks the harness on three namespaces without a fleet: each reaches a
// listener in another; a cut of a -> b stops a reaching b (its SYN is dropped) and leaves c
// reaching b; a cut of b -> a alone stops a too (the answers are dropped); heal restores both;
// and the lab's namespaces are gone after its cleanup.
func TestPartitionHarness(t *testing.T) {
	var names []string
	t.Run("links", func(t *testing.T) {
		lab := newNetLab(t, "a", "b", "c")
		for _, n := range lab.nodes {
			names = append(names, n.ns)
		}
		names = append(names, lab.router)
		bAddr := net.JoinHostPort(lab.node("b").ip(), "7000")
		listenIn(t, lab, "b", bAddr)
		want := func(role string, ok bool) {
			t.Helper()
			err := reaches(lab, role, bAddr)
			if ok && err != nil {
				t.Fatalf("%s does not reach b: %v", role, err)
			}
			if !ok && err == nil {
				t.Fatalf("%s reaches b through a cut", role)
			}
		}
		want("a", true)
		want("c", true)
		lab.cut("a", "b")
		want("a", false)
		want("c", true)
		lab.heal()
		want("a", true)
		lab.cut("b", "a")
		want("a", false)
		want("c", true)
		lab.heal()
		lab.cutBoth("a", "b")
		want("a", false)
		lab.heal()
		want("a", true)
	})
	for _, ns := range names {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			t.Errorf("namespace %s left after the test", ns)
		}
	}
}

// lastSuccess is, over the probe's rounds, the last time gateway id answered 0 to a Heartbeat
// of a log partition it served in before.
func lastSuccess(rounds []round, id int32, before [LogPartitions]int32) time.Time {
	var last time.Time
	for _, rd := range rounds {
		for p, owner := range before {
			if owner != id {
				continue
			}
			if ts, ok := rd.heartbeat[p][id]; ok && ts.After(last) {
				last = ts
			}
		}
	}
	return last
}

// TestPartitionCoordinatorLosesIggy is scenario a: the group's coordinator is cut from the
// store in both directions while its clients still reach it, under load, then healed. Within
// stopBound of the cut it answers no Heartbeat of its log partitions with success (it cannot
// make anything durable); the others take those partitions over once the store evicts its
// member; the load goes on; after the heal every log partition is served and the load flows
// within healBound; finish checks every record and commit and that the group never rebalanced.
func TestPartitionCoordinatorLosesIggy(t *testing.T) {
	f := startNetFleet(t)
	r := startRunOn(t, f)
	r.addFamilies(partitionFamilies(t)...)
	id := r.coordinator(group)
	name := fmt.Sprintf("gateway-%d", id)
	before := r.pr.owners()
	at := time.Now()
	f.lab.cutBoth(name, "store")
	moved := r.handover(id, at, before, 20*time.Second)
	if last := lastSuccess(r.pr.snapshot(), id, before); last.Sub(at) > stopBound {
		t.Errorf("gateway %d cut from the store answered a Heartbeat with success %v after the cut (bound %v)", id, last.Sub(at), stopBound)
	} else {
		t.Logf("gateway %d cut from the store: last success %v after the cut (bound %v); its log partitions served elsewhere after %v",
			id, last.Sub(at).Round(time.Millisecond), stopBound, moved)
	}
	r.waitProgress(fmt.Sprintf("the load with gateway %d cut from the store", id))
	healed := time.Now()
	f.lab.heal()
	r.pr.waitAllServed(t, healBound, "after the heal")
	r.waitProgress("the load after the heal")
	t.Logf("healed: every log partition served and the load on after %v", time.Since(healed).Round(time.Millisecond))
	r.finish()
}

// TestPartitionSplitFleet is scenario c: the fleet split in two under load, the group's
// coordinator and one other gateway on the side without the store, the third gateway with it;
// the clients and the observer reach both sides. Within stopBound the two cut off answer no
// group request with success; the third serves every log partition once the store evicts their
// members; the load goes on through it (the two cut off name no leader in Metadata meanwhile);
// after the heal everyone is served again within healBound
// and finish checks every record and commit and that the group never rebalanced.
func TestPartitionSplitFleet(t *testing.T) {
	f := startNetFleet(t)
	r := startRunOn(t, f)
	r.addFamilies(partitionFamilies(t)...)
	order := r.rotation()
	away, kept := order[:2], order[2]
	before := r.pr.owners()
	ackedAtCut := r.l.nAcked.Load()
	at := time.Now()
	for _, id := range away {
		f.lab.cutBoth(fmt.Sprintf("gateway-%d", id), "store")
		f.lab.cutBoth(fmt.Sprintf("gateway-%d", id), fmt.Sprintf("gateway-%d", kept))
	}
	var served time.Duration
	checkfor.Eventually(t, 20*time.Second, fmt.Sprintf("a probe round after the cut in which gateway %d serves every log partition", kept), func() error {
		rs := r.pr.snapshot()
		for _, rd := range rs {
			if rd.at.Before(at.Add(stopBound)) {
				continue
			}
			all := 0
			for p := range LogPartitions {
				if _, ok := rd.heartbeat[p][kept]; ok {
					all++
				}
			}
			if all == LogPartitions {
				served = rd.at.Sub(at)
				return nil
			}
		}
		return fmt.Errorf("last round %s", describeRound(rs[len(rs)-1]))
	})
	for _, id := range away {
		if last := lastSuccess(r.pr.snapshot(), id, before); last.Sub(at) > stopBound {
			t.Errorf("gateway %d cut from the store answered a Heartbeat with success %v after the cut (bound %v)", id, last.Sub(at), stopBound)
		}
	}
	// The two cut off name no partition leader (they cannot read the store, and gateway kept
	// does not answer them), so the load goes on through the side with the store.
	r.waitProgress(fmt.Sprintf("the load through gateway %d during the split", kept))
	acked := r.l.nAcked.Load()
	t.Logf("gateways %v cut from the store and from gateway %d: every log partition served by %d after %v; the load on %v after the cut (%d records acknowledged since)",
		away, kept, kept, served.Round(time.Millisecond), time.Since(at).Round(time.Millisecond), acked-ackedAtCut)
	healed := time.Now()
	f.lab.heal()
	r.pr.waitAllServed(t, healBound, "after the heal")
	r.waitProgress("the load after the heal")
	t.Logf("healed: every log partition served and the load on after %v", time.Since(healed).Round(time.Millisecond))
	r.finish()
}

// TestPartitionGatewayLosesClients is scenario b: a gateway that is not the group's coordinator
// is cut from the load's clients in both directions while it keeps the store and the rest of
// the fleet (and the observer), under load, then healed. It keeps its log partitions (it can
// serve them: the probe finds each served by its owner throughout) and the others keep naming it
// as a partition leader, as Kafka's brokers name a broker its clients cannot reach: the records
// of its partitions wait in the producers and its partitions' fetches stall, while the load goes
// on through the other gateways; after the heal the waiting records are acknowledged and read
// within healBound, and finish checks that nothing was lost, duplicated or reordered and that
// the group never rebalanced.
func TestPartitionGatewayLosesClients(t *testing.T) {
	f := startNetFleet(t)
	r := startRunOn(t, f)
	r.addFamilies(partitionFamilies(t)...)
	id := r.rotation()[1]
	name := fmt.Sprintf("gateway-%d", id)
	before := r.pr.owners()
	at := time.Now()
	f.lab.cutBoth(name, clientsNs)
	r.waitProgress(fmt.Sprintf("the load through the others with gateway %d cut from its clients", id))
	for p, owner := range r.pr.owners() {
		if before[p] == id && owner != 0 && owner != id {
			t.Errorf("log partition %d moved from gateway %d to %d although it kept the store", p, id, owner)
		}
	}
	t.Logf("gateway %d cut from its clients: the load on through the others %v after the cut; its log partitions stayed", id, time.Since(at).Round(time.Millisecond))
	healed := time.Now()
	f.lab.heal()
	r.pr.waitAllServed(t, healBound, "after the heal")
	r.waitProgress("the load after the heal")
	t.Logf("healed: the load on after %v", time.Since(healed).Round(time.Millisecond))
	r.finish()
}
