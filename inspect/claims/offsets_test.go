package claims_test

import (
	"slices"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// Every group's committed offsets, over the log partitions its name lands in, with the newest
// commit of each partition; a commit written under a claim that is no longer the newest is void.
func TestModelGroupOffsets(t *testing.T) {
	e := logtest.Start(t)
	a, b := testlog.GroupIn(3, "billing"), testlog.GroupIn(11, "shipping")
	e.Put(3, testlog.Claim(1, 1, e.At(0)), testlog.Commit(1, a, "orders", 0, 10, e.At(1)), testlog.Commit(1, a, "orders", 1, 4, e.At(2)), testlog.Commit(1, a, "orders", 0, 12, e.At(3)))
	e.Put(11, testlog.Claim(1, 2, e.At(0)), testlog.Commit(1, b, "orders", 0, 7, e.At(1)), testlog.Claim(2, 3, e.At(2)), testlog.Commit(1, b, "orders", 0, 99, e.At(3)))
	m, err := claims.LoadModel(e.Ctx, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	want := []claims.GroupOffset{{Group: a, Topic: "orders", Partition: 0, Offset: 12}, {Group: a, Topic: "orders", Partition: 1, Offset: 4}, {Group: b, Topic: "orders", Partition: 0, Offset: 7}}
	if got := m.GroupOffsets(); !slices.Equal(got, want) {
		t.Fatalf("offsets %+v, want %+v", got, want)
	}
}
