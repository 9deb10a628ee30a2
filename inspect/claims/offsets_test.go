package claims_test

import (
	"slices"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
)

// Every group's committed offsets, over the log partitions its name lands in, with the newest
// commit of each partition; a commit written under a claim that is no longer the newest is void.
func TestModelGroupOffsets(t *testing.T) {
	e := newLogEnv(t)
	a, b := groupIn(3, "billing"), groupIn(11, "shipping")
	e.Put(3, claim(1, 1, e.at(0)), commit(1, a, "orders", 0, 10, e.at(1)), commit(1, a, "orders", 1, 4, e.at(2)), commit(1, a, "orders", 0, 12, e.at(3)))
	e.Put(11, claim(1, 2, e.at(0)), commit(1, b, "orders", 0, 7, e.at(1)), claim(2, 3, e.at(2)), commit(1, b, "orders", 0, 99, e.at(3)))
	m, err := claims.LoadModel(e.ctx, e.log)
	if err != nil {
		t.Fatal(err)
	}
	want := []claims.GroupOffset{{Group: a, Topic: "orders", Partition: 0, Offset: 12}, {Group: a, Topic: "orders", Partition: 1, Offset: 4}, {Group: b, Topic: "orders", Partition: 0, Offset: 7}}
	if got := m.GroupOffsets(); !slices.Equal(got, want) {
		t.Fatalf("offsets %+v, want %+v", got, want)
	}
}
