package group

import (
	"errors"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// DropTopics journals one OffsetDeleted per committed partition of a gone topic, in every group
// (one with members too), forgets them, and keeps every other topic's offsets; a failed append
// keeps the offsets for the next call.
func TestDropTopics(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 1)
	e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, "a", 0, 5))
	e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, "b", 0, 6))
	e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, "b", 1, 7))
	e.m.CommitOffsets(ctx(t), testID, commitReq("simple", "", -1, "b", 2, 8))
	before := len(e.j.records())
	isB := func(topic string) bool { return topic == "b" }

	e.j.mu.Lock()
	e.j.fail = errors.New("log down")
	e.j.mu.Unlock()
	if err := e.m.DropTopics(ctx(t), isB); err == nil {
		t.Fatal("a failed append reported no error")
	}
	if got := e.fetch("g", "b", 0); got[0].Offset != 6 {
		t.Fatalf("offset dropped although its deletion was not journaled: %+v", got)
	}
	e.j.mu.Lock()
	e.j.fail = nil
	e.j.mu.Unlock()

	if err := e.m.DropTopics(ctx(t), isB); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		group string
		part  int32
	}{{"g", 0}, {"g", 1}, {"simple", 2}} {
		if got := e.fetch(c.group, "b", c.part); got[0].Offset != -1 {
			t.Fatalf("%s b/%d survived: %+v", c.group, c.part, got)
		}
	}
	if got := e.fetch("g", "a", 0); got[0].Offset != 5 {
		t.Fatalf("a's offset: %+v", got)
	}
	want := []record.OffsetDeleted{{Group: "g", Topic: "b", Partition: 0}, {Group: "g", Topic: "b", Partition: 1}, {Group: "simple", Topic: "b", Partition: 2}}
	recs := e.j.records()[before:]
	if len(recs) != len(want) {
		t.Fatalf("%d records journaled, want %d: %+v", len(recs), len(want), recs)
	}
	for i, r := range recs {
		if r.Type != record.TypeOffsetDeleted || *r.OffsetDeleted != want[i] {
			t.Fatalf("record %d: %+v, want %+v", i, r, want[i])
		}
	}
	if err := e.m.DropTopics(ctx(t), isB); err != nil || len(e.j.records()) != before+len(want) {
		t.Fatalf("a second drop: %v, %d records", err, len(e.j.records()))
	}
	e.m.Close()
	if err := e.m.DropTopics(ctx(t), isB); !errors.Is(err, ErrNotCoordinator) {
		t.Fatalf("closed manager: %v", err)
	}
}
