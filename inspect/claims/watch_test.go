package claims_test

import (
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
)

// Changes are found by typed field: the log end alone changing is a change (it went unseen when
// the diff compared a fixed set of text columns), ages that grow with the clock are not.
func TestDiffComparesTypedFields(t *testing.T) {
	node, other := int32(2), int32(3)
	held, lag := 10.0, 0.5
	before := []claims.PartitionRow{{Partition: 10, OwnerNode: &node, Claim: 4, LogEndOffset: 156, HeldSeconds: &held, OwnerLagSeconds: &lag, Flags: []string{}}}
	later, laterLag := 70.0, 0.9
	after := []claims.PartitionRow{{Partition: 10, OwnerNode: &node, Claim: 4, LogEndOffset: 242, HeldSeconds: &later, OwnerLagSeconds: &laterLag, Flags: []string{}}}
	at := time.Unix(0, 0)
	got := claims.Diff(before, after, at)
	if len(got) != 1 || got[0] != (claims.Change{Time: at, Partition: 10, Field: claims.FieldLogEnd, Old: "156", New: "242"}) {
		t.Fatalf("changes %+v", got)
	}
	after[0].OwnerNode, after[0].Claim, after[0].Flags = &other, 5, []string{claims.FlagDraining}
	got = claims.Diff(before, after, at)
	var fields []string
	for _, c := range got {
		fields = append(fields, c.Field)
	}
	if len(got) != 4 || fields[0] != claims.FieldOwner || got[0].Old != "2" || got[0].New != "3" || fields[1] != claims.FieldClaim || fields[3] != claims.FieldFlags {
		t.Fatalf("changes %+v", got)
	}

	ago1, ago2 := 0.2, 0.9
	nb := []claims.NodeRow{{Node: 2, State: string(fleet.Serving), Partitions: []int{1, 4}, AnnouncedAgoSeconds: &ago1}}
	na := []claims.NodeRow{{Node: 2, State: string(fleet.Draining), Partitions: []int{1, 4}, AnnouncedAgoSeconds: &ago2}, {Node: 4, State: string(fleet.Serving)}}
	nc := claims.DiffNodes(nb, na, at)
	if len(nc) != 1 || nc[0].Node != 2 || nc[0].Field != claims.NodeFieldState || nc[0].New != "draining" {
		t.Fatalf("node changes %+v", nc)
	}
}

func TestClassifyHandover(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	v := fleet.NewView(0)
	v.Announce(fleet.Announcement{Node: 1, Time: now, Claims: map[int]uint64{0: 1}})
	v.Announce(fleet.Announcement{Node: 2, Time: now, Leaving: true})
	v.Announce(fleet.Announcement{Node: 3, Time: now.Add(-time.Minute)})
	v.Announce(fleet.Announcement{Node: 4, Time: now, Draining: true})
	n := func(i int32) *int32 { return &i }
	for _, c := range []struct {
		from *int32
		want string
	}{{nil, claims.ReasonFirst}, {n(1), claims.ReasonLease}, {n(2), claims.ReasonStop}, {n(3), claims.ReasonCrash}, {n(4), claims.ReasonDrain}, {n(9), claims.ReasonCrash}} {
		if got := claims.ClassifyHandover(v, claims.Handover{Partition: 5, From: c.from, To: 7}, now); got != c.want {
			t.Errorf("from %v: %q, want %q", c.from, got, c.want)
		}
	}
}
