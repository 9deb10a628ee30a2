package drainplan_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

var planAt = time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC)

// fleetOf is a model of nodes 1..n, node k being lease member k-1, each claiming and announcing
// the partitions owners gives it (by default what the lease gives it).
func fleetOf(t *testing.T, n int, owners map[int]int32) *claims.Model {
	t.Helper()
	f := claims.NewModel()
	for k := range n {
		f.Members = append(f.Members, uint32(k))
	}
	if owners == nil {
		owners = map[int]int32{}
		for p := range record.Partitions {
			m, _ := fleet.Lease(f.Members, p)
			owners[p] = int32(m) + 1
		}
	}
	for p, node := range owners {
		claimBy(f, p, node, 1)
	}
	for k := range n {
		node := int32(k + 1)
		a := fleet.Announcement{Node: node, Addr: fmt.Sprintf("h:%d", node), Time: planAt.Add(-time.Second), Claims: map[int]uint64{}, Member: uint32(k), HasMember: true}
		for p, o := range owners {
			if o == node {
				a.Claims[p] = 1
			}
		}
		f.View.Announce(a)
	}
	f.View.SetMembers(f.Members)
	return f
}

// drained marks node drained in f: its drain request stands and it announces no partition.
func drained(t *testing.T, f *claims.Model, node int32) {
	t.Helper()
	if err := f.View.ApplyDrains(uint64(node), fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node})); err != nil {
		t.Fatal(err)
	}
	f.View.Announce(fleet.Announcement{Node: node, Addr: "h", Time: planAt.Add(-time.Second), Draining: true, Claims: map[int]uint64{}})
	var members []uint32
	for _, m := range f.Members {
		if m != uint32(node-1) {
			members = append(members, m)
		}
	}
	f.Members = members
	f.View.SetMembers(members)
}

func steps(plan drainwatch.Plan) string {
	var s []string
	for _, st := range plan.Steps {
		to := "-"
		if st.To != nil {
			to = fmt.Sprint(*st.To)
		}
		c := ""
		if st.Collateral {
			c = "!"
		}
		s = append(s, fmt.Sprintf("%d:%d>%s%s", st.Partition, st.From, to, c))
	}
	return strings.Join(s, " ")
}

func TestPlanDrain(t *testing.T) {
	// Three nodes as the lease spreads them: draining node 2 moves exactly node 2's
	// partitions, each to where the lease of members 0 and 2 puts it.
	f := fleetOf(t, 3, nil)
	plan, err := drainplan.Plan(f, []int32{2}, planAt)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for p := range record.Partitions {
		if m, _ := fleet.Lease([]uint32{0, 1, 2}, p); m == 1 {
			to, _ := fleet.Lease([]uint32{0, 2}, p)
			want = append(want, fmt.Sprintf("%d:2>%d", p, to+1))
		}
	}
	if got := steps(plan); got != strings.Join(want, " ") || len(want) == 0 {
		t.Fatalf("plan %s, want %s", got, strings.Join(want, " "))
	}
	if fmt.Sprint(plan.ServingAfter) != "[1 3]" {
		t.Fatalf("serving after %v", plan.ServingAfter)
	}

	// Two nodes planned together leave the third with everything.
	plan, err = drainplan.Plan(f, []int32{1, 3}, planAt)
	if err != nil || len(plan.Steps) != 16-len(want) || fmt.Sprint(plan.ServingAfter) != "[2]" {
		t.Fatalf("plan %s serving %v: %v", steps(plan), plan.ServingAfter, err)
	}
	for _, s := range plan.Steps {
		if s.To == nil || *s.To != 2 || s.Collateral {
			t.Fatalf("step %+v", s)
		}
	}

	// A partition held by node 3 that the lease gives node 1 moves too, and is shown as
	// collateral.
	owners := map[int]int32{}
	for p := range record.Partitions {
		m, _ := fleet.Lease([]uint32{0, 1, 2}, p)
		owners[p] = int32(m) + 1
	}
	moved := -1
	for p, o := range owners {
		if o == 1 && moved < 0 {
			owners[p], moved = 3, p
		}
	}
	plan, err = drainplan.Plan(fleetOf(t, 3, owners), []int32{2}, planAt)
	if err != nil || !strings.Contains(steps(plan), fmt.Sprintf("%d:3>1!", moved)) {
		t.Fatalf("plan %s: %v, want partition %d as a collateral move", steps(plan), err, moved)
	}
}

func TestPlanDrainRefusals(t *testing.T) {
	f := fleetOf(t, 3, nil)
	drained(t, f, 1)
	drained(t, f, 3)
	for _, c := range []struct {
		nodes []int32
		want  string
	}{
		{[]int32{2}, "refusing to drain node 2: no gateway would be left serving the coordinator log (1 gateway serves now: node 2)"},
		{[]int32{1}, "node 1 is already drained"},
		{[]int32{7}, "node 7 is not a gateway of this fleet (known: 1, 2, 3)"},
	} {
		_, err := drainplan.Plan(f, c.nodes, planAt)
		if err == nil || err.Error() != c.want {
			t.Errorf("drain %v: %v, want %q", c.nodes, err, c.want)
		}
	}
	var refused *drainplan.Refused
	if _, err := drainplan.Plan(f, []int32{1}, planAt); !errors.As(err, &refused) || !slices.Equal(refused.Drained, []int32{1}) {
		t.Errorf("drain of drained node 1: %v, want a refusal naming node 1 as drained", err)
	}
	g := fleetOf(t, 3, nil)
	if _, err := drainplan.Plan(g, []int32{1, 2, 3}, planAt); err == nil || !strings.Contains(err.Error(), "3 gateways serve now: nodes 1, 2, 3") {
		t.Errorf("draining all three: %v", err)
	}
	if err := drainplan.CheckUndo(g, []int32{2}, planAt); err == nil || err.Error() != "node 2 is not drained: there is nothing to undo" {
		t.Errorf("undo of a node never drained: %v", err)
	}
	if err := drainplan.CheckUndo(f, []int32{3}, planAt); err != nil {
		t.Errorf("undo of a drained node: %v", err)
	}
	// A node that stopped announcing is gone: nothing to drain.
	g.View.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: planAt.Add(-time.Minute), Claims: map[int]uint64{}})
	if _, err := drainplan.Plan(g, []int32{2}, planAt); err == nil || !strings.HasPrefix(err.Error(), "node 2 is gone") {
		t.Errorf("drain of a gone node: %v", err)
	}
}

func TestDrainProgress(t *testing.T) {
	f := fleetOf(t, 2, map[int]int32{0: 1, 1: 2, 2: 2})
	plan, err := drainplan.Plan(f, []int32{2}, planAt)
	if err != nil || len(plan.Steps) != 2 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	d := drainwatch.Drain(plan)
	if ev := d.Observe(f.Snapshot(), planAt); len(ev) != 0 || d.Done() {
		t.Fatalf("before anything: %+v", ev)
	}
	// Node 2 stops announcing partition 1; node 1 claims it but does not announce it yet.
	f.View.Announce(testlog.Announcement(2, "h:2", 56, 2))
	claimBy(f, 1, 1, 2)
	ev := d.Observe(f.Snapshot(), planAt)
	if len(ev) != 2 || ev[0].Sentence() != "partition 1: released by node 2" || ev[1].Sentence() != "partition 1: claimed by node 1 (claim 2)" || d.Done() {
		t.Fatalf("events %+v", ev)
	}
	// Node 1 announces 1; partition 2 goes straight to served by node 1.
	claimBy(f, 2, 1, 2)
	a := testlog.Announcement(1, "h:1", 57, 0)
	a.Claims[1], a.Claims[2] = 2, 2
	f.View.Announce(a)
	ev = d.Observe(f.Snapshot(), planAt)
	var got []string
	for _, e := range ev {
		got = append(got, e.Sentence())
	}
	want := []string{"partition 1: served by node 1 (claim 2)", "partition 2: released by node 2", "partition 2: claimed by node 1 (claim 2)", "partition 2: served by node 1 (claim 2)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") || !d.Done() {
		t.Fatalf("events %q, want %q (done %v)", got, want, d.Done())
	}
	if ev := d.Observe(f.Snapshot(), planAt); len(ev) != 0 {
		t.Fatalf("repeated events %+v", ev)
	}
	// What moved is what was planned; a partition that moved outside the plan is told.
	for _, m := range plan.Moves(f.Snapshot()) {
		if !m.Planned {
			t.Fatalf("unplanned %s", m.Sentence())
		}
	}
	claimBy(f, 0, 2, 2)
	var unplanned []string
	for _, m := range plan.Moves(f.Snapshot()) {
		if !m.Planned {
			unplanned = append(unplanned, m.Sentence())
		}
	}
	if fmt.Sprint(unplanned) != "[partition 0 moved from node 1 to node 2, which the plan did not list]" {
		t.Fatalf("unplanned moves %q", unplanned)
	}
}

func claimBy(f *claims.Model, p int, node int32, n uint64) {
	e := logread.Entry{Partition: p, Offset: n, Record: record.Record{Type: record.TypeClaim, Claim: n, ClaimInfo: &record.Claim{Number: n, Node: node}}}
	f.Parts[p].Apply(&e)
}
