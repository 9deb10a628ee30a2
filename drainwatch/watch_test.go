package drainwatch_test

import (
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

var now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// fleetOf is node 1 serving partition 0 and node 2 serving partition 1, both under claim 1.
func fleetOf() (*fleet.View, []record.Claim) {
	v := fleet.NewView(fleet.DefaultLive)
	v.Announce(fleet.Announcement{Node: 1, Addr: "h:1", Time: now, Claims: map[int]uint64{0: 1}})
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Claims: map[int]uint64{1: 1}})
	claims := make([]record.Claim, fleet.Partitions)
	claims[0] = record.Claim{Number: 1, Node: 1}
	claims[1] = record.Claim{Number: 1, Node: 2}
	return v, claims
}

func watched(v *fleet.View, claims []record.Claim) drainwatch.Snapshot {
	return drainwatch.Snapshot{View: v, Claim: func(p int) record.Claim { return claims[p] }}
}

func request(t *testing.T, v *fleet.View, off uint64, node int32, undo bool, at time.Time) {
	t.Helper()
	if err := v.ApplyDrains(off, fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node, Undo: undo, Time: at})); err != nil {
		t.Fatal(err)
	}
}

func plan() drainwatch.Plan {
	to := int32(1)
	p := drainwatch.Plan{Nodes: []int32{2}, ServingAfter: []int32{1}, Steps: []drainwatch.Step{{Partition: 1, From: 2, To: &to, Claim: 1}}}
	for i := range p.Owners {
		p.Owners[i] = -1
	}
	p.Owners[0], p.Owners[1] = 1, 2
	return p
}

// An undo at a later offset undoes the drain however old its writer's clock says it is; an undo
// before the drain followed does not.
func TestDrainUndoneByLogOrder(t *testing.T) {
	v, claims := fleetOf()
	request(t, v, 4, 2, true, now) // an older undo, before the drain followed
	w := drainwatch.Drain(plan())
	request(t, v, 7, 2, false, now)
	w.Requested(2, 7)
	if w.Observe(watched(v, claims), now); w.Undone() || w.Done() {
		t.Fatalf("undone %v done %v with the drain standing", w.Undone(), w.Done())
	}
	request(t, v, 8, 2, true, now.Add(-time.Hour))
	w.Observe(watched(v, claims), now)
	if !w.Undone() || w.Done() {
		t.Fatalf("undone %v done %v after a later undo from a clock behind", w.Undone(), w.Done())
	}
	if ev := w.Observe(watched(v, claims), now); ev != nil {
		t.Fatalf("an undone watch goes on: %+v", ev)
	}
}

// Until its request's offset is known, a watch does not judge an undo: the view may hold only
// older requests.
func TestDrainNotJudgedBeforeRequested(t *testing.T) {
	v, claims := fleetOf()
	request(t, v, 3, 2, true, now)
	w := drainwatch.Drain(plan())
	if w.Observe(watched(v, claims), now); w.Undone() {
		t.Fatal("undone by a request older than the drain, before the drain's offset was known")
	}
}

// A drain is done when each planned partition is served elsewhere, phase by phase.
func TestDrainDone(t *testing.T) {
	v, claims := fleetOf()
	w := drainwatch.Drain(plan())
	request(t, v, 0, 2, false, now)
	w.Requested(2, 0)
	claims[1] = record.Claim{Number: 2, Node: 1}
	v.Announce(fleet.Announcement{Node: 1, Addr: "h:1", Time: now, Claims: map[int]uint64{0: 1, 1: 2}})
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Draining: true, Claims: map[int]uint64{}})
	ev := w.Observe(watched(v, claims), now)
	if len(ev) != 3 || ev[2].Sentence() != "partition 1: served by node 1 (claim 2)" || !w.Done() {
		t.Fatalf("events %+v done %v", ev, w.Done())
	}
	if m := plan().Moves(watched(v, claims)); len(m) != 1 || !m[0].Planned || m[0].To != 1 {
		t.Fatalf("moves %+v", m)
	}
}

// An undo is done once the view has read it and the node serves; a drain at a later offset,
// from any clock, drains the node again and ends the watch as undone.
func TestUndoByLogOrder(t *testing.T) {
	v, claims := fleetOf()
	request(t, v, 0, 2, false, now)
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Draining: true, Claims: map[int]uint64{}})
	w := drainwatch.Undo([]int32{2})
	w.Requested(2, 1)
	if w.Observe(watched(v, claims), now); w.Done() || w.Undone() {
		t.Fatal("done before the view read the undo")
	}
	request(t, v, 1, 2, true, now)
	if w.Observe(watched(v, claims), now); w.Done() {
		t.Fatal("done while the node still announces itself drained")
	}
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Claims: map[int]uint64{1: 3}})
	if w.Observe(watched(v, claims), now); !w.Done() {
		t.Fatal("not done with the node serving again")
	}

	again := drainwatch.Undo([]int32{2})
	again.Requested(2, 1)
	request(t, v, 2, 2, false, now.Add(-time.Hour))
	if again.Observe(watched(v, claims), now); !again.Undone() || again.Done() {
		t.Fatalf("undone %v done %v after a later drain from a clock behind", again.Undone(), again.Done())
	}
}

// An undone node counts as serving again once it serves its share of the lease: live in the
// lease group, it claims every partition the lease gives its member, not merely a state of
// Serving with no partition taken back yet.
func TestUndoDoneWhenTheShareIsBack(t *testing.T) {
	v, claims := fleetOf()
	v.SetMembers([]uint32{0, 1})
	v.Announce(fleet.Announcement{Node: 1, Addr: "h:1", Time: now, Claims: map[int]uint64{0: 1}, Member: 0, HasMember: true})
	request(t, v, 0, 2, false, now)
	request(t, v, 1, 2, true, now)
	w := drainwatch.Undo([]int32{2})
	w.Requested(2, 1)
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Claims: map[int]uint64{}, Member: 1, HasMember: true})
	if w.Observe(watched(v, claims), now); w.Done() {
		t.Fatal("done with the node serving no partition yet")
	}
	share := fleet.Held([]uint32{0, 1}, 1)
	if len(share) == 0 {
		t.Fatal("the lease gives member 1 nothing")
	}
	some := map[int]uint64{share[0]: 2}
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Claims: some, Member: 1, HasMember: true})
	if w.Observe(watched(v, claims), now); w.Done() != (len(share) == 1) {
		t.Fatalf("done %v with %d of its %d partitions back", w.Done(), len(some), len(share))
	}
	all := map[int]uint64{}
	for _, p := range share {
		all[p] = 2
	}
	v.Announce(fleet.Announcement{Node: 2, Addr: "h:2", Time: now, Claims: all, Member: 1, HasMember: true})
	if w.Observe(watched(v, claims), now); !w.Done() {
		t.Fatal("not done with its whole share back")
	}
}
