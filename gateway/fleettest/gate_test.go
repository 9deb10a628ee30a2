package fleettest

import (
	"fmt"
	"testing"
	"time"
)

// gateBudget bounds the fault gate's schedule, faults and recoveries, the end checks left out.
const gateBudget = 3 * time.Minute

// TestFaultGate is the fault gate the test command runs on every change: one fleet in the
// partition harness, under produce load and a consumer group, through a schedule of process
// faults and partitions, each followed by the load going on, and then every check of finish:
// no acknowledged record lost, stored twice or out of its producer's order, every record read
// once by the group and committed, OffsetFetch equal to the last commits (no offset regression),
// no rebalance, never two gateways answering for one log partition in any probe round, the
// log's claims in order (inspect --verify). A gateway cut from the store must stop answering
// as coordinator within stopBound.
//
// The schedule: the group's coordinator cut from the store (both directions) and healed; a
// gateway's packets to the store dropped (one direction) and healed; the coordinator stopped
// with SIGTERM and started again; another gateway SIGKILLed and started again. The fleet split
// in two is TestPartitionSplitFleet's, a gateway cut from its clients
// TestPartitionGatewayLosesClients'.
func TestFaultGate(t *testing.T) {
	f := startNetFleet(t)
	r := startRunOn(t, f)
	start := time.Now()
	name := func(id int32) string { return fmt.Sprintf("gateway-%d", id) }
	cutOff := func(what string, ids []int32, cut func()) {
		t.Helper()
		before := r.pr.owners()
		at := time.Now()
		cut()
		for _, id := range ids {
			moved := r.handover(id, at, before, 20*time.Second)
			if last := lastSuccess(r.pr.snapshot(), id, before); last.Sub(at) > stopBound {
				t.Errorf("%s: gateway %d answered a Heartbeat with success %v after the cut (bound %v)", what, id, last.Sub(at), stopBound)
			}
			t.Logf("%s: gateway %d's log partitions served elsewhere after %v", what, id, moved)
		}
		r.waitProgress("the load during: " + what)
		healed := time.Now()
		f.lab.heal()
		r.pr.waitAllServed(t, healBound, "after healing: "+what)
		r.waitProgress("the load after healing: " + what)
		t.Logf("%s: healed, everyone served and the load on after %v", what, time.Since(healed).Round(time.Millisecond))
	}

	coord := r.coordinator(group)
	cutOff("coordinator cut from the store", []int32{coord}, func() { f.lab.cutBoth(name(coord), "store") })

	order := r.rotation()
	other := order[1]
	cutOff("gateway to store dropped, one direction", []int32{other}, func() { f.lab.cut(name(other), "store") })

	order = r.rotation()
	g := f.gw(order[0])
	before := r.pr.owners()
	at := time.Now()
	g.term(t, exitLimit)
	r.handover(g.id, at, before, 15*time.Second)
	f.restart(g)
	r.pr.waitAllServed(t, 20*time.Second, "after the coordinator's SIGTERM and restart")
	r.waitProgress("the load after the coordinator's SIGTERM and restart")

	// Not the coordinator: franz-go ends a classic member's session when its heartbeat's dial
	// fails, which a killed coordinator causes at times (the SIGKILL measurement's subject).
	order = r.rotation()
	g = f.gw(order[2])
	g.kill(t)
	r.waitProgress(fmt.Sprintf("the load with gateway %d killed", g.id))
	f.restart(g)
	r.pr.waitAllServed(t, 20*time.Second, "after a gateway's SIGKILL and restart")
	r.waitProgress("the load after a gateway's SIGKILL and restart")

	if took := time.Since(start); took > gateBudget {
		t.Errorf("the schedule took %v, over its budget of %v", took, gateBudget)
	} else {
		t.Logf("the schedule took %v", took.Round(time.Millisecond))
	}
	r.finish()
}
