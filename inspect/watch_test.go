package inspect_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
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

// The store is said to be away once it was silent past StaleAfter, or at once when a request
// failed; the banner says since when the rows are and when the next retry comes.
func TestStatusStaleness(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := console.Status{At: at.Add(900 * time.Millisecond), Store: "127.0.0.1:8090", StoreAnswered: at, StaleAfter: time.Second}
	if !s.StoreOK() || len(s.Problems()) != 0 {
		t.Fatalf("silent 900ms: %+v %q", s, s.Problems())
	}
	s.At = at.Add(1100 * time.Millisecond)
	if s.StoreOK() || s.Problems()[0] != "no answer from the store at 127.0.0.1:8090 for 1s; the rows are as of 09:00:00" {
		t.Fatalf("silent 1.1s: %q", s.Problems())
	}
	s.At, s.StoreError, s.Retry, s.NextRetry = at.Add(200*time.Millisecond), "connection refused", 2, at.Add(700*time.Millisecond)
	if s.StoreOK() || s.Problems()[0] != "no answer from the store at 127.0.0.1:8090 for 200ms (retry 2 in 500ms): connection refused; the rows are as of 09:00:00" {
		t.Fatalf("failed request: %q", s.Problems())
	}
	// One sentence per gateway that does not answer, naming its node; those that answer are
	// not mentioned.
	s = console.Status{At: at, StoreAnswered: at, StaleAfter: time.Second, Gateways: "node 1 at 10.0.0.1:9092, node 2 at 10.0.0.2:9092, node 3 at 10.0.0.3:9092",
		Unreachable: []dial.Reach{
			{Gateway: dial.Gateway{Node: 1, Addr: "10.0.0.1:9092"}, Err: errors.New("dial tcp: refused")},
			{Gateway: dial.Gateway{Node: 3, Addr: "10.0.0.3:9092"}, Err: errors.New("i/o timeout")},
		}}
	want := []string{"no answer from node 1 at 10.0.0.1:9092: dial tcp: refused", "no answer from node 3 at 10.0.0.3:9092: i/o timeout"}
	if !s.StoreOK() || s.Healthy() || !slices.Equal(s.Problems(), want) {
		t.Fatalf("gateways away: %q", s.Problems())
	}
	s.Unreachable = []dial.Reach{{Gateway: dial.Gateway{Addr: "localhost:9092"}, Err: errors.New("dial tcp: refused")}}
	if p := s.Problems(); len(p) != 1 || p[0] != "no answer from localhost:9092: dial tcp: refused" {
		t.Fatalf("given address away: %q", p)
	}
}
