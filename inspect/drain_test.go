package inspect_test

import (
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
	f := fleetOf(t, map[int]int32{0: 1, 1: 2})
	plan, _ := inspect.PlanDrain(f, 2, false)
	if inspect.Drained(f, plan) {
		t.Fatal("drained before any handover")
	}
	e := inspect.Entry{Partition: 1, Offset: 1, Record: record.Record{Type: record.TypeClaim, Claim: 2, ClaimInfo: &record.Claim{Number: 2, Node: 1}}}
	f.Parts[1].Apply(&e)
	if !inspect.Drained(f, plan) {
		t.Fatal("not drained after node 1 claimed partition 1")
	}
}
