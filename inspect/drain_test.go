package inspect_test

import (
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
)

func fleetOf(t *testing.T, owners map[int]int32) *inspect.Fleet {
	t.Helper()
	f := inspect.NewFleet()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for p, n := range owners {
		e := inspect.Entry{Partition: p, Offset: 0, Record: record.Record{Type: record.TypeClaim, Claim: 1, Time: at, ClaimInfo: &record.Claim{Number: 1, Node: n}}}
		f.Parts[p].Apply(&e)
	}
	return f
}

func TestPlanDrain(t *testing.T) {
	cases := []struct {
		name    string
		owners  map[int]int32
		node    int32
		force   bool
		want    []int
		wantErr bool
	}{
		{"two of three", map[int]int32{0: 1, 1: 2, 2: 2, 3: 3}, 2, false, []int{1, 2}, false},
		{"node owns nothing", map[int]int32{0: 1, 1: 3}, 2, false, nil, false},
		{"last gateway", map[int]int32{0: 2, 1: 2}, 2, false, nil, true},
		{"last gateway forced", map[int]int32{0: 2, 1: 2}, 2, true, []int{0, 1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := inspect.PlanDrain(fleetOf(t, c.owners), c.node, c.force)
			if (err != nil) != c.wantErr {
				t.Fatalf("err %v", err)
			}
			var got []int
			for _, s := range plan {
				got = append(got, s.Partition)
			}
			if len(got) != len(c.want) {
				t.Fatalf("plan %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("plan %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestDrainProgress(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC)
	f := fleetOf(t, map[int]int32{0: 1, 1: 2, 2: 2})
	f.Announcements = map[int32]inspect.Announcement{1: ann(1, "h:1", 55, 0), 2: ann(2, "h:2", 55, 1, 2)}
	plan, err := inspect.PlanDrain(f, 2, false)
	if err != nil || len(plan) != 2 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	d := inspect.NewDrainProgress(2, plan)
	if ev := d.Observe(f, now); len(ev) != 0 || d.Done() {
		t.Fatalf("before anything: %+v", ev)
	}
	// Node 2 stops announcing partition 1; node 1 claims it but does not announce it yet.
	f.Announcements[2] = ann(2, "h:2", 56, 2)
	claimBy(f, 1, 1, 2)
	ev := d.Observe(f, now)
	if len(ev) != 2 || ev[0].Sentence() != "partition 1: released by node 2" || ev[1].Sentence() != "partition 1: claimed by node 1 (claim 2)" || d.Done() {
		t.Fatalf("events %+v", ev)
	}
	// Node 1 announces 1; partition 2 goes straight to served by node 1.
	claimBy(f, 2, 1, 2)
	f.Announcements[1] = ann(1, "h:1", 57, 0)
	f.Announcements[1].Claims[1], f.Announcements[1].Claims[2] = 2, 2
	ev = d.Observe(f, now)
	var got []string
	for _, e := range ev {
		got = append(got, e.Sentence())
	}
	want := []string{"partition 1: served by node 1 (claim 2)", "partition 2: released by node 2", "partition 2: claimed by node 1 (claim 2)", "partition 2: served by node 1 (claim 2)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") || !d.Done() {
		t.Fatalf("events %q, want %q (done %v)", got, want, d.Done())
	}
	if ev := d.Observe(f, now); len(ev) != 0 {
		t.Fatalf("repeated events %+v", ev)
	}
}

func claimBy(f *inspect.Fleet, p int, node int32, n uint64) {
	e := inspect.Entry{Partition: p, Offset: n, Record: record.Record{Type: record.TypeClaim, Claim: n, ClaimInfo: &record.Claim{Number: n, Node: node}}}
	f.Parts[p].Apply(&e)
}
