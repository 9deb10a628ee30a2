package fleet

import (
	"fmt"
	"testing"
	"time"
)

// Each node state from the statements that make it, and the drain safety inputs (Serving).
func TestViewNodeStates(t *testing.T) {
	now := time.Unix(1000, 0).UTC()
	v := NewView(5 * time.Second)
	ann := func(a Announcement) {
		t.Helper()
		if err := v.ApplyOwners(EncodeAnnouncement(a)); err != nil {
			t.Fatal(err)
		}
	}
	drainAt := uint64(0)
	drain := func(s string) {
		t.Helper()
		drainAt++
		if err := v.ApplyDrains(drainAt, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	ann(Announcement{Node: 1, Addr: "a:1", Time: now.Add(-time.Second), Claims: map[int]uint64{0: 3, 1: 4}, HasMember: true, Member: 0})
	ann(Announcement{Node: 2, Addr: "a:2", Time: now.Add(-time.Second), Claims: map[int]uint64{2: 2}, HasMember: true, Member: 1})
	ann(Announcement{Node: 3, Addr: "a:3", Time: now.Add(-time.Second), Draining: true, Claims: map[int]uint64{}})
	ann(Announcement{Node: 4, Addr: "a:4", Time: now.Add(-6 * time.Second), Claims: map[int]uint64{3: 1}})
	ann(Announcement{Node: 5, Addr: "a:5", Time: now, Leaving: true, Claims: map[int]uint64{}})
	v.KnowClaim(6, "old:6")
	drain(`{"node":2}`)
	drain(`{"node":3,"time":"2020-01-02T03:04:05Z"}`)
	if err := v.ApplyDrains(99, []byte(`{"undo":true}`)); err == nil {
		t.Fatal("a drain request without a node was taken")
	}
	if err := v.ApplyOwners([]byte{4, 1}); err == nil {
		t.Fatal("a corrupt announcement was taken")
	}
	var got []string
	for _, n := range v.Nodes(now) {
		got = append(got, fmt.Sprintf("%d:%s:%s:%v:%v", n.ID, n.State, n.Addr, n.Partitions, n.DrainRequested))
	}
	want := "[1:serving:a:1:[0 1]:false 2:draining:a:2:[2]:true 3:drained:a:3:[]:true 4:gone:a:4:[3]:false 5:gone:a:5:[]:false 6:gone:old:6:[]:false]"
	if fmt.Sprint(got) != want {
		t.Fatalf("nodes\n%v\nwant\n%s", got, want)
	}
	if s := fmt.Sprint(v.Serving(now)); s != "[1]" {
		t.Fatalf("serving %s", s)
	}
	if node, claim, ok := v.Owner(3, now, -1); ok {
		t.Fatalf("a stale node owns 3: %d %d", node, claim)
	}
	if node, claim, ok := v.Owner(1, now, -1); !ok || node != 1 || claim != 4 {
		t.Fatalf("owner of 1: %d %d %v", node, claim, ok)
	}
	if _, _, ok := v.Owner(1, now, 1); ok {
		t.Fatal("owner of 1 found with node 1 excepted")
	}
	// Node 1's lease membership ends: it is gone at once, well within Live.
	v.SetMembers([]uint32{1})
	if s := v.State(1, now); s != Gone {
		t.Fatalf("node 1 without its member: %s", s)
	}
	if _, _, ok := v.Owner(0, now, -1); ok {
		t.Fatal("a node without its lease still owns 0")
	}
	// Undo in log order, whatever the request's time says.
	drain(`{"node":2,"undo":true,"time":"1999-01-01T00:00:00Z"}`)
	if v.DrainStands(2) || fmt.Sprint(v.DrainedSet()) != "[3]" {
		t.Fatalf("drained set %v", v.DrainedSet())
	}
	if r, at, ok := v.DrainRequestAt(2); !ok || !r.Undo || at != drainAt {
		t.Fatalf("node 2's latest request %+v at %d, want the undo at %d", r, at, drainAt)
	}
}

// LeaseMember is the lease rule over the live members of the membership last read: none before
// a membership is read, and a member no live gateway announces holds nothing.
func TestViewLeaseMember(t *testing.T) {
	now := time.Unix(1000, 0).UTC()
	v := NewView(5 * time.Second)
	if m, ok := v.LeaseMember(0, now); ok {
		t.Fatalf("a lease member (%d) before any membership was read", m)
	}
	for _, a := range []Announcement{
		{Node: 1, Addr: "a:1", Time: now, HasMember: true, Member: 4},
		{Node: 2, Addr: "a:2", Time: now, HasMember: true, Member: 7},
	} {
		if err := v.ApplyOwners(EncodeAnnouncement(a)); err != nil {
			t.Fatal(err)
		}
	}
	// Member 9 is in the group but no gateway announces it (a gateway gone with an Iggy restart).
	v.SetMembers([]uint32{4, 7, 9})
	want := Assign([]uint32{4, 7})
	for p := range Partitions {
		m, ok := v.LeaseMember(p, now)
		if !ok || m != want[p] {
			t.Fatalf("partition %d: member %d %v, want %d", p, m, ok, want[p])
		}
	}
	v.SetMembers([]uint32{9})
	if m, ok := v.LeaseMember(0, now); ok {
		t.Fatalf("a lease member (%d) with no live member", m)
	}
}
