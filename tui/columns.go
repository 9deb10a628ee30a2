package tui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// column is one column of a pane: its title, the width it needs, its priority (lower stays
// longer as the terminal narrows), whether it takes the room left over (and how much more it
// wants, at which priority, before other columns come in), how to show and how to sort a row,
// and the typed field (inspect's Field names) whose change marks its cell.
type column[T any] struct {
	title    string
	width    int
	prio     int
	flex     bool
	more     int
	morePrio int
	cell     func(T) string
	cmp      func(a, b T) int // nil: not a sort key
	field    string
}

// layout picks the columns that fit in width (two columns go to the cursor and the change
// mark), by priority, in their declared order, and widens the flexible one to the room left.
func layout[T any](cols []column[T], width int) []column[T] {
	room := width - 2
	prios := []int{}
	for _, c := range cols {
		for _, p := range []int{c.prio, c.morePrio} {
			if !slices.Contains(prios, p) {
				prios = append(prios, p)
			}
		}
	}
	slices.Sort(prios)
	keep := map[int]bool{}
	grown := map[int]bool{}
	used := -1
	for _, p := range prios {
		need := used
		for i, c := range cols {
			if c.prio == p {
				need += c.width + 1
			}
			if c.more > 0 && c.morePrio == p && (keep[i] || c.prio == p) {
				need += c.more
			}
		}
		if need > room && len(keep) > 0 {
			break
		}
		for i, c := range cols {
			if c.prio == p {
				keep[i] = true
			}
			if c.more > 0 && c.morePrio == p && keep[i] {
				grown[i] = true
			}
		}
		used = need
	}
	var out []column[T]
	for i, c := range cols {
		if keep[i] {
			if grown[i] {
				c.width += c.more
			}
			out = append(out, c)
		}
	}
	if left := room - used; left > 0 {
		for i := range out {
			if out[i].flex {
				out[i].width += left
				break
			}
		}
	}
	return out
}

// fit pads or cuts s to w columns, marking a cut with "~".
func fit(s string, w int) string {
	r := []rune(s)
	if len(r) > w {
		if w <= 1 {
			return string(r[:max(w, 0)])
		}
		return string(r[:w-1]) + "~"
	}
	return s + strings.Repeat(" ", w-len(r))
}

// clip cuts s to w columns of the terminal; styled text keeps its escape sequences whole.
func clip(s string, w int) string { return ansi.Truncate(s, max(w, 0), "") }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ptrCmp[T cmp.Ordered](a, b *T) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

func ptrInt32(p *int32) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(int(*p))
}

func ago(s *float64) string {
	if s == nil {
		return ""
	}
	return output.Seconds(*s)
}

func clock(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("15:04:05")
}

var partColumns = []column[claims.PartitionRow]{
	{title: "PART", width: 4, prio: 0, cell: func(r claims.PartitionRow) string { return strconv.Itoa(r.Partition) },
		cmp: func(a, b claims.PartitionRow) int { return cmp.Compare(a.Partition, b.Partition) }},
	{title: "OWNER", width: 5, prio: 0, field: claims.FieldOwner, cell: func(r claims.PartitionRow) string {
		if r.OwnerNode == nil {
			return "NONE"
		}
		s := strconv.Itoa(int(*r.OwnerNode))
		if r.Controller {
			s += "*"
		}
		return s
	}, cmp: func(a, b claims.PartitionRow) int { return ptrCmp(a.OwnerNode, b.OwnerNode) }},
	{title: "ADDRESS", width: 15, prio: 3, cell: func(r claims.PartitionRow) string { return r.OwnerAddr }},
	{title: "CLAIM", width: 5, prio: 0, field: claims.FieldClaim, cell: func(r claims.PartitionRow) string {
		if r.OwnerNode == nil {
			return ""
		}
		return strconv.FormatUint(r.Claim, 10)
	}, cmp: func(a, b claims.PartitionRow) int { return cmp.Compare(a.Claim, b.Claim) }},
	{title: "SINCE", width: 8, prio: 4, cell: func(r claims.PartitionRow) string { return clock(r.ClaimedAt) }},
	{title: "HELD", width: 8, prio: 1, cell: func(r claims.PartitionRow) string { return ago(r.HeldSeconds) },
		cmp: func(a, b claims.PartitionRow) int { return ptrCmp(a.HeldSeconds, b.HeldSeconds) }},
	{title: "GROUPS", width: 6, prio: 0, field: claims.FieldGroups, cell: func(r claims.PartitionRow) string { return strconv.Itoa(r.Groups) },
		cmp: func(a, b claims.PartitionRow) int { return cmp.Compare(a.Groups, b.Groups) }},
	{title: "END", width: 7, prio: 0, field: claims.FieldLogEnd, cell: func(r claims.PartitionRow) string { return strconv.FormatUint(r.LogEndOffset, 10) },
		cmp: func(a, b claims.PartitionRow) int { return cmp.Compare(a.LogEndOffset, b.LogEndOffset) }},
	{title: "OWNER-LAG", width: 9, prio: 2, cell: func(r claims.PartitionRow) string { return ago(r.OwnerLagSeconds) },
		cmp: func(a, b claims.PartitionRow) int { return ptrCmp(a.OwnerLagSeconds, b.OwnerLagSeconds) }},
	{title: "CHECKPOINT", width: 10, prio: 5, field: claims.FieldCheckpoint, cell: func(r claims.PartitionRow) string {
		if r.CheckpointOffset == nil {
			return ""
		}
		return strconv.FormatUint(*r.CheckpointOffset, 10)
	}},
	{title: "ASSIGNED", width: 8, prio: 3, field: claims.FieldAssigned, cell: claims.AssignedText},
	{title: "FLAGS", width: 20, prio: 0, flex: true, more: 14, morePrio: 3, field: claims.FieldFlags, cell: func(r claims.PartitionRow) string { return strings.Join(r.Flags, ",") },
		cmp: func(a, b claims.PartitionRow) int { return cmp.Compare(len(a.Flags), len(b.Flags)) }},
}

var nodeColumns = []column[claims.NodeRow]{
	{title: "NODE", width: 5, prio: 0, field: claims.NodeFieldController, cell: func(r claims.NodeRow) string {
		s := strconv.Itoa(int(r.Node))
		if r.Controller {
			s += "*"
		}
		return s
	}, cmp: func(a, b claims.NodeRow) int { return cmp.Compare(a.Node, b.Node) }},
	{title: "STATE", width: 8, prio: 0, field: claims.NodeFieldState, cell: func(r claims.NodeRow) string { return r.State },
		cmp: func(a, b claims.NodeRow) int { return cmp.Compare(a.State, b.State) }},
	{title: "ADDRESS", width: 15, prio: 1, field: claims.NodeFieldAddr, cell: func(r claims.NodeRow) string { return r.Addr }},
	{title: "PARTS", width: 5, prio: 0, field: claims.NodeFieldPartitions, cell: func(r claims.NodeRow) string { return strconv.Itoa(len(r.Partitions)) },
		cmp: func(a, b claims.NodeRow) int { return cmp.Compare(len(a.Partitions), len(b.Partitions)) }},
	{title: "GROUPS", width: 6, prio: 0, field: claims.NodeFieldGroups, cell: func(r claims.NodeRow) string { return strconv.Itoa(r.Groups) },
		cmp: func(a, b claims.NodeRow) int { return cmp.Compare(a.Groups, b.Groups) }},
	{title: "ANNOUNCED", width: 9, prio: 1, cell: func(r claims.NodeRow) string { return ago(r.AnnouncedAgoSeconds) },
		cmp: func(a, b claims.NodeRow) int { return ptrCmp(a.AnnouncedAgoSeconds, b.AnnouncedAgoSeconds) }},
	{title: "DRAINED", width: 8, prio: 2, field: claims.NodeFieldDrain, cell: func(r claims.NodeRow) string {
		if r.DrainedSince != nil {
			return clock(r.DrainedSince)
		}
		if r.DrainRequested {
			return "yes"
		}
		return ""
	}},
	{title: "VERSION", width: 10, prio: 2, field: claims.NodeFieldVersion, cell: func(r claims.NodeRow) string { return r.Version }},
	{title: "PARTITIONS", width: 10, prio: 3, flex: true, field: claims.NodeFieldPartitions, cell: func(r claims.NodeRow) string {
		s := make([]string, len(r.Partitions))
		for i, p := range r.Partitions {
			s[i] = strconv.Itoa(p)
		}
		return strings.Join(s, ",")
	}},
}

var handoverColumns = []column[claims.HandoverRow]{
	{title: "TIME", width: 12, prio: 0, cell: func(h claims.HandoverRow) string { return h.At.UTC().Format("15:04:05.000") },
		cmp: func(a, b claims.HandoverRow) int { return a.At.Compare(b.At) }},
	{title: "PART", width: 4, prio: 0, cell: func(h claims.HandoverRow) string { return strconv.Itoa(h.Partition) },
		cmp: func(a, b claims.HandoverRow) int { return cmp.Compare(a.Partition, b.Partition) }},
	{title: "FROM", width: 4, prio: 0, cell: func(h claims.HandoverRow) string { return ptrInt32(h.From) },
		cmp: func(a, b claims.HandoverRow) int { return ptrCmp(a.From, b.From) }},
	{title: "TO", width: 4, prio: 0, cell: func(h claims.HandoverRow) string { return strconv.Itoa(int(h.To)) },
		cmp: func(a, b claims.HandoverRow) int { return cmp.Compare(a.To, b.To) }},
	{title: "CLAIM", width: 5, prio: 1, cell: func(h claims.HandoverRow) string { return strconv.FormatUint(h.Claim, 10) }},
	{title: "REASON", width: 6, prio: 0, cell: func(h claims.HandoverRow) string { return h.Reason },
		cmp: func(a, b claims.HandoverRow) int { return cmp.Compare(a.Reason, b.Reason) }},
	{title: "UNSERVED", width: 8, prio: 0, cell: func(h claims.HandoverRow) string { return ago(h.UnservedSeconds) },
		cmp: func(a, b claims.HandoverRow) int { return ptrCmp(a.UnservedSeconds, b.UnservedSeconds) }},
	{title: "PREV-HELD", width: 9, prio: 2, cell: func(h claims.HandoverRow) string { return ago(h.HeldSeconds) }},
	{title: "TO-ADDRESS", width: 15, prio: 3, flex: true, cell: func(h claims.HandoverRow) string { return h.Addr }},
}

// The tables of the drill-down and the plan: every column always shown, the last one cut.
var groupColumns = []column[stateview.GroupView]{
	{title: "GROUP", width: 16, flex: true, cell: func(g stateview.GroupView) string { return g.Group }},
	{title: "STATE", width: 11, cell: func(g stateview.GroupView) string { return g.State }},
	{title: "GEN", width: 5, cell: func(g stateview.GroupView) string { return strconv.Itoa(int(g.Generation)) }},
	{title: "PROTOCOL", width: 20, more: 8, morePrio: 1, cell: func(g stateview.GroupView) string {
		if g.ProtocolType == "" {
			return g.Protocol
		}
		return g.ProtocolType + "/" + g.Protocol
	}},
	{title: "MEMBERS", width: 7, cell: func(g stateview.GroupView) string { return strconv.Itoa(len(g.Members)) }},
	{title: "OFFSETS", width: 7, cell: func(g stateview.GroupView) string { return strconv.Itoa(len(g.Offsets)) }},
}

var memberColumns = []column[livegroups.GroupMember]{
	{title: "CLIENT-ID", width: 16, cell: func(m livegroups.GroupMember) string { return m.ClientID }},
	{title: "HOST", width: 16, cell: func(m livegroups.GroupMember) string { return m.ClientHost }},
	{title: "ASSIGNMENT", width: 20, flex: true, cell: func(m livegroups.GroupMember) string { return m.Assignment }},
	{title: "MEMBER-ID", width: 12, prio: 1, cell: func(m livegroups.GroupMember) string { return m.MemberID }},
}

var lagColumns = []column[livegroups.GroupLag]{
	{title: "TOPIC", width: 14, flex: true, cell: func(l livegroups.GroupLag) string { return l.Topic }},
	{title: "PART", width: 4, cell: func(l livegroups.GroupLag) string { return strconv.Itoa(int(l.Partition)) }},
	{title: "COMMITTED", width: 9, cell: func(l livegroups.GroupLag) string { return int64Text(l.Committed) }},
	{title: "END", width: 9, cell: func(l livegroups.GroupLag) string { return int64Text(l.LogEnd) }},
	{title: "LAG", width: 7, cell: func(l livegroups.GroupLag) string { return int64Text(l.Lag) }},
	{title: "LAG-TIME", width: 8, cell: func(l livegroups.GroupLag) string { return ago(l.LagSeconds) }},
	{title: "CLIENT-ID", width: 14, prio: 1, cell: func(l livegroups.GroupLag) string { return l.ClientID }},
}

var seekColumns = []column[groupadmin.Step]{
	{title: "TOPIC", width: 14, flex: true, cell: func(s groupadmin.Step) string { return s.Topic }},
	{title: "PART", width: 4, cell: func(s groupadmin.Step) string { return strconv.Itoa(int(s.Partition)) }},
	{title: "COMMITTED", width: 9, cell: func(s groupadmin.Step) string { return int64Text(s.Committed) }},
	{title: "NEW", width: 9, cell: func(s groupadmin.Step) string { return strconv.FormatInt(s.New, 10) }},
	{title: "RE-READ", width: 7, cell: func(s groupadmin.Step) string { return strconv.FormatInt(s.Reread, 10) }},
	{title: "SKIP", width: 7, cell: func(s groupadmin.Step) string { return strconv.FormatInt(s.Skip, 10) }},
	// The plan's sentence is in `group seek`; here a clamped target shows which bound it took.
	{title: "NOTE", width: 13, prio: 1, cell: func(s groupadmin.Step) string {
		switch s.ClampedTo {
		case "log_start":
			return "clamped:start"
		case "log_end":
			return "clamped:end"
		}
		return ""
	}},
	{title: "START", width: 9, prio: 2, cell: func(s groupadmin.Step) string { return strconv.FormatInt(s.LogStart, 10) }},
	{title: "END", width: 9, prio: 2, cell: func(s groupadmin.Step) string { return strconv.FormatInt(s.LogEnd, 10) }},
}

var stepColumns = []column[drainwatch.Step]{
	{title: "PARTITION", width: 9, cell: func(s drainwatch.Step) string { return strconv.Itoa(s.Partition) }},
	{title: "FROM", width: 4, cell: func(s drainwatch.Step) string { return strconv.Itoa(int(s.From)) }},
	{title: "TO", width: 4, cell: func(s drainwatch.Step) string { return dash(ptrInt32(s.To)) }},
	{title: "CLAIM", width: 5, cell: func(s drainwatch.Step) string { return strconv.FormatUint(s.Claim, 10) }},
	{title: "GROUPS", width: 6, cell: func(s drainwatch.Step) string { return strconv.Itoa(len(s.Groups)) }},
	{title: "MEMBERS", width: 7, cell: func(s drainwatch.Step) string { return strconv.Itoa(s.Members) }},
	{title: "COLLATERAL", width: 10, flex: true, cell: func(s drainwatch.Step) string {
		if s.Collateral {
			return "yes"
		}
		return ""
	}},
}

func int64Text(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

// header renders the titles of cols.
func header[T any](cols []column[T]) string {
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = c.title
	}
	return joinCells(cols, cells)
}

func joinCells[T any](cols []column[T], cells []string) string {
	var b strings.Builder
	b.WriteString("  ")
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fit(dash(c), cols[i].width))
	}
	return strings.TrimRight(b.String(), " ")
}
