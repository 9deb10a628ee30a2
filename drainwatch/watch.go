package drainwatch

import (
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
)

// Drain phases of one partition, in order.
const (
	PhaseReleased = "released" // the node that held it no longer announces it
	PhaseClaimed  = "claimed"  // another node's claim is the newest in the log
	PhaseServed   = "served"   // that node announces it under that claim
)

// Event is one step of a drain's progress. JSON field names are an interface.
type Event struct {
	Time      time.Time `json:"time"`
	Partition int       `json:"partition"`
	Phase     string    `json:"phase"`
	Node      int32     `json:"node"`
	Claim     uint64    `json:"claim,omitempty"`
}

func (Event) Columns() []string { return []string{"TIME", "PARTITION", "PHASE", "NODE", "CLAIM"} }

func (e Event) Cells() []string {
	claim := ""
	if e.Claim != 0 {
		claim = strconv.FormatUint(e.Claim, 10)
	}
	return []string{e.Time.UTC().Format("15:04:05.000"), strconv.Itoa(e.Partition), e.Phase, strconv.Itoa(int(e.Node)), claim}
}

// Sentence is the event as operators read it: "partition 3: claimed by node 1 (claim 7)".
func (e Event) Sentence() string {
	s := "partition " + strconv.Itoa(e.Partition) + ": " + e.Phase + " by node " + strconv.Itoa(int(e.Node))
	if e.Claim != 0 {
		s += " (claim " + strconv.FormatUint(e.Claim, 10) + ")"
	}
	return s
}

// Watch follows one drain (Drain) or one undo (Undo) through the fleet as a reader folds it.
// Feed it with Observe after every read; it is done, or undone, once and for good. Not safe for
// concurrent use.
type Watch struct {
	plan  Plan
	undo  bool
	nodes []int32
	// at is the DrainsTopic offset of the request written for each node.
	at     map[int32]uint64
	phase  map[int]int // partition -> phases reached (0..3)
	done   bool
	undone bool
}

// Drain follows plan: each partition goes released, claimed, served; the drain is done only
// when every partition of the plan is served elsewhere.
func Drain(plan Plan) *Watch {
	return &Watch{plan: plan, nodes: slices.Clone(plan.Nodes), at: map[int32]uint64{}, phase: map[int]int{}}
}

// Undo follows the undo of nodes' drain: it is done when each serves again.
func Undo(nodes []int32) *Watch {
	return &Watch{undo: true, nodes: slices.Sorted(slices.Values(nodes)), at: map[int32]uint64{}, phase: map[int]int{}}
}

// Requested says that the request for node landed at offset of DrainsTopic. Until the requests
// of every node are known, the watch judges neither an undo by someone else nor, for an undo,
// its end.
func (w *Watch) Requested(node int32, offset uint64) { w.at[node] = offset }

// IsUndo reports whether the watch follows an undo.
func (w *Watch) IsUndo() bool { return w.undo }

// Nodes are the nodes the watch follows, in order.
func (w *Watch) Nodes() []int32 { return w.nodes }

// Plan is the drain's plan (empty for an undo).
func (w *Watch) Plan() Plan { return w.plan }

// Done reports whether the drain is done (every partition of the plan served elsewhere), or the
// undo (every node serving again).
func (w *Watch) Done() bool { return w.done }

// Undone reports whether someone else reversed what is followed meanwhile: a drain whose node's
// latest request, after the one followed in log order, is an undo; an undo whose node's latest
// request after it is a drain again.
func (w *Watch) Undone() bool { return w.undone }

// Observe moves the watch on with the fleet f, read at now, and returns the phases newly
// reached, in order of partition. A watch that is done or undone stays so and says nothing more.
func (w *Watch) Observe(f Snapshot, now time.Time) []Event {
	if w.done || w.undone {
		return nil
	}
	var out []Event
	if !w.undo {
		out = w.progress(f, now)
		if w.done = w.allServed(); w.done {
			return out
		}
	}
	known := true
	for _, n := range w.nodes {
		at, ok := w.at[n]
		if !ok {
			known = false
			continue
		}
		// The view keeps each node's latest request in log order: a later offset than ours
		// of the opposite kind reverses ours.
		if r, off, ok := f.View.DrainRequestAt(n); ok && off > at && r.Undo != w.undo {
			w.undone = true
			return out
		}
	}
	if w.undo && known {
		w.done = w.serving(f, now)
	}
	return out
}

// serving: the view has read the undo of every node and each serves its share again.
func (w *Watch) serving(f Snapshot, now time.Time) bool {
	for _, n := range w.nodes {
		if _, off, ok := f.View.DrainRequestAt(n); !ok || off < w.at[n] || f.View.DrainStands(n) {
			return false
		}
		if f.View.State(n, now) != fleet.Serving || !f.View.ServesShare(n, now) {
			return false
		}
	}
	return true
}

func (w *Watch) progress(f Snapshot, now time.Time) []Event {
	var out []Event
	for _, s := range w.plan.Steps {
		p := s.Partition
		cl := f.Claim(p)
		claimedElsewhere := cl.Number > s.Claim && cl.Node != s.From
		a, announced := f.View.Announcement(s.From)
		_, stillListed := a.Claims[p]
		released := claimedElsewhere || !announced || a.Leaving || !stillListed
		served := false
		if claimedElsewhere {
			if na, ok := f.View.Announcement(cl.Node); ok {
				served = na.Claims[p] == cl.Number
			}
		}
		reached := 0
		switch {
		case served:
			reached = 3
		case claimedElsewhere:
			reached = 2
		case released:
			reached = 1
		}
		for ph := w.phase[p] + 1; ph <= reached; ph++ {
			e := Event{Time: now, Partition: p}
			switch ph {
			case 1:
				e.Phase, e.Node = PhaseReleased, s.From
			case 2:
				e.Phase, e.Node, e.Claim = PhaseClaimed, cl.Node, cl.Number
			case 3:
				e.Phase, e.Node, e.Claim = PhaseServed, cl.Node, cl.Number
			}
			out = append(out, e)
		}
		w.phase[p] = max(w.phase[p], reached)
	}
	slices.SortStableFunc(out, func(a, b Event) int { return a.Partition - b.Partition })
	return out
}

func (w *Watch) allServed() bool {
	for _, s := range w.plan.Steps {
		if w.phase[s.Partition] < 3 {
			return false
		}
	}
	return true
}
