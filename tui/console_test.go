package tui_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/tui"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) }

var base = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func i32(n int32) *int32        { return &n }
func f64(f float64) *float64    { return &f }
func u64(n uint64) *uint64      { return &n }
func tp(t time.Time) *time.Time { return &t }

// fleetAt is three nodes over 16 partitions at base+1m: partition 5 unowned, partition 9 in
// disagreement with the lease, node 3 draining.
func fleetAt(at time.Time) console.Snapshot {
	s := console.Snapshot{At: at, Status: console.Status{At: at, Store: "127.0.0.1:8090", StoreAnswered: at, Gateways: "localhost:9092", StaleAfter: time.Second}}
	parts := map[int32][]int{}
	for p := range 16 {
		r := claims.PartitionRow{Partition: p, Controller: p == 0, LogEndOffset: uint64(100 + 7*p), Groups: p % 4, Flags: []string{}, SinceCheckpoint: p}
		if p == 5 {
			r.Flags = []string{claims.FlagUnowned}
		} else {
			node := int32(1 + p%3)
			claimed := base.Add(time.Duration(p) * time.Second)
			r.OwnerNode, r.OwnerAddr, r.Claim, r.ClaimedAt = &node, fmt.Sprintf("localhost:909%d", node), uint64(1+p), &claimed
			r.HeldSeconds = f64(at.Sub(claimed).Seconds())
			r.OwnerLagSeconds = f64(0.4 + float64(p)/100)
			r.AssignedNode, r.AssignedClient = &node, u64p(uint32(node-1))
			if p%2 == 0 {
				r.CheckpointOffset = u64(uint64(10 * p))
			}
			parts[node] = append(parts[node], p)
			if node == 3 {
				r.Flags = append(r.Flags, claims.FlagDraining)
			}
		}
		if p == 9 || p == 11 {
			r.Flags = append(r.Flags, claims.FlagAssignmentDiffers)
		}
		s.Rows = append(s.Rows, r)
	}
	for n := int32(1); n <= 3; n++ {
		row := claims.NodeRow{Node: n, State: "serving", Addr: fmt.Sprintf("localhost:909%d", n), Partitions: parts[n], Groups: int(n) * 2,
			LastAnnounced: tp(at.Add(-300 * time.Millisecond)), AnnouncedAgoSeconds: f64(0.3), Version: "v1.4.0", Controller: n == 1, LeaseMember: u32p(uint32(n - 1))}
		if n == 3 {
			row.State, row.DrainRequested, row.DrainedSince = "draining", true, tp(base.Add(50*time.Second))
		}
		s.Nodes = append(s.Nodes, row)
	}
	held, unserved := 48.0, 0.012
	s.Handovers = []claims.HandoverRow{
		{Handover: claims.Handover{Partition: 2, Claim: 3, From: i32(3), To: 2, Addr: "localhost:9092", At: base.Add(50 * time.Second), HeldSeconds: &held}, Reason: claims.ReasonDrain, UnservedSeconds: &unserved},
		{Handover: claims.Handover{Partition: 7, Claim: 8, From: i32(1), To: 2, Addr: "localhost:9092", At: base.Add(20 * time.Second), HeldSeconds: f64(13)}, Reason: claims.ReasonCrash, UnservedSeconds: f64(2.41)},
		{Handover: claims.Handover{Partition: 0, Claim: 1, To: 1, Addr: "localhost:9091", At: base}, Reason: claims.ReasonFirst},
	}
	return s
}

func u64p(n uint32) *uint32 { return &n }
func u32p(n uint32) *uint32 { return &n }

var now0 = base.Add(time.Minute)

// later is the next snapshot: partition 10's log end grew (only that), partition 4 moved from
// node 2 to node 1.
func later() console.Snapshot {
	s := fleetAt(now0.Add(time.Second))
	s.Rows[10].LogEndOffset = 242
	s.Rows[4].OwnerNode, s.Rows[4].Claim = i32(1), 17
	s.Changes = []claims.Change{
		{Time: s.At, Partition: 10, Field: claims.FieldLogEnd, Old: "170", New: "242"},
		{Time: s.At, Partition: 4, Field: claims.FieldOwner, Old: "2", New: "1"},
		{Time: s.At, Partition: 4, Field: claims.FieldClaim, Old: "5", New: "17"},
	}
	s.Handovers = append([]claims.HandoverRow{{Handover: claims.Handover{Partition: 4, Claim: 17, From: i32(2), To: 1, Addr: "localhost:9091", At: s.At, HeldSeconds: f64(57)}, Reason: claims.ReasonLease, UnservedSeconds: f64(0.2)}}, s.Handovers...)
	return s
}

// stale is the status a second and a half after the store went silent.
func stale() tui.StatusMsg {
	return tui.StatusMsg{At: now0.Add(2500 * time.Millisecond), Store: "127.0.0.1:8090", StoreAnswered: now0.Add(time.Second), StoreError: "iggy: no server reachable: dial tcp 127.0.0.1:8090: connect: connection refused",
		Retry: 2, NextRetry: now0.Add(3 * time.Second), Gateways: "localhost:9092", StaleAfter: time.Second}
}

func plan() drainwatch.Plan {
	return drainwatch.Plan{Nodes: []int32{2}, ServingAfter: []int32{1, 3}, Steps: []drainwatch.Step{
		{Partition: 1, From: 2, To: i32(1), Claim: 2, Groups: []string{"orders"}, Members: 2},
		{Partition: 4, From: 2, To: i32(3), Claim: 5, Groups: []string{}},
		{Partition: 7, From: 2, To: i32(1), Claim: 8, Groups: []string{"a", "b"}, Members: 1},
	}}
}

func groups() []stateview.GroupView {
	return []stateview.GroupView{
		{Group: "orders", State: "Stable", Generation: 3, ProtocolType: "consumer", Protocol: "range", Members: make([]stateview.MemberView, 2), Offsets: make([]stateview.OffsetView, 3)},
		{Group: "billing", State: "Empty", Generation: 1, ProtocolType: "consumer", Protocol: "", Members: []stateview.MemberView{}, Offsets: make([]stateview.OffsetView, 1)},
	}
}

func detail() livegroups.GroupDetail {
	lag := func(p int32, commit, end int64, secs float64) livegroups.GroupLag {
		l := end - commit
		return livegroups.GroupLag{Topic: "orders", Partition: p, Committed: &commit, LogEnd: &end, Lag: &l, LagSeconds: &secs, MemberID: "m-1", ClientID: "worker-a"}
	}
	return livegroups.GroupDetail{
		GroupCoordinator: claims.GroupCoordinator{Group: "orders", Partition: 7, OwnerNode: i32(2), OwnerAddr: "localhost:9092", Claim: 8, InLog: true, FindCoordinatorNode: i32(2), FindCoordinatorAddr: "localhost:9092", Agrees: true},
		State:            "Stable", ProtocolType: "consumer", Protocol: "range", Generation: i32(3),
		Members: []livegroups.GroupMember{{MemberID: "m-1", ClientID: "worker-a", ClientHost: "/10.0.0.1", Assignment: "orders[0,1]"}, {MemberID: "m-2", ClientID: "worker-b", ClientHost: "/10.0.0.2", Assignment: "orders[2]"}},
		Lag:     []livegroups.GroupLag{lag(0, 140, 156, 3.2), lag(1, 242, 242, 0), lag(2, 90, 130, 61)},
	}
}

// fakeActions records the calls the view makes.
type fakeActions struct {
	mu       sync.Mutex
	calls    []string
	drained  []drainwatch.Plan
	planErr  error
	undoErr  error
	groupErr error
	seekErr  error
	undoable string
	seeks    []groupadmin.Plan

	topicsErr error
	tails     tailActions

	txns         []claims.TxnRow
	abortPlanErr error
	aborted      []txnadmin.Plan
}

func (f *fakeActions) call(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
}

func (f *fakeActions) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeActions) PlanDrain(_ context.Context, nodes []int32) (drainwatch.Plan, error) {
	f.call(fmt.Sprintf("plan %v", nodes))
	p := plan()
	p.Nodes = nodes
	return p, f.planErr
}

func (f *fakeActions) Drain(_ context.Context, p drainwatch.Plan) error {
	f.call(fmt.Sprintf("drain %v", p.Nodes))
	f.mu.Lock()
	f.drained = append(f.drained, p)
	f.mu.Unlock()
	return nil
}

func (f *fakeActions) CheckUndo(_ context.Context, nodes []int32) error {
	f.call(fmt.Sprintf("check-undo %v", nodes))
	return f.undoErr
}

func (f *fakeActions) Undo(_ context.Context, nodes []int32) error {
	f.call(fmt.Sprintf("undo %v", nodes))
	return nil
}

func (f *fakeActions) Groups(_ context.Context, p int) ([]stateview.GroupView, error) {
	f.call(fmt.Sprintf("groups %d", p))
	return groups(), nil
}

func (f *fakeActions) Group(_ context.Context, g string) (livegroups.GroupDetail, error) {
	f.call("group " + g)
	return detail(), f.groupErr
}

// seekPlan is the plan of a seek of detail()'s group: three partitions, one clamped.
func seekPlan(name, value string) groupadmin.Plan {
	t := groupadmin.Target{Kind: groupadmin.Shift, Shift: -100}
	if name == "undo" {
		t = groupadmin.Target{Kind: groupadmin.Undo, Seek: "2026-12-01T08:58:00Z", Commits: map[string]map[int32]int64{"orders": {0: 120, 1: 200, 2: 80}}}
	}
	return groupadmin.BuildPlan("orders", t, []groupadmin.Partition{
		{Topic: "orders", Partition: 0, Committed: 140, Start: 0, End: 156},
		{Topic: "orders", Partition: 1, Committed: 242, Start: 0, End: 242},
		{Topic: "orders", Partition: 2, Committed: 90, Start: 40, End: 130},
	})
}

func (f *fakeActions) PlanSeek(_ context.Context, group, name, value string) (groupadmin.Plan, []string, error) {
	f.call(fmt.Sprintf("plan-seek %s %s %q", group, name, value))
	if f.seekErr != nil {
		return groupadmin.Plan{}, nil, f.seekErr
	}
	var notes []string
	if name == "undo" {
		notes = []string{"orders[3] had no commit before seek 2026-12-01T08:58:00Z: left as it is"}
	}
	return seekPlan(name, value), notes, nil
}

func (f *fakeActions) Seek(_ context.Context, p groupadmin.Plan) error {
	f.call("seek " + p.Group + " to " + p.Target.String())
	f.mu.Lock()
	f.seeks = append(f.seeks, p)
	f.mu.Unlock()
	return nil
}

func (f *fakeActions) Undoable(_ context.Context, group string) (string, error) {
	f.call("undoable " + group)
	return f.undoable, nil
}

func update(m tea.Model, msgs ...tea.Msg) tea.Model {
	for _, msg := range msgs {
		var cmd tea.Cmd
		m, cmd = m.Update(msg)
		// Run an action's command at once, as the program would, and feed its answer back.
		if cmd != nil {
			if out := cmd(); out != nil {
				if _, quit := out.(tea.QuitMsg); !quit {
					m, _ = m.Update(out)
				}
			}
		}
	}
	return m
}

func keyMsg(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func keys(s ...string) []tea.Msg {
	var out []tea.Msg
	for _, k := range s {
		out = append(out, keyMsg(k))
	}
	return out
}

func checkSize(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("%d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := lipgloss.Width(l); n > w {
			t.Errorf("line %d is %d columns wide, more than %d: %q", i, n, w, l)
		}
	}
}

func newConsole(act tui.Actions) tui.Console { return tui.NewConsole(fleetAt(now0), act, false) }

func TestConsoleViewGolden(t *testing.T) {
	drain := later()
	p := plan()
	drain.Drain = &console.DrainStatus{Nodes: []int32{2}, Plan: p, Events: []drainwatch.Event{
		{Time: drain.At, Partition: 1, Phase: drainwatch.PhaseReleased, Node: 2},
		{Time: drain.At, Partition: 1, Phase: drainwatch.PhaseClaimed, Node: 1, Claim: 9},
		{Time: drain.At, Partition: 1, Phase: drainwatch.PhaseServed, Node: 1, Claim: 9},
		{Time: drain.At, Partition: 4, Phase: drainwatch.PhaseReleased, Node: 2},
	}}
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"start", nil},
		{"changed", []tea.Msg{tui.SnapshotMsg(later())}},
		{"stale", []tea.Msg{tui.SnapshotMsg(later()), stale()}},
		{"help", keys("?")},
		{"filter", keys("/", "n", "o", "d", "e", " ", "2", "enter")},
		{"sorted", keys("s", "s", "S")},
		{"scrolled", keys("G")},
		{"groups", keys("j", "j", "j", "j", "j", "j", "j", "enter")},
		{"group", keys("enter", "enter")},
		{"seek", keys("enter", "enter", "o", "s", "h", "i", "f", "t", " ", "-", "1", "0", "0")},
		{"seekplan", keys("enter", "enter", "o", "s", "h", "i", "f", "t", " ", "-", "1", "0", "0", "enter")},
		{"seekundo", keys("enter", "enter", "U")},
		{"plan", keys("tab", "tab", "j", "d")},
		{"drain", append(keys("tab", "tab", "j", "d", "y"), tui.SnapshotMsg(drain))},
		{"undo", keys("tab", "tab", "j", "j", "u")},
		{"move", keys("m")},
	}
	sizes := []struct{ w, h int }{{80, 24}, {120, 35}, {60, 15}}
	for _, sz := range sizes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%dx%d/%s", sz.w, sz.h, c.name), func(t *testing.T) {
				m := update(newConsole(&fakeActions{}), append([]tea.Msg{tea.WindowSizeMsg{Width: sz.w, Height: sz.h}}, c.msgs...)...)
				v := m.View()
				checkSize(t, v, sz.w, sz.h)
				golden.Assert(t, fmt.Sprintf("Console_%dx%d_%s", sz.w, sz.h, c.name), []byte(v))
			})
		}
	}
}

// Columns follow the width: at 120 columns FLAGS is whole and OWNER-LAG and ASSIGNED are there;
// at 60 the essential ones stay.
func TestConsoleColumnsFollowTheWidth(t *testing.T) {
	for _, c := range []struct {
		w         int
		want, not []string
	}{
		{160, []string{"CHECKPOINT", "PARTITIONS", "owner-draining,assignment-differs"}, nil},
		{120, []string{"OWNER-LAG", "ASSIGNED", "ADDRESS", "owner-draining,assignment-differs"}, []string{"CHECKPOINT"}},
		{80, []string{"OWNER-LAG", "FLAGS", "END"}, []string{"CHECKPOINT"}},
		{60, []string{"PART", "OWNER", "END", "FLAGS"}, []string{"OWNER-LAG", "ADDRESS  CLAIM"}},
	} {
		v := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: c.w, Height: 40}).View()
		for _, w := range c.want {
			if !strings.Contains(v, w) {
				t.Errorf("%d columns: %q missing:\n%s", c.w, w, v)
			}
		}
		for _, w := range c.not {
			if strings.Contains(v, w) {
				t.Errorf("%d columns: %q shown:\n%s", c.w, w, v)
			}
		}
	}
}

// At 60x15 the partition pane scrolls: every partition can be reached and shown.
func TestConsoleScrollsEveryPartitionIntoView(t *testing.T) {
	m := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: 60, Height: 15})
	for p := range 16 {
		v := m.View()
		found := false
		for _, l := range strings.Split(v, "\n") {
			if strings.HasPrefix(l, ">") && strings.Fields(l[2:])[0] == fmt.Sprint(p) {
				found = true
			}
		}
		if !found {
			t.Fatalf("partition %d selected but not on screen:\n%s", p, v)
		}
		m = update(m, keyMsg("j"))
	}
}

// A change is found by field: the END of partition 10 changes alone and its row is marked; the
// mark goes once markFor has passed without a change.
func TestConsoleMarksChangedFields(t *testing.T) {
	m := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: 80, Height: 40}, tui.SnapshotMsg(later()))
	row := func(v string, p int) string {
		for _, l := range strings.Split(v, "\n") {
			if f := strings.Fields(strings.TrimLeft(l, ">+? ")); len(f) > 0 && f[0] == fmt.Sprint(p) && strings.Contains(l, "localhost") == false && len(f) > 3 {
				return l
			}
		}
		return ""
	}
	v := m.View()
	if r := row(v, 10); !strings.HasPrefix(r, " +") || !strings.Contains(r, "242") {
		t.Fatalf("partition 10 row %q not marked with its new end:\n%s", r, v)
	}
	if r := row(v, 11); strings.HasPrefix(r, " +") {
		t.Fatalf("partition 11 row %q marked without a change", r)
	}
	quiet := fleetAt(now0.Add(5 * time.Second))
	quiet.Rows[10].LogEndOffset = 242
	v = update(m, tui.SnapshotMsg(quiet)).View()
	if r := row(v, 10); strings.HasPrefix(r, " +") {
		t.Fatalf("partition 10 still marked after %v: %q", 4*time.Second, r)
	}
}

func TestConsoleSortsAndFilters(t *testing.T) {
	m := update(newConsole(&fakeActions{}), keys("s", "S")...).(tui.Console)
	var owners []int32
	for _, r := range m.Parts() {
		if r.OwnerNode != nil {
			owners = append(owners, *r.OwnerNode)
		}
	}
	if !slices.IsSortedFunc(owners, func(a, b int32) int { return int(b - a) }) || owners[0] != 3 {
		t.Fatalf("sorted by owner, reversed: %v", owners)
	}
	m = update(m, keys("/", "n", "o", "d", "e", " ", "2", "enter")...).(tui.Console)
	if m.Filter() != "node 2" || len(m.Parts()) != 5 || len(m.Nodes()) != 1 || m.Nodes()[0].Node != 2 {
		t.Fatalf("filter %q kept %d partitions, nodes %+v", m.Filter(), len(m.Parts()), m.Nodes())
	}
	m = update(m, keyMsg("esc")).(tui.Console)
	if m.Filter() != "" || len(m.Parts()) != 16 {
		t.Fatalf("esc left filter %q", m.Filter())
	}
}

// The stale banner comes with the status and goes with the next answer; rows are kept.
func TestConsoleBannerWhenTheStoreIsSilent(t *testing.T) {
	m := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: 120, Height: 35}, tui.SnapshotMsg(later()), stale())
	v := m.View()
	if !strings.Contains(v, "! no answer from the store at 127.0.0.1:8090 for 2s (retry 2 in 500ms)") || !strings.Contains(v, "STALE since 09:01:01") {
		t.Fatalf("no banner:\n%s", v)
	}
	if !strings.Contains(v, " ?10   2") || !strings.Contains(v, "242") {
		t.Fatalf("rows not kept and marked stale:\n%s", v)
	}
	back := fleetAt(now0.Add(4 * time.Second))
	v = update(m, tui.SnapshotMsg(back)).View()
	if strings.Contains(v, "no answer") || strings.Contains(v, "STALE") {
		t.Fatalf("banner after the store answered again:\n%s", v)
	}
}

// waitFor waits until the output written since the last wait holds what: the renderer writes
// a frame once, so two things of one frame are waited for in one call.
func waitFor(t *testing.T, tm *teatest.TestModel, what string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(what)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}

// Drill-down through a real program: enter lists the partition's groups, enter on a group shows
// its members and lag, esc goes back each step.
func TestConsoleDrillDownTeatest(t *testing.T) {
	act := &fakeActions{}
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(100, 30))
	for _, k := range []string{"j", "j", "j", "j", "j", "j", "j", "enter"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, "[GROUPS of partition 7] owner node 2, claim 8")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "state Stable · protocol consumer/range · generation 3 · 2 members")
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("j"))
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(tui.Console)
	if final.Screen() != "main" {
		t.Fatalf("esc twice left screen %s", final.Screen())
	}
	if got, want := act.Calls(), []string{"groups 7", "group orders", "undoable orders"}; !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// The drain flow through a real program: d shows the plan, anything but y cancels, y drains
// with the plan shown, the progress appears as the engine reports it; u checks, asks, undoes.
func TestConsoleDrainFlowTeatest(t *testing.T) {
	act := &fakeActions{}
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(100, 30))
	tm.Send(keyMsg("d"))
	waitFor(t, tm, "tab to the nodes pane first")
	for _, k := range []string{"tab", "tab", "j", "d"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, "drain node 2? y drains, any other key cancels")
	tm.Send(keyMsg("n"))
	waitFor(t, tm, "drain of node 2 cancelled")
	tm.Send(keyMsg("d"))
	waitFor(t, tm, "3 partition(s) move (0 collateral)")
	tm.Send(keyMsg("y"))
	waitFor(t, tm, "drain of node 2 requested")
	s := later()
	s.Drain = &console.DrainStatus{Nodes: []int32{2}, Plan: plan(), Events: []drainwatch.Event{{Time: s.At, Partition: 1, Phase: drainwatch.PhaseReleased, Node: 2}}}
	tm.Send(tui.SnapshotMsg(s))
	waitFor(t, tm, "partition 1: released by node 2")
	s.Drain.Events = append(s.Drain.Events, drainwatch.Event{Time: s.At, Partition: 1, Phase: drainwatch.PhaseServed, Node: 1, Claim: 9})
	s.Drain.Done = true
	tm.Send(tui.SnapshotMsg(s))
	waitFor(t, tm, "node 2 drained: every partition is claimed and served elsewhere")
	tm.Send(keyMsg("u"))
	waitFor(t, tm, "undo the drain of node 2? y undoes")
	tm.Send(keyMsg("y"))
	waitFor(t, tm, "undo of node 2 requested")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	want := []string{"plan [2]", "plan [2]", "drain [2]", "check-undo [2]", "undo [2]"}
	if got := act.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if len(act.drained) != 1 || len(act.drained[0].Steps) != 3 {
		t.Fatalf("drained with %+v, not the plan shown", act.drained)
	}
}

// A refusal of the engine (the same rules as `drain`) is said in the footer and nothing is
// drained.
func TestConsoleShowsRefusals(t *testing.T) {
	act := &fakeActions{planErr: errors.New("refusing to drain node 2: no gateway would be left serving the coordinator log (1 gateway serves now: node 2)")}
	m := update(newConsole(act), append([]tea.Msg{tea.WindowSizeMsg{Width: 200, Height: 30}}, keys("tab", "tab", "j", "d")...)...).(tui.Console)
	if m.Plan() != nil || !strings.Contains(m.View(), "drain refused: refusing to drain node 2") {
		t.Fatalf("refusal not shown:\n%s", m.View())
	}
	update(m, keyMsg("y"))
	if got := act.Calls(); !slices.Equal(got, []string{"plan [2]"}) {
		t.Fatalf("calls %v", got)
	}
	ro := update(tui.NewConsole(fleetAt(now0), act, true), keys("tab", "tab", "d")...).(tui.Console)
	if !strings.Contains(ro.Message(), "read-only") {
		t.Fatalf("read-only console: %q", ro.Message())
	}
}

// Styles change no text: with colours the view shows, once the escape sequences are taken out,
// what it shows without (a styled cell once cut a row short by the length of its escapes).
func TestConsoleStylesKeepTheText(t *testing.T) {
	m := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: 120, Height: 35}, tui.SnapshotMsg(later()))
	plain := m.View()
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	styled := m.View()
	if styled == plain {
		t.Fatal("no style in the styled view")
	}
	if got := ansi.Strip(styled); got != plain {
		t.Fatalf("styled view, stripped:\n%s\nplain view:\n%s", got, plain)
	}
}

// Keys that arrive together (typed faster than the terminal is read) act one by one.
func TestConsoleKeysTypedTogether(t *testing.T) {
	act := &fakeActions{}
	m := update(newConsole(act), tea.KeyMsg{Type: tea.KeyTab}, tea.KeyMsg{Type: tea.KeyTab}, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jd")}).(tui.Console)
	if got := act.Calls(); !slices.Equal(got, []string{"plan [2]"}) || m.Plan() == nil {
		t.Fatalf("calls %v, plan %v", got, m.Plan())
	}
}

// The seek dialog through a real program: o asks for the target, enter shows the plan, anything
// but y cancels without a seek, y seeks with the plan shown and the group page comes back; U
// plans the undo of the seek the page marks, with the notes of what it leaves.
func TestConsoleSeekFlowTeatest(t *testing.T) {
	act := &fakeActions{undoable: "2026-12-01T08:58:00Z"}
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(100, 30))
	for _, k := range []string{"j", "j", "j", "j", "j", "j", "j", "enter"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, "[GROUPS of partition 7]")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "seek 2026-12-01T08:58:00Z can be undone: U")
	type_ := func(s string) {
		for _, r := range s {
			tm.Send(keyMsg(string(r)))
		}
	}
	tm.Send(keyMsg("o"))
	waitFor(t, tm, "[SEEK orders] where to move")
	type_("shift -100")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "move the offsets of orders? y moves, any other key cancels")
	tm.Send(keyMsg("n"))
	waitFor(t, tm, "seek of group orders cancelled: nothing was moved")
	tm.Send(keyMsg("o"))
	type_("shift -100")
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, "would move 3 of 3 partition(s) to a shift of -100")
	tm.Send(keyMsg("y"))
	waitFor(t, tm, "group orders moved 3 of 3 partition(s) to a shift of -100")
	tm.Send(keyMsg("U"))
	waitFor(t, tm, "orders[3] had no commit before seek")
	tm.Send(keyMsg("y"))
	waitFor(t, tm, "group orders moved 3 of 3 partition(s) to the offsets seek 2026-12-01T08:58:00Z replaced")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	want := []string{
		"groups 7", "group orders", "undoable orders",
		`plan-seek orders shift "-100"`,
		`plan-seek orders shift "-100"`, "seek orders to a shift of -100", "group orders", "undoable orders",
		`plan-seek orders undo ""`, "seek orders to the offsets seek 2026-12-01T08:58:00Z replaced", "group orders", "undoable orders",
	}
	if got := act.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls\n%q\nwant\n%q", got, want)
	}
	act.mu.Lock()
	defer act.mu.Unlock()
	if len(act.seeks) != 2 || act.seeks[0].Steps[2].New != 40 || act.seeks[0].Steps[2].Clamped == "" {
		t.Fatalf("seeks %+v: want the plans shown", act.seeks)
	}
}

// A read-only console offers no seek; a refused plan says why and stays on the group page.
func TestConsoleSeekRefused(t *testing.T) {
	m := update(tui.NewConsole(fleetAt(now0), &fakeActions{}, true), keys("enter", "enter", "o")...)
	if c := m.(tui.Console); c.Screen() != "group" || c.Message() != "read-only console: seeks are off" {
		t.Fatalf("read-only: screen %s message %q", c.Screen(), c.Message())
	}
	act := &fakeActions{seekErr: errors.New("group orders has 2 live member(s): m-1 (client worker-a on /10.0.0.1), m-2 (client worker-b on /10.0.0.2); stop its consumers first")}
	m = update(newConsole(act), keys("enter", "enter", "o", "u", "n", "d", "o", "enter")...)
	if c := m.(tui.Console); c.Screen() != "group" || !strings.HasPrefix(c.Message(), "seek refused: group orders has 2 live member(s)") {
		t.Fatalf("refused: screen %s message %q", c.Screen(), c.Message())
	}
	if slices.ContainsFunc(act.Calls(), func(c string) bool { return strings.HasPrefix(c, "seek ") }) {
		t.Fatalf("a refused plan was executed: %v", act.Calls())
	}
}
