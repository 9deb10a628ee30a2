package fleettest

import (
	"strings"
	"testing"
	"time"
)

// TestGroupRecorderFindsViolations checks the SIGKILL test's checks on made-up histories: a
// record delivered again below a committed offset, an acknowledged record never delivered and
// one delivered with another value are each reported; an uncommitted record delivered twice is
// counted as a duplicate and is not a violation.
func TestGroupRecorderFindsViolations(t *testing.T) {
	sent := &sentTimes{m: map[string]time.Time{}}
	acked := map[string]pos{"a": {0, 0}, "b": {0, 1}, "c": {1, 0}, "d": {1, 1}}
	for v := range acked {
		sent.send(v)
	}
	clean := newGroupRecorder("clean", sent)
	clean.read("m0", 0, 0, "a")
	clean.read("m0", 0, 1, "b")
	clean.read("m1", 0, 1, "b") // again, before any commit: at least once allows it
	clean.committed(0, 2)
	clean.read("m1", 1, 0, "c")
	clean.read("m1", 1, 1, "d")
	clean.committed(1, 2)
	if p := clean.problems(acked); len(p) != 0 {
		t.Fatalf("a clean history reported: %v", p)
	}
	if n := clean.duplicates(); n != 1 {
		t.Fatalf("duplicates %d, want 1", n)
	}
	if err := clean.caughtUp(map[int32]int64{0: 2, 1: 2}); err != nil {
		t.Fatal(err)
	}

	bad := newGroupRecorder("bad", sent)
	bad.read("m0", 0, 0, "a")
	bad.read("m0", 0, 1, "b")
	bad.committed(0, 2)
	bad.read("m1", 0, 1, "b") // below the commit
	bad.read("m1", 1, 0, "x") // not what was acknowledged there; d is never delivered
	p := bad.problems(acked)
	want := []string{"0/1 delivered to m1", "c acknowledged at 1/0, delivered there was x", "d acknowledged at 1/1 was never delivered"}
	if len(p) != len(want) {
		t.Fatalf("problems %v, want %d", p, len(want))
	}
	for _, w := range want {
		found := false
		for _, got := range p {
			found = found || strings.Contains(got, w)
		}
		if !found {
			t.Errorf("no problem says %q: %v", w, p)
		}
	}
	if err := bad.caughtUp(map[int32]int64{0: 2, 1: 2}); err == nil {
		t.Error("a group that committed nothing on partition 1 counted as caught up")
	}
}

// TestGroupRecorderStable checks the stability rule: every partition held by exactly one of the
// members, each member holding some.
func TestGroupRecorderStable(t *testing.T) {
	g := newGroupRecorder("g", &sentTimes{m: map[string]time.Time{}})
	g.assignment("m0", "assigned", []int32{0, 1, 2})
	if g.stable() == nil {
		t.Fatal("one member stable")
	}
	g.assignment("m1", "assigned", []int32{2, 3, 4, 5})
	if g.stable() == nil {
		t.Fatal("partition 2 held twice, stable")
	}
	g.assignment("m0", "revoked", []int32{2})
	if err := g.stable(); err != nil {
		t.Fatal(err)
	}
	g.assignment("m1", "lost", []int32{2, 3, 4, 5})
	if g.stable() == nil {
		t.Fatal("a member holding nothing, stable")
	}
}
