package tui

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// txnsEvery is how often the transactions screen asks again while it is shown, paced by the
// engine's beats (so by its clock): the ages move on, and transactions open and end.
const txnsEvery = time.Second

// Results of the transactions screen's actions.
type (
	txnsMsg struct {
		rows []claims.TxnRow
		err  error
	}
	txnPlanMsg struct {
		id   string
		plan txnadmin.Plan
		err  error
	}
	txnDoneMsg struct {
		plan txnadmin.Plan
		sum  txnadmin.Summary
		err  error
	}
)

// txnsView is the transactions screen: the open transactions `claims --transactions` lists,
// oldest first, the hanging ones marked, and the abort of the selected one.
type txnsView struct {
	reading
	rows   []claims.TxnRow
	readAt time.Time
	cursor int
	offset int
	sort   sortSpec
	// plan is the abort waiting for confirmation.
	plan *txnadmin.Plan
}

// txnsKeys are the transactions screen's own bindings; it moves, sorts and filters with the
// console's.
var txnsKeys = struct{ Abort, Back key.Binding }{
	Abort: key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "abort the selected transaction (plan, then y)")),
	Back:  key.NewBinding(key.WithKeys("esc", "T"), key.WithHelp("esc", "back")),
}

// txnAge is the AGE column's index: the screen's first order, oldest first.
const txnAge = 3

var txnColumns = []column[claims.TxnRow]{
	{title: "TRANSACTIONAL-ID", width: 16, prio: 0, cell: func(r claims.TxnRow) string { return r.TransactionalID },
		cmp: func(a, b claims.TxnRow) int { return cmp.Compare(a.TransactionalID, b.TransactionalID) }},
	{title: "NODE", width: 4, prio: 0, cell: func(r claims.TxnRow) string { return ptrInt32(r.Coordinator) },
		cmp: func(a, b claims.TxnRow) int { return ptrCmp(a.Coordinator, b.Coordinator) }},
	{title: "STATE", width: 13, prio: 0, cell: func(r claims.TxnRow) string { return r.State },
		cmp: func(a, b claims.TxnRow) int { return cmp.Compare(a.State, b.State) }},
	// Oldest first: the ones that may hang come to the top.
	{title: "AGE", width: 7, prio: 0, cell: func(r claims.TxnRow) string { return ago(r.AgeSeconds) },
		cmp: func(a, b claims.TxnRow) int { return ptrCmp(b.AgeSeconds, a.AgeSeconds) }},
	{title: "TIMEOUT", width: 7, prio: 1, cell: func(r claims.TxnRow) string { return output.Seconds(float64(r.TimeoutMs) / 1000) },
		cmp: func(a, b claims.TxnRow) int { return cmp.Compare(a.TimeoutMs, b.TimeoutMs) }},
	{title: "PARTITIONS", width: 16, prio: 1, flex: true, more: 12, morePrio: 3, cell: func(r claims.TxnRow) string { return r.Partitions }},
	{title: "PRODUCER", width: 8, prio: 2, cell: func(r claims.TxnRow) string { return strconv.FormatInt(r.ProducerID, 10) },
		cmp: func(a, b claims.TxnRow) int { return cmp.Compare(a.ProducerID, b.ProducerID) }},
	{title: "EPOCH", width: 5, prio: 2, cell: func(r claims.TxnRow) string { return strconv.Itoa(int(r.Epoch)) }},
	{title: "GROUPS", width: 12, prio: 2, cell: func(r claims.TxnRow) string { return strings.Join(r.Groups, ",") }},
	{title: "LOG-PART", width: 8, prio: 4, cell: func(r claims.TxnRow) string { return strconv.Itoa(r.Partition) },
		cmp: func(a, b claims.TxnRow) int { return cmp.Compare(a.Partition, b.Partition) }},
}

// txnText is what the filter searches: typed fields spelled out.
func txnText(r claims.TxnRow) string {
	s := r.TransactionalID + " " + r.State + " " + r.Partitions + " " + strings.Join(r.Groups, " ") +
		" p" + strconv.Itoa(r.Partition) + " producer " + strconv.FormatInt(r.ProducerID, 10)
	if r.Coordinator != nil {
		s += " node " + strconv.Itoa(int(*r.Coordinator))
	}
	if r.Hanging {
		s += " hanging"
	}
	return s
}

// Transactions are the rows the transactions screen shows: filtered, then sorted.
func (m Console) Transactions() []claims.TxnRow {
	var out []claims.TxnRow
	for _, r := range m.txns.rows {
		if m.match(txnText(r)) {
			out = append(out, r)
		}
	}
	return sortRows(out, txnColumns, m.txns.sort)
}

func (m Console) txnsFooter() string {
	m.help.Width = m.width
	up, down := keys.Up, keys.Down
	up.SetHelp("↑/↓", "move")
	down.SetEnabled(false)
	abort, sort := txnsKeys.Abort, keys.Sort
	abort.SetHelp("a", "abort")
	sort.SetHelp("s/S", "sort")
	bs := []key.Binding{up, down, abort, sort, keys.Filter, txnsKeys.Back, keys.Quit}
	if m.readOnly {
		bs = []key.Binding{up, down, sort, keys.Filter, txnsKeys.Back, keys.Quit}
	}
	return m.help.ShortHelpView(bs)
}

// askTxns asks for the transactions unless a reading is under way.
func (m Console) askTxns() (Console, tea.Cmd) {
	if !m.txns.start(m.now()) {
		return m, nil
	}
	return m, m.run(func(ctx context.Context) tea.Msg {
		rows, err := m.act.Transactions(ctx)
		return txnsMsg{rows, err}
	})
}

// beatTxns asks again, on an engine beat, once txnsEvery has passed on the screen.
func (m Console) beatTxns() (Console, tea.Cmd) {
	if m.screen != txnsScreen || !m.txns.due(m.now(), txnsEvery) {
		return m, nil
	}
	return m.askTxns()
}

func (m Console) gotTxns(msg txnsMsg) Console {
	if m.txns.done(msg.err) {
		m.txns.rows, m.txns.readAt = msg.rows, m.now()
	}
	return m
}

func (m Console) txnsRoom() int { return max(1, m.height-len(m.top())-len(m.footer())-2) }

func (m Console) selectedTxn() (claims.TxnRow, bool) {
	rows := m.Transactions()
	if len(rows) == 0 {
		return claims.TxnRow{}, false
	}
	return rows[min(m.txns.cursor, len(rows)-1)], true
}

func (m Console) txnsKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	n := len(m.Transactions())
	page := max(1, m.txnsRoom()-1)
	t := &m.txns
	switch {
	case key.Matches(msg, txnsKeys.Back):
		if m.message != "" && msg.String() == "esc" {
			m.message = ""
			return m, nil
		}
		m.screen = mainScreen
		m.filter.SetValue("")
	case moveCursor(msg, &t.cursor, n, page):
	case key.Matches(msg, keys.Sort):
		t.sort = nextSort(t.sort, txnColumns)
	case key.Matches(msg, keys.Reverse):
		t.sort.desc = !t.sort.desc
	case key.Matches(msg, keys.Filter):
		m.filtering = true
		t.cursor = 0
		return m, m.filter.Focus()
	case key.Matches(msg, txnsKeys.Abort):
		if m.readOnly {
			m.say(true, "read-only console: aborts are off")
			return m, nil
		}
		r, ok := m.selectedTxn()
		if !ok {
			return m, nil
		}
		id := r.TransactionalID
		m.message = ""
		m.busy = "asking the coordinator of " + id + " for the plan"
		return m, m.run(func(ctx context.Context) tea.Msg {
			p, err := m.act.PlanAbort(ctx, id)
			return txnPlanMsg{id, p, err}
		})
	}
	return m, nil
}

// txnPlanKey confirms the abort shown with y; any other key cancels it.
func (m Console) txnPlanKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	p := *m.txns.plan
	m.screen, m.txns.plan = txnsScreen, nil
	if msg.String() != "y" {
		m.say(false, "abort of transaction "+p.TransactionalID+" cancelled: nothing was written")
		return m, nil
	}
	m.busy = "aborting transaction " + p.TransactionalID
	return m, m.run(func(ctx context.Context) tea.Msg {
		sum, err := m.act.Abort(ctx, p)
		return txnDoneMsg{p, sum, err}
	})
}

func (m Console) gotTxnPlan(msg txnPlanMsg) Console {
	m.busy = ""
	if msg.err != nil {
		m.say(true, "abort refused: "+msg.err.Error())
		return m
	}
	p := msg.plan
	m.txns.plan, m.screen = &p, txnPlanScreen
	return m
}

func (m Console) gotTxnDone(msg txnDoneMsg) (Console, tea.Cmd) {
	m.busy = ""
	if msg.err != nil {
		m.say(true, "abort of transaction "+msg.plan.TransactionalID+" failed: "+msg.err.Error())
	} else {
		m.say(false, render.TxnAbort{Summary: msg.sum}.String())
	}
	m.txns.asking = false
	return m.askTxns()
}

func (m Console) txnsView() []string {
	t := m.txns
	rows := m.Transactions()
	title := "[TRANSACTIONS]"
	switch {
	case !t.loaded && t.err == "":
		title += " reading the coordinator log..."
	case t.loaded:
		hanging := 0
		for _, r := range t.rows {
			if r.Hanging {
				hanging++
			}
		}
		title += " " + plural(len(t.rows), "open transaction")
		if hanging > 0 {
			title += fmt.Sprintf(" · %d hanging", hanging)
		}
		title += " · by " + strings.ToLower(txnColumns[t.sort.col].title)
		if t.sort.col == txnAge {
			title += " (oldest first)"
		}
		if t.sort.desc {
			title += ", reversed"
		}
		title += " · read " + t.readAt.UTC().Format("15:04:05")
	}
	cols := layout(txnColumns, m.width)
	return rowsView(m, title, t.err, txnColumns, t.loaded, len(rows), "  no open transaction in the coordinator log",
		"  no transaction matches the filter", m.txnsRoom(), t.cursor, t.offset, func(i int, selected bool) string {
			mark := " "
			if selected {
				mark = ">"
			}
			if rows[i].Hanging {
				mark += "!"
			} else {
				mark += " "
			}
			l := clip(mark+joinCells(cols, cells(cols, rows[i]))[2:], m.width)
			if rows[i].Hanging {
				l = badStyle.Render(l)
			}
			return l
		})
}

// scrolledTxns keeps the transactions cursor on screen.
func (m Console) scrolledTxns() Console {
	keepInView(&m.txns.cursor, &m.txns.offset, len(m.Transactions()), m.txnsRoom())
	return m
}

func (m Console) txnPlanView() []string {
	p := m.txns.plan
	out := []string{focusStyle.Render(clip("[ABORT "+p.TransactionalID+"] the plan, as its coordinator describes the transaction", m.width))}
	age := "-"
	if p.AgeSeconds != nil {
		age = output.Seconds(*p.AgeSeconds)
	}
	for _, l := range []string{
		fmt.Sprintf("coordinator node %d · state %s · open for %s (timeout %s)", p.Coordinator, p.State, age, output.Seconds(float64(p.TimeoutMs)/1000)),
		fmt.Sprintf("producer id %d epoch %d: fenced (its next request fails with PRODUCER_FENCED)", p.ProducerID, p.Epoch),
		"partitions " + dash(p.Partitions) + ": an abort marker on each, so READ_COMMITTED readers go past its records",
	} {
		for _, w := range wrap(l, m.width-2) {
			out = append(out, clip("  "+w, m.width))
		}
	}
	out = append(out, "")
	for _, l := range wrap(render.TxnAbort{Summary: p.Summary()}.String(), m.width-2) {
		out = append(out, clip("  "+l, m.width))
	}
	return append(out, "", titleStyle.Render(clip("abort transaction "+p.TransactionalID+"? y aborts, any other key cancels", m.width)))
}
