package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/topics"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// Actions is what the console's keys ask of the fleet; *console.Console has it. Every call runs
// in a command of its own, never in Update.
type Actions interface {
	PlanDrain(ctx context.Context, nodes []int32) (drainwatch.Plan, error)
	Drain(ctx context.Context, plan drainwatch.Plan) error
	CheckUndo(ctx context.Context, nodes []int32) error
	Undo(ctx context.Context, nodes []int32) error
	Groups(ctx context.Context, partition int) ([]stateview.GroupView, error)
	Group(ctx context.Context, group string) (livegroups.GroupDetail, error)
	// PlanSeek plans a seek of group's committed offsets to a target as `group seek` takes it
	// (groupadmin.ParseTarget's name and value), with notes on what it leaves out; Seek commits a
	// plan the operator confirmed; Undoable names the group's seek an undo would undo ("" for
	// none).
	PlanSeek(ctx context.Context, group, name, value string) (groupadmin.Plan, []string, error)
	Seek(ctx context.Context, plan groupadmin.Plan) error
	Undoable(ctx context.Context, group string) (string, error)
	// Topics measures the fleet's topics (topics.Sampler.Sample): each call's rates are over
	// the time since the previous call.
	Topics(ctx context.Context) (topics.Snapshot, error)
	// Tail opens a live tail of topic's partitions (every one when nil) from `from` as `tail
	// --from` takes it; "" starts TailBacklog records before each end.
	Tail(ctx context.Context, topic string, partitions []int32, from string) (RecordStream, error)
	// Transactions lists the open transactions as `claims --transactions` does (the engine's
	// model); PlanAbort plans the abort of one as `transactions abort` does (txnadmin.PlanAbort)
	// and Abort carries out a plan the operator confirmed (txnadmin.Abort).
	Transactions(ctx context.Context) ([]claims.TxnRow, error)
	PlanAbort(ctx context.Context, id string) (txnadmin.Plan, error)
	Abort(ctx context.Context, plan txnadmin.Plan) (txnadmin.Summary, error)
}

// SnapshotMsg is a snapshot of the fleet from the console engine.
type SnapshotMsg console.Snapshot

// StatusMsg is the engine's beat: the state of its sources now.
type StatusMsg console.Status

// Results of the actions.
type (
	planMsg struct {
		plan drainwatch.Plan
		err  error
	}
	doneMsg struct {
		what string
		err  error
	}
	undoCheckedMsg struct {
		node int32
		err  error
	}
	groupsMsg struct {
		partition int
		groups    []stateview.GroupView
		err       error
	}
	groupMsg struct {
		group  string
		detail livegroups.GroupDetail
		err    error
	}
	seekPlanMsg struct {
		plan  groupadmin.Plan
		notes []string
		err   error
	}
	seekDoneMsg struct {
		plan groupadmin.Plan
		err  error
	}
	undoableMsg struct {
		group, seek string
	}
)

type pane int

const (
	nodesPane pane = iota
	partsPane
	handPane
	panes
)

type screen int

const (
	mainScreen screen = iota
	groupsScreen
	groupScreen
	planScreen
	undoScreen
	helpScreen
	seekInputScreen
	seekPlanScreen
	topicsScreen
	tailScreen
	txnsScreen
	txnPlanScreen
)

// markFor is how long a changed cell stays marked.
const markFor = 3 * time.Second

// actionTimeout bounds one action of the console.
const actionTimeout = 15 * time.Second

type markKey struct {
	pane  pane
	id    int
	field string
}

type sortSpec struct {
	col  int // index into the pane's full column list
	desc bool
}

// Console is the model of the live console (`claims --watch`): a node pane, a partition pane
// and a pane of recent handovers (or of the drain under way), a status line and a banner when a
// source stops answering; a partition's groups and a group's members and lag on enter; drain
// and undo with their plan and confirmation. It renders what the engine sends and asks it
// through Actions; it holds no rule of its own.
type Console struct {
	act      Actions
	readOnly bool

	snap     console.Snapshot
	status   console.Status
	loaded   bool
	marks    map[markKey]time.Time
	seenHand map[[2]uint64]bool

	width, height int
	screen        screen
	back          screen // where esc returns from the help page
	focus         pane
	cursor        [panes]int
	offset        [panes]int
	sorts         [panes]sortSpec

	filter    textinput.Model
	filtering bool
	help      help.Model

	message    string
	messageErr bool
	busy       string // the action under way

	// Drill-down.
	groupsPart  int
	groups      []stateview.GroupView
	groupCursor int
	group       *livegroups.GroupDetail
	groupName   string
	groupScroll int

	// The plan shown for confirmation, the node an undo waits to be confirmed for, and whether
	// the drain pane was closed.
	plan       *drainwatch.Plan
	planScroll int
	undoNode   int32
	drainShut  bool

	// The seek dialog of the group page: the target being typed, the plan shown for
	// confirmation with its notes, and the group's seek an undo would undo.
	seekInput textinput.Model
	seekPlan  *groupadmin.Plan
	seekNotes []string
	undoable  string

	// The topics screen and the tail pane, with the tail's stream (closed by esc, by a jump
	// that replaced it, and by Close).
	topics     topicsView
	tail       tailView
	tailStream RecordStream

	// The transactions screen and the abort waiting for confirmation.
	txns txnsView
}

// Close stops the tail pane's reader, if one runs; the program's owner calls it on the final
// model.
func (m Console) Close() {
	if m.tailStream != nil {
		m.tailStream.Close()
	}
}

// NewConsole starts the view on a first snapshot. act performs the actions; readOnly hides
// drain and undo.
func NewConsole(first console.Snapshot, act Actions, readOnly bool) Console {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "node 2, p7, draining, crash..."
	ti.CharLimit = 64
	// A steady cursor: a blinking one redraws the screen twice a second for nothing.
	ti.Cursor.SetMode(cursor.CursorStatic)
	h := help.New()
	h.ShortSeparator = " · "
	si := textinput.New()
	si.Prompt = "seek to: "
	si.Placeholder = "to earliest · to latest · to-offset N · to-time 10m · shift -100 · to-commit-at T · undo"
	si.CharLimit = 64
	si.Cursor.SetMode(cursor.CursorStatic)
	m := Console{act: act, readOnly: readOnly, marks: map[markKey]time.Time{}, seenHand: map[[2]uint64]bool{},
		width: 80, height: 24, focus: partsPane, filter: ti, help: h, seekInput: si, txns: txnsView{sort: sortSpec{col: txnAge}}}
	m = m.apply(first)
	return m
}

func (m Console) Init() tea.Cmd { return nil }

// now is the latest time the engine spoke of.
func (m Console) now() time.Time {
	if m.status.At.After(m.snap.At) {
		return m.status.At
	}
	return m.snap.At
}

func (m Console) apply(s console.Snapshot) Console {
	marks := make(map[markKey]time.Time, len(m.marks))
	for k, at := range m.marks {
		if s.At.Sub(at) < markFor {
			marks[k] = at
		}
	}
	for _, c := range s.Changes {
		marks[markKey{partsPane, c.Partition, c.Field}] = s.At
	}
	for _, c := range s.NodeChanges {
		marks[markKey{nodesPane, int(c.Node), c.Field}] = s.At
	}
	for _, h := range s.Handovers {
		k := [2]uint64{uint64(h.Partition), h.Claim}
		if m.loaded && !m.seenHand[k] {
			marks[markKey{handPane, h.Partition, strconv.FormatUint(h.Claim, 10)}] = s.At
			marks[markKey{partsPane, h.Partition, claims.FieldOwner}] = s.At
		}
		m.seenHand[k] = true
	}
	m.marks = marks
	if s.Drain != nil && (m.snap.Drain == nil || !slices.Equal(s.Drain.Nodes, m.snap.Drain.Nodes) || s.Drain.Undo != m.snap.Drain.Undo) {
		m.drainShut = false
	}
	m.snap, m.status, m.loaded = s, s.Status, true
	return m
}

func (m Console) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := m.update(msg)
	return next.scrolled().scrolledTopics().scrolledTxns(), cmd
}

func (m Console) update(msg tea.Msg) (Console, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		return m, nil
	case SnapshotMsg:
		return m.apply(console.Snapshot(msg)).beat()
	case StatusMsg:
		m.status = console.Status(msg)
		return m.beat()
	case topicsMsg:
		return m.gotTopics(msg), nil
	case txnsMsg:
		return m.gotTxns(msg), nil
	case txnPlanMsg:
		return m.gotTxnPlan(msg), nil
	case txnDoneMsg:
		return m.gotTxnDone(msg)
	case tailOpenedMsg:
		return m.tailOpened(msg)
	case tailBatchMsg:
		return m.tailBatch(msg)
	case planMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(true, "drain refused: "+msg.err.Error())
			return m, nil
		}
		p := msg.plan
		m.plan, m.planScroll, m.screen = &p, 0, planScreen
		return m, nil
	case undoCheckedMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(true, "undo refused: "+msg.err.Error())
			return m, nil
		}
		m.undoNode, m.screen = msg.node, undoScreen
		return m, nil
	case doneMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(true, msg.what+" failed: "+msg.err.Error())
		} else {
			m.say(false, msg.what+" requested; progress below")
		}
		return m, nil
	case groupsMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(true, "groups of partition "+strconv.Itoa(msg.partition)+": "+msg.err.Error())
			return m, nil
		}
		m.groupsPart, m.groups, m.groupCursor, m.screen = msg.partition, msg.groups, 0, groupsScreen
		return m, nil
	case groupMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(true, "group "+msg.group+": "+msg.err.Error())
			return m, nil
		}
		d := msg.detail
		if msg.group != m.groupName {
			m.undoable = ""
		}
		if m.screen != seekInputScreen && m.screen != seekPlanScreen {
			m.screen = groupScreen
		}
		m.group, m.groupName, m.groupScroll = &d, msg.group, 0
		name := msg.group
		return m, m.run(func(ctx context.Context) tea.Msg {
			id, err := m.act.Undoable(ctx, name)
			if err != nil {
				id = ""
			}
			return undoableMsg{name, id}
		})
	case undoableMsg:
		if msg.group == m.groupName {
			m.undoable = msg.seek
		}
		return m, nil
	case seekPlanMsg:
		m.busy = ""
		if msg.err != nil {
			m.screen = groupScreen
			m.say(true, "seek refused: "+msg.err.Error())
			return m, nil
		}
		p := msg.plan
		m.seekPlan, m.seekNotes, m.screen = &p, msg.notes, seekPlanScreen
		return m, nil
	case seekDoneMsg:
		m.busy = ""
		sum := msg.plan.Summary()
		if msg.err != nil {
			m.say(true, "seek of group "+msg.plan.Group+" failed: "+msg.err.Error())
			return m, nil
		}
		sum.Done = true
		m.say(false, sum.String())
		name := msg.plan.Group
		return m, m.run(func(ctx context.Context) tea.Msg {
			d, err := m.act.Group(ctx, name)
			return groupMsg{name, d, err}
		})
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Console) say(isErr bool, s string) { m.message, m.messageErr = s, isErr }

func (m Console) key(msg tea.KeyMsg) (Console, tea.Cmd) {
	// Keys typed faster than the terminal is read arrive as one message of several runes: each
	// is a key of its own (a filter being typed takes them as text).
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !m.filtering && !msg.Paste {
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			m, cmd = m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			m = m.scrolled()
			cmds = append(cmds, cmd)
		}
		return m, tea.Batch(cmds...)
	}
	if m.filtering {
		switch msg.Type {
		case tea.KeyEnter:
			m.filtering = false
			m.filter.Blur()
			return m, nil
		case tea.KeyEsc:
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
			return m, nil
		}
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		m.cursor[nodesPane], m.cursor[partsPane], m.cursor[handPane] = 0, 0, 0
		return m, cmd
	}
	if m.screen == tailScreen && m.tail.input != noInput {
		return m.tailKey(msg)
	}
	// A confirmation takes any key: y confirms, everything else cancels.
	switch m.screen {
	case seekInputScreen:
		switch msg.Type {
		case tea.KeyEsc:
			m.screen = groupScreen
			m.seekInput.Blur()
			return m, nil
		case tea.KeyEnter:
			name, value := seekWords(m.seekInput.Value())
			group := m.groupName
			m.seekInput.Blur()
			m.busy = "planning the seek of group " + group
			return m, m.run(func(ctx context.Context) tea.Msg {
				p, notes, err := m.act.PlanSeek(ctx, group, name, value)
				return seekPlanMsg{p, notes, err}
			})
		}
		var cmd tea.Cmd
		m.seekInput, cmd = m.seekInput.Update(msg)
		return m, cmd
	case seekPlanScreen:
		plan := *m.seekPlan
		m.screen, m.seekPlan, m.seekNotes = groupScreen, nil, nil
		if msg.String() != "y" {
			m.say(false, "seek of group "+plan.Group+" cancelled: nothing was moved")
			return m, nil
		}
		m.busy = "moving the offsets of group " + plan.Group
		return m, m.run(func(ctx context.Context) tea.Msg {
			return seekDoneMsg{plan, m.act.Seek(ctx, plan)}
		})
	case planScreen:
		plan := *m.plan
		m.screen, m.plan = mainScreen, nil
		if msg.String() != "y" {
			m.say(false, "drain of "+nodesText(plan.Nodes)+" cancelled")
			return m, nil
		}
		m.busy = "requesting the drain of " + nodesText(plan.Nodes)
		return m, m.run(func(ctx context.Context) tea.Msg {
			return doneMsg{"drain of " + nodesText(plan.Nodes), m.act.Drain(ctx, plan)}
		})
	case txnPlanScreen:
		return m.txnPlanKey(msg)
	case undoScreen:
		n := m.undoNode
		m.screen = mainScreen
		if msg.String() != "y" {
			m.say(false, "undo of node "+strconv.Itoa(int(n))+" cancelled")
			return m, nil
		}
		m.busy = "requesting the undo of node " + strconv.Itoa(int(n))
		return m, m.run(func(ctx context.Context) tea.Msg {
			return doneMsg{"undo of node " + strconv.Itoa(int(n)), m.act.Undo(ctx, []int32{n})}
		})
	}
	switch {
	case key.Matches(msg, keys.Quit):
		return m, tea.Quit
	case key.Matches(msg, keys.Help):
		if m.screen == helpScreen {
			m.screen = m.back
		} else {
			m.back, m.screen = m.screen, helpScreen
		}
		return m, nil
	}
	switch m.screen {
	case helpScreen:
		if key.Matches(msg, keys.Back) {
			m.screen = m.back
		}
		return m, nil
	case groupsScreen:
		return m.groupsKey(msg)
	case topicsScreen:
		return m.topicsKey(msg)
	case txnsScreen:
		return m.txnsKey(msg)
	case tailScreen:
		return m.tailKey(msg)
	case groupScreen:
		switch {
		case key.Matches(msg, keys.Back):
			m.screen = groupsScreen
			if m.groups == nil {
				m.screen = mainScreen
			}
		case key.Matches(msg, keys.Up):
			m.groupScroll = max(0, m.groupScroll-1)
		case key.Matches(msg, keys.Down):
			m.groupScroll++
		case key.Matches(msg, keys.Seek), key.Matches(msg, keys.UndoSeek):
			if m.readOnly {
				m.say(true, "read-only console: seeks are off")
				return m, nil
			}
			m.message = ""
			if key.Matches(msg, keys.Seek) {
				m.seekInput.SetValue("")
				m.screen = seekInputScreen
				return m, m.seekInput.Focus()
			}
			group := m.groupName
			m.busy = "planning the undo of group " + group + "'s last seek"
			return m, m.run(func(ctx context.Context) tea.Msg {
				p, notes, err := m.act.PlanSeek(ctx, group, "undo", "")
				return seekPlanMsg{p, notes, err}
			})
		}
		return m, nil
	}
	return m.mainKey(msg)
}

func (m Console) groupsKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	switch {
	case key.Matches(msg, keys.Back):
		m.screen, m.groups = mainScreen, nil
	case key.Matches(msg, keys.Up):
		m.groupCursor = max(0, m.groupCursor-1)
	case key.Matches(msg, keys.Down):
		m.groupCursor = min(max(0, len(m.groups)-1), m.groupCursor+1)
	case key.Matches(msg, keys.Enter):
		if len(m.groups) == 0 {
			return m, nil
		}
		name := m.groups[m.groupCursor].Group
		m.busy = "asking the gateways about group " + name
		return m, m.run(func(ctx context.Context) tea.Msg {
			d, err := m.act.Group(ctx, name)
			return groupMsg{name, d, err}
		})
	}
	return m, nil
}

func (m Console) mainKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	rows := m.rowCount(m.focus)
	page := max(1, m.paneRows(m.focus)-1)
	switch {
	case key.Matches(msg, keys.Back):
		switch {
		case m.message != "":
			m.message = ""
		case m.filter.Value() != "":
			m.filter.SetValue("")
		case m.snap.Drain != nil:
			m.drainShut = true
		}
	case msg.String() == "shift+tab":
		m.focus = (m.focus + panes - 1) % panes
	case key.Matches(msg, keys.Tab):
		m.focus = (m.focus + 1) % panes
	case moveCursor(msg, &m.cursor[m.focus], rows, page):
	case key.Matches(msg, keys.Sort):
		m.sorts[m.focus] = m.nextSort(m.focus)
	case key.Matches(msg, keys.Reverse):
		m.sorts[m.focus].desc = !m.sorts[m.focus].desc
	case key.Matches(msg, keys.Filter):
		m.filtering = true
		return m, m.filter.Focus()
	case key.Matches(msg, keys.Move):
		m.say(true, moveRefused)
	case key.Matches(msg, keys.Topics):
		m.screen, m.message = topicsScreen, ""
		m.filter.SetValue("")
		return m.askTopics()
	case key.Matches(msg, keys.Transactions):
		m.screen, m.message = txnsScreen, ""
		m.filter.SetValue("")
		return m.askTxns()
	case key.Matches(msg, keys.Enter):
		if m.focus != partsPane {
			if m.focus == nodesPane {
				if n, ok := m.selectedNode(); ok {
					m.filter.SetValue("node " + strconv.Itoa(int(n.Node)))
					m.focus, m.cursor[partsPane] = partsPane, 0
				}
			}
			return m, nil
		}
		r, ok := m.selectedPartition()
		if !ok {
			return m, nil
		}
		p := r.Partition
		m.busy = "reading the groups of partition " + strconv.Itoa(p)
		return m, m.run(func(ctx context.Context) tea.Msg {
			gs, err := m.act.Groups(ctx, p)
			return groupsMsg{p, gs, err}
		})
	case key.Matches(msg, keys.Drain), key.Matches(msg, keys.Undo):
		undo := key.Matches(msg, keys.Undo)
		if m.readOnly {
			m.say(true, "read-only console: drains and undos are off")
			return m, nil
		}
		if m.focus != nodesPane {
			m.say(true, "d and u act on the selected node: tab to the nodes pane first")
			return m, nil
		}
		n, ok := m.selectedNode()
		if !ok {
			return m, nil
		}
		id := n.Node
		m.message = ""
		if undo {
			m.busy = "checking the undo of node " + strconv.Itoa(int(id))
			return m, m.run(func(ctx context.Context) tea.Msg {
				return undoCheckedMsg{id, m.act.CheckUndo(ctx, []int32{id})}
			})
		}
		m.busy = "planning the drain of node " + strconv.Itoa(int(id))
		return m, m.run(func(ctx context.Context) tea.Msg {
			plan, err := m.act.PlanDrain(ctx, []int32{id})
			return planMsg{plan, err}
		})
	}
	return m, nil
}

// run performs an action in a command, bounded by actionTimeout.
func (m Console) run(fn func(ctx context.Context) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		return fn(ctx)
	}
}

func nodesText(nodes []int32) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = strconv.Itoa(int(n))
	}
	if len(s) == 1 {
		return "node " + s[0]
	}
	return "nodes " + strings.Join(s, ", ")
}

// Filter is the text rows must contain to be shown.
func (m Console) Filter() string { return m.filter.Value() }

func (m Console) match(text string) bool {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	return f == "" || strings.Contains(strings.ToLower(text), f)
}

// partText and nodeText are what the filter searches: typed fields spelled out.
func partText(r claims.PartitionRow) string {
	s := "p" + strconv.Itoa(r.Partition) + " partition " + strconv.Itoa(r.Partition)
	if r.OwnerNode != nil {
		s += " node " + strconv.Itoa(int(*r.OwnerNode)) + " owner " + strconv.Itoa(int(*r.OwnerNode)) + " " + r.OwnerAddr
	}
	return s + " " + strings.Join(r.Flags, " ")
}

func nodeText(r claims.NodeRow) string {
	return "node " + strconv.Itoa(int(r.Node)) + " " + r.State + " " + r.Addr + " " + r.Version
}

func handText(h claims.HandoverRow) string {
	s := "p" + strconv.Itoa(h.Partition) + " partition " + strconv.Itoa(h.Partition) + " node " + strconv.Itoa(int(h.To)) + " " + h.Reason
	if h.From != nil {
		s += " node " + strconv.Itoa(int(*h.From))
	}
	return s
}

func sortRows[T any](rows []T, cols []column[T], s sortSpec) []T {
	if s.col <= 0 && !s.desc || s.col >= len(cols) || cols[s.col].cmp == nil {
		return rows
	}
	out := slices.Clone(rows)
	c := cols[s.col].cmp
	slices.SortStableFunc(out, func(a, b T) int {
		if s.desc {
			return c(b, a)
		}
		return c(a, b)
	})
	return out
}

// Parts are the partition rows shown: filtered, then sorted.
func (m Console) Parts() []claims.PartitionRow {
	var out []claims.PartitionRow
	for _, r := range m.snap.Rows {
		if m.match(partText(r)) {
			out = append(out, r)
		}
	}
	return sortRows(out, partColumns, m.sorts[partsPane])
}

// Nodes are the node rows shown.
func (m Console) Nodes() []claims.NodeRow {
	var out []claims.NodeRow
	for _, r := range m.snap.Nodes {
		// A filter on a node's partitions ("node 2") keeps that node; one on a partition keeps
		// every node.
		if m.match(nodeText(r)) || !m.anyNodeMatches() {
			out = append(out, r)
		}
	}
	return sortRows(out, nodeColumns, m.sorts[nodesPane])
}

func (m Console) anyNodeMatches() bool {
	for _, r := range m.snap.Nodes {
		if m.match(nodeText(r)) {
			return true
		}
	}
	return false
}

// Handovers are the handover rows shown.
func (m Console) Handovers() []claims.HandoverRow {
	var out []claims.HandoverRow
	for _, h := range m.snap.Handovers {
		if m.match(handText(h)) {
			out = append(out, h)
		}
	}
	return sortRows(out, handoverColumns, m.sorts[handPane])
}

func (m Console) rowCount(p pane) int {
	switch p {
	case nodesPane:
		return len(m.Nodes())
	case partsPane:
		return len(m.Parts())
	}
	if m.drainShown() {
		return len(m.snap.Drain.Events) + 1
	}
	return len(m.Handovers())
}

func (m Console) selectedNode() (claims.NodeRow, bool) {
	ns := m.Nodes()
	if len(ns) == 0 {
		return claims.NodeRow{}, false
	}
	return ns[min(m.cursor[nodesPane], len(ns)-1)], true
}

func (m Console) selectedPartition() (claims.PartitionRow, bool) {
	ps := m.Parts()
	if len(ps) == 0 {
		return claims.PartitionRow{}, false
	}
	return ps[min(m.cursor[partsPane], len(ps)-1)], true
}

// Selected is the focused pane and the key of its selected row (node id, partition, or the
// handover's partition).
func (m Console) Selected() (string, int) {
	switch m.focus {
	case nodesPane:
		n, _ := m.selectedNode()
		return "nodes", int(n.Node)
	case partsPane:
		r, _ := m.selectedPartition()
		return "partitions", r.Partition
	}
	hs := m.Handovers()
	if len(hs) == 0 {
		return "handovers", -1
	}
	return "handovers", hs[min(m.cursor[handPane], len(hs)-1)].Partition
}

func (m Console) nextSort(p pane) sortSpec {
	switch p {
	case nodesPane:
		return nextSort(m.sorts[p], nodeColumns)
	case partsPane:
		return nextSort(m.sorts[p], partColumns)
	}
	return nextSort(m.sorts[p], handoverColumns)
}

func (m Console) sortTitle(p pane) string {
	var title string
	switch p {
	case nodesPane:
		title = nodeColumns[m.sorts[p].col].title
	case partsPane:
		title = partColumns[m.sorts[p].col].title
	default:
		if m.sorts[p].col == 0 && !m.sorts[p].desc {
			return "newest first"
		}
		title = handoverColumns[m.sorts[p].col].title
	}
	s := "by " + strings.ToLower(title)
	if m.sorts[p].desc {
		s += ", reversed"
	}
	return s
}

func (m Console) drainShown() bool { return m.snap.Drain != nil && !m.drainShut }

// Plan is the drain plan waiting for confirmation, if any.
func (m Console) Plan() *drainwatch.Plan { return m.plan }

// Message is the status line's message (a refusal, a cancellation).
func (m Console) Message() string { return m.message }

// Screen names what the view shows: main, groups, group, plan, undo, help, seek, seek-plan,
// topics, tail, transactions or abort-plan.
func (m Console) Screen() string {
	return [...]string{"main", "groups", "group", "plan", "undo", "help", "seek", "seek-plan", "topics", "tail", "transactions", "abort-plan"}[m.screen]
}

// beat asks the shown screen's source again once its interval has passed.
func (m Console) beat() (Console, tea.Cmd) {
	m, cmd := m.beatTopics()
	if cmd != nil {
		return m, cmd
	}
	return m.beatTxns()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// seekWords splits what the seek dialog was given into a target's name and value, as `group
// seek` takes them ("shift -100" is --shift -100); "earliest" and "latest" alone mean "to" them.
func seekWords(s string) (name, value string) {
	name, value, _ = strings.Cut(strings.TrimSpace(s), " ")
	value = strings.TrimSpace(value)
	if value == "" && (name == "earliest" || name == "latest") {
		return "to", name
	}
	return strings.TrimPrefix(name, "--"), value
}
