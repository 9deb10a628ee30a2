package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
)

var (
	titleStyle   = lipgloss.NewStyle().Bold(true)
	focusStyle   = lipgloss.NewStyle().Bold(true).Reverse(true)
	headerStyle  = lipgloss.NewStyle().Bold(true).Underline(true)
	changedStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("11"))
	badStyle     = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	bannerStyle  = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1"))
	dimStyle     = lipgloss.NewStyle().Faint(true)
)

// paneSizes is how many rows each pane of the main screen shows at the current size.
func (m Console) paneSizes() (nodes, parts, bottom int) {
	body := m.height - len(m.top()) - len(m.footer())
	avail := max(0, body-6) // each pane's title and header
	nNodes, nParts := len(m.Nodes()), len(m.Parts())
	nodes = min(max(nNodes, 1), max(1, avail/3))
	bottom = max(1, avail/5)
	parts = avail - nodes - bottom
	if extra := parts - max(nParts, 1); extra > 0 {
		parts -= extra
		grow := min(extra, max(0, nNodes-nodes))
		nodes += grow
		bottom += extra - grow
	}
	for parts < 1 && bottom > 1 {
		bottom--
		parts++
	}
	for parts < 1 && nodes > 1 {
		nodes--
		parts++
	}
	return nodes, max(parts, 0), bottom
}

func (m Console) paneRows(p pane) int {
	n, r, b := m.paneSizes()
	switch p {
	case nodesPane:
		return n
	case partsPane:
		return r
	}
	return b
}

// scrolled keeps every pane's cursor inside its rows and on screen.
func (m Console) scrolled() Console {
	for p := range panes {
		rows, shown := m.rowCount(p), m.paneRows(p)
		m.cursor[p] = min(m.cursor[p], max(0, rows-1))
		if m.cursor[p] < m.offset[p] {
			m.offset[p] = m.cursor[p]
		}
		if m.cursor[p] >= m.offset[p]+shown {
			m.offset[p] = m.cursor[p] - shown + 1
		}
		m.offset[p] = max(0, min(m.offset[p], rows-shown))
	}
	return m
}

// top is the status line and the banner.
func (m Console) top() []string {
	serving, owned := 0, 0
	for _, n := range m.snap.Nodes {
		if n.State == "serving" {
			serving++
		}
	}
	for _, r := range m.snap.Rows {
		if r.OwnerNode != nil {
			owned++
		}
	}
	parts := []string{"console", fmt.Sprintf("%s (%d serving)", plural(len(m.snap.Nodes), "node"), serving),
		fmt.Sprintf("%d/%d owned", owned, len(m.snap.Rows))}
	if m.status.StoreOK() {
		parts = append(parts, "updated "+output.Seconds(max(0, m.now().Sub(m.snap.At).Seconds()))+" ago")
	} else {
		parts = append(parts, "STALE since "+m.status.StoreAnswered.UTC().Format("15:04:05"))
	}
	out := []string{titleStyle.Render(clip(strings.Join(parts, " · "), m.width))}
	for _, p := range render.Problems(m.status) {
		out = append(out, bannerStyle.Render(fit("! "+p, m.width)))
	}
	return out
}

// footer is the last line (the keys, the filter being typed, the action under way) or, for a
// message, up to three lines.
func (m Console) footer() []string {
	var s string
	switch {
	case m.filtering:
		return []string{clip(m.filter.View(), m.width)}
	case m.busy != "":
		s = m.busy + "..."
	case m.message != "":
		lines := wrap(m.message+" (esc)", m.width)
		if len(lines) > 3 {
			lines = lines[:3]
		}
		for i, l := range lines {
			lines[i] = clip(l, m.width)
			if m.messageErr {
				lines[i] = badStyle.Render(lines[i])
			}
		}
		return lines
	case m.screen == groupsScreen:
		s = "↑/↓ move · enter members and lag · esc back · q quit"
	case m.screen == groupScreen && !m.readOnly:
		s = "↑/↓ scroll · o seek · U undo seek · esc back · q quit"
	case m.screen == groupScreen:
		s = "↑/↓ scroll · esc back · q quit"
	case m.screen == seekInputScreen:
		s = "enter plans · esc back"
	case m.screen == seekPlanScreen:
		s = "y moves the offsets · any other key cancels"
	case m.screen == helpScreen:
		s = "esc or ? back · q quit"
	case m.screen == topicsScreen:
		s = m.topicsFooter()
	case m.screen == txnsScreen:
		s = m.txnsFooter()
	case m.screen == txnPlanScreen:
		s = "y aborts the transaction · any other key cancels"
	case m.screen == tailScreen:
		s = m.tailFooter()
	case m.screen == planScreen || m.screen == undoScreen:
		s = "y confirms · any other key cancels"
	default:
		m.help.Width = m.width
		s = m.help.ShortHelpView(keys.ShortHelp())
	}
	if f := m.filter.Value(); f != "" && (m.screen == mainScreen || m.screen == topicsScreen || m.screen == txnsScreen) {
		s = "filter " + strconv.Quote(f) + " · " + s
	}
	return []string{clip(s, m.width)}
}

// View draws the console in exactly m.height lines of at most m.width columns.
func (m Console) View() string {
	m = m.scrolled()
	var body []string
	switch m.screen {
	case helpScreen:
		body = m.helpView()
	case groupsScreen:
		body = m.groupsView()
	case groupScreen:
		body = m.groupView()
	case planScreen:
		body = m.planView()
	case undoScreen:
		body = m.undoView()
	case seekInputScreen:
		body = m.seekInputView()
	case seekPlanScreen:
		body = m.seekPlanView()
	case topicsScreen:
		body = m.topicsView()
	case tailScreen:
		body = m.tailPaneView()
	case txnsScreen:
		body = m.txnsView()
	case txnPlanScreen:
		body = m.txnPlanView()
	default:
		body = m.mainView()
	}
	out := m.top()
	foot := m.footer()
	room := max(0, m.height-len(out)-len(foot))
	if len(body) > room {
		body = body[:room]
	}
	out = append(out, body...)
	for len(out) < m.height-len(foot) {
		out = append(out, "")
	}
	out = append(out, foot...)
	if len(out) > m.height {
		out = out[len(out)-m.height:]
	}
	return strings.Join(out, "\n")
}

func (m Console) paneTitle(p pane, name string, total, shown int) string {
	t := " " + name + " "
	if m.focus == p && m.screen == mainScreen {
		t = "[" + name + "]"
	}
	info := strconv.Itoa(total)
	if shown < total {
		info = fmt.Sprintf("%d-%d of %d", m.offset[p]+1, min(total, m.offset[p]+shown), total)
	}
	s := t + " " + info + " · " + m.sortTitle(p)
	if m.focus == p {
		return focusStyle.Render(clip(s, m.width))
	}
	return titleStyle.Render(clip(s, m.width))
}

// rowMark is the mark column: ? on stale rows, + on rows with a changed field.
func (m Console) rowMark(p pane, id int, cols []string) string {
	if !m.status.StoreOK() {
		return "?"
	}
	for _, f := range cols {
		if f == "" {
			continue
		}
		if _, ok := m.marks[markKey{p, id, f}]; ok {
			return "+"
		}
	}
	return " "
}

func renderRow[T any](m Console, p pane, cols []column[T], r T, id int, selected bool) string {
	fields := make([]string, len(cols))
	for i, c := range cols {
		fields[i] = c.field
	}
	cursor := " "
	if selected && m.focus == p && m.screen == mainScreen {
		cursor = ">"
	}
	var b strings.Builder
	b.WriteString(cursor + m.rowMark(p, id, fields))
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		text := fit(dash(c.cell(r)), c.width)
		if i == len(cols)-1 {
			text = strings.TrimRight(text, " ")
		}
		if _, ok := m.marks[markKey{p, id, c.field}]; ok && c.field != "" && m.status.StoreOK() {
			text = changedStyle.Render(text)
		}
		b.WriteString(text)
	}
	return b.String()
}

func (m Console) mainView() []string {
	nRows, pRows, bRows := m.paneSizes()
	var out []string
	stale := !m.status.StoreOK()

	ncols := layout(nodeColumns, m.width)
	nodes := m.Nodes()
	out = append(out, m.paneTitle(nodesPane, "NODES", len(nodes), nRows), headerStyle.Render(clip(header(ncols), m.width)))
	for i := m.offset[nodesPane]; i < len(nodes) && i < m.offset[nodesPane]+nRows; i++ {
		r := nodes[i]
		l := clip(renderRow(m, nodesPane, ncols, r, int(r.Node), i == m.cursor[nodesPane]), m.width)
		switch {
		case stale:
			l = dimStyle.Render(l)
		case r.State == "gone":
			l = badStyle.Render(l)
		case r.State != "serving":
			l = dimStyle.Render(l)
		}
		out = append(out, l)
	}
	for i := len(nodes) - m.offset[nodesPane]; i < nRows; i++ {
		if i == 0 && len(nodes) == 0 {
			out = append(out, dimStyle.Render("  no gateway has announced itself or claimed a partition"))
			continue
		}
		out = append(out, "")
	}

	pcols := layout(partColumns, m.width)
	parts := m.Parts()
	out = append(out, m.paneTitle(partsPane, "PARTITIONS", len(parts), pRows), headerStyle.Render(clip(header(pcols), m.width)))
	for i := m.offset[partsPane]; i < len(parts) && i < m.offset[partsPane]+pRows; i++ {
		r := parts[i]
		l := clip(renderRow(m, partsPane, pcols, r, r.Partition, i == m.cursor[partsPane]), m.width)
		switch {
		case stale:
			l = dimStyle.Render(l)
		case r.OwnerNode == nil:
			l = badStyle.Render(l)
		}
		out = append(out, l)
	}
	for i := len(parts) - m.offset[partsPane]; i < pRows; i++ {
		if i == 0 && len(parts) == 0 {
			out = append(out, dimStyle.Render("  no partition matches the filter"))
			continue
		}
		out = append(out, "")
	}

	if m.drainShown() {
		return append(out, m.drainPane(bRows)...)
	}
	hcols := layout(handoverColumns, m.width)
	hs := m.Handovers()
	out = append(out, m.paneTitle(handPane, "HANDOVERS", len(hs), bRows), headerStyle.Render(clip(header(hcols), m.width)))
	if len(hs) == 0 {
		out = append(out, dimStyle.Render("  none since the view started"))
	}
	for i := m.offset[handPane]; i < len(hs) && i < m.offset[handPane]+bRows; i++ {
		h := hs[i]
		l := renderRow(m, handPane, hcols, h, h.Partition, i == m.cursor[handPane])
		if _, ok := m.marks[markKey{handPane, h.Partition, strconv.FormatUint(h.Claim, 10)}]; ok && !stale {
			l = changedStyle.Render(clip(l, m.width))
		}
		out = append(out, clip(l, m.width))
	}
	return out
}

// drainPane takes the handover pane's place while a drain or undo started here is followed:
// its sentence, then each phase as it happens (the newest last), then the moves.
func (m Console) drainPane(rows int) []string {
	d := m.snap.Drain
	what := "DRAIN " + nodesText(d.Nodes)
	if d.Undo {
		what = "UNDO " + nodesText(d.Nodes)
	}
	title := "[" + what + "] " + render.Drain(*d)
	if d.Done || d.Undone || d.Error != "" {
		title += " (esc closes)"
	}
	out := []string{titleStyle.Render(clip(title, m.width))}
	var lines []string
	for _, e := range d.Events {
		lines = append(lines, "  "+e.Time.UTC().Format("15:04:05.000")+" "+e.Sentence())
	}
	for _, mv := range d.Moves {
		lines = append(lines, "  "+mv.Sentence())
	}
	if d.Undo && d.Done {
		for _, n := range m.snap.Nodes {
			if slices.Contains(d.Nodes, n.Node) {
				lines = append(lines, fmt.Sprintf("  node %d %s: %s", n.Node, n.State, plural(len(n.Partitions), "partition")))
			}
		}
	}
	if len(lines) == 0 {
		wait := "  waiting for the first partition to be released"
		if d.Undo {
			wait = "  waiting for " + nodesText(d.Nodes) + " to serve again"
		}
		lines = append(lines, dimStyle.Render(wait))
	}
	// The header line of the handover pane is the first line of the list here.
	if len(lines) > rows+1 {
		lines = lines[len(lines)-rows-1:]
	}
	for _, l := range lines {
		out = append(out, clip(l, m.width))
	}
	return out
}

func (m Console) groupsView() []string {
	owner := "unowned"
	for _, r := range m.snap.Rows {
		if r.Partition == m.groupsPart && r.OwnerNode != nil {
			owner = fmt.Sprintf("owner node %d, claim %d", *r.OwnerNode, r.Claim)
		}
	}
	title := fmt.Sprintf("[GROUPS of partition %d] %s · %s in the log", m.groupsPart, owner, plural(len(m.groups), "group"))
	cols := layout(groupColumns, m.width)
	out := []string{focusStyle.Render(clip(title, m.width)), headerStyle.Render(clip(header(cols), m.width))}
	if len(m.groups) == 0 {
		out = append(out, dimStyle.Render(clip("  the log holds no group in this partition", m.width)))
	}
	room := max(1, m.height-len(m.top())-3)
	start := max(0, m.groupCursor-room+1)
	for i := start; i < len(m.groups) && i < start+room; i++ {
		cursor := " "
		if i == m.groupCursor {
			cursor = ">"
		}
		out = append(out, clip(cursor+joinCells(cols, cells(cols, m.groups[i]))[1:], m.width))
	}
	return out
}

func cells[T any](cols []column[T], r T) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.cell(r)
	}
	return out
}

func (m Console) groupView() []string {
	d := m.group
	coord := "no coordinator"
	switch {
	case d.FindCoordinatorNode != nil:
		coord = fmt.Sprintf("coordinator node %d at %s", *d.FindCoordinatorNode, d.FindCoordinatorAddr)
	case d.FindCoordinatorError != "":
		coord = "FindCoordinator: " + d.FindCoordinatorError
	}
	agrees := "the log agrees"
	if !d.Agrees {
		agrees = "the log says " + ownerText(d.OwnerNode)
	}
	gen := "-"
	if d.Generation != nil {
		gen = strconv.Itoa(int(*d.Generation))
	}
	proto := d.Protocol
	if d.ProtocolType != "" {
		proto = d.ProtocolType + "/" + d.Protocol
	}
	var lines []string
	lines = append(lines, focusStyle.Render(clip(fmt.Sprintf("[GROUP %s] partition %d · %s · %s", d.Group, d.Partition, coord, agrees), m.width)))
	lines = append(lines, clip(fmt.Sprintf("  state %s · protocol %s · generation %s · %s", dash(d.State), dash(proto), gen, plural(len(d.Members), "member")), m.width))
	if d.DescribeError != "" {
		lines = append(lines, badStyle.Render(clip("  "+d.DescribeError, m.width)))
	}
	if m.undoable != "" {
		lines = append(lines, changedStyle.Render(clip("  seek "+m.undoable+" can be undone: U", m.width)))
	}
	mcols := layout(memberColumns, m.width)
	lines = append(lines, titleStyle.Render(" MEMBERS"), headerStyle.Render(clip(header(mcols), m.width)))
	if len(d.Members) == 0 {
		lines = append(lines, dimStyle.Render("  none"))
	}
	for _, mb := range d.Members {
		lines = append(lines, clip(joinCells(mcols, cells(mcols, mb)), m.width))
	}
	lcols := layout(lagColumns, m.width)
	lines = append(lines, titleStyle.Render(" LAG"), headerStyle.Render(clip(header(lcols), m.width)))
	if len(d.Lag) == 0 {
		lines = append(lines, dimStyle.Render("  no committed or assigned partition"))
	}
	for _, l := range d.Lag {
		lines = append(lines, clip(joinCells(lcols, cells(lcols, l)), m.width))
	}
	room := max(1, m.height-len(m.top())-1)
	start := min(m.groupScroll, max(0, len(lines)-room))
	if start > 0 {
		lines = append(lines[:1], lines[start+1:]...)
	}
	return lines
}

func ownerText(n *int32) string {
	if n == nil {
		return "no owner"
	}
	return "node " + strconv.Itoa(int(*n))
}

func (m Console) planView() []string {
	p := m.plan
	who := nodesText(p.Nodes)
	out := []string{focusStyle.Render(clip("[DRAIN "+who+"] the plan: every partition that will move", m.width))}
	cols := layout(stepColumns, m.width)
	out = append(out, headerStyle.Render(clip(header(cols), m.width)))
	if len(p.Steps) == 0 {
		out = append(out, dimStyle.Render(clip("  "+who+" holds no partition: nothing moves", m.width)))
	}
	room := max(1, m.height-len(m.top())-1-5)
	for i, s := range p.Steps {
		if i == room && len(p.Steps) > room+1 {
			out = append(out, dimStyle.Render(fmt.Sprintf("  ... and %d more", len(p.Steps)-room)))
			break
		}
		out = append(out, clip(joinCells(cols, cells(cols, s)), m.width))
	}
	out = append(out, "")
	for _, l := range wrap(p.Summary(), m.width-2) {
		out = append(out, "  "+l)
	}
	return append(out, titleStyle.Render(clip("drain "+who+"? y drains, any other key cancels", m.width)))
}

func (m Console) seekInputView() []string {
	out := []string{focusStyle.Render(clip("[SEEK "+m.groupName+"] where to move the group's committed offsets", m.width))}
	for _, l := range []string{
		"to earliest, to latest     each partition's log start or end",
		"to-offset N                offset N on every partition",
		"to-time T                  the first record at or after T (RFC 3339, 10m)",
		"shift N                    N records from the commit (negative: back)",
		"to-commit-at T             the offsets committed at T, from the log",
		"undo                       what the last seek replaced",
	} {
		out = append(out, dimStyle.Render(clip("  "+l, m.width)))
	}
	out = append(out, "", clip(m.seekInput.View(), m.width), "")
	for _, l := range wrap("The plan comes first: nothing moves before y. A group with live members is refused, as Kafka does.", m.width-2) {
		out = append(out, "  "+l)
	}
	return out
}

func (m Console) seekPlanView() []string {
	p := m.seekPlan
	out := []string{focusStyle.Render(clip("[SEEK "+p.Group+"] the plan: to "+p.Target.String(), m.width))}
	cols := layout(seekColumns, m.width)
	out = append(out, headerStyle.Render(clip(header(cols), m.width)))
	room := max(1, m.height-len(m.top())-1-6-len(m.seekNotes))
	for i, st := range p.Steps {
		if i == room && len(p.Steps) > room+1 {
			out = append(out, dimStyle.Render(fmt.Sprintf("  ... and %d more", len(p.Steps)-room)))
			break
		}
		out = append(out, clip(joinCells(cols, cells(cols, st)), m.width))
	}
	out = append(out, "")
	for _, l := range wrap(p.Summary().String(), m.width-2) {
		out = append(out, "  "+l)
	}
	for _, n := range m.seekNotes {
		out = append(out, dimStyle.Render(clip("  "+n, m.width)))
	}
	return append(out, titleStyle.Render(clip("move the offsets of "+p.Group+"? y moves, any other key cancels", m.width)))
}

func (m Console) undoView() []string {
	who := "node " + strconv.Itoa(int(m.undoNode))
	out := []string{focusStyle.Render(clip("[UNDO "+who+"]", m.width))}
	for _, l := range wrap(who+" comes back: the lease gives it back about its share of the coordinator partitions, with their groups, without a rebalance.", m.width-2) {
		out = append(out, "  "+l)
	}
	return append(out, "", titleStyle.Render(clip("undo the drain of "+who+"? y undoes, any other key cancels", m.width)))
}

func (m Console) helpView() []string {
	out := []string{focusStyle.Render(clip("[HELP] keys", m.width))}
	for _, group := range keys.FullHelp() {
		for _, b := range group {
			h := b.Help()
			out = append(out, clip(fmt.Sprintf("  %-6s %s", h.Key, h.Desc), m.width))
		}
	}
	out = append(out, titleStyle.Render(clip(" tail pane (t, then enter on a partition)", m.width)))
	for _, group := range tailKeys.FullHelp() {
		for _, b := range group {
			h := b.Help()
			out = append(out, clip(fmt.Sprintf("  %-6s %s", h.Key, h.Desc), m.width))
		}
	}
	for _, note := range []string{
		"marks: > selected row, + a field changed in the last 3s, ? stale (the store does not answer), * controller",
		"HANDOVERS: REASON drain, stop, crash, lease or first; UNSERVED from the old owner's stop to the new claim",
		moveRefused,
	} {
		for _, l := range wrap(note, m.width-2) {
			out = append(out, dimStyle.Render("  "+l))
		}
	}
	return out
}

// wrap breaks s into lines of at most w columns at spaces.
func wrap(s string, w int) []string {
	if w < 10 {
		return []string{s}
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= w:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
