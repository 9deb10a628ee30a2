package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/iggy-kafka/iggy-kafka/inspect"
)

// UpdateMsg is what a claims watcher learned in one round.
type UpdateMsg inspect.Update

// keyMap is the view's bindings; the footer and the ? page are built from it.
type keyMap struct {
	Help, Filter, Clear, Quit key.Binding
}

func (k keyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help, k.Filter, k.Quit} }

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Filter, k.Clear}, {k.Help, k.Quit}}
}

var keys = keyMap{
	Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	Clear:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),
	Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
}

// maxHandovers is how many handovers the pane keeps.
const maxHandovers = 4

var (
	titleStyle   = lipgloss.NewStyle().Bold(true)
	headerStyle  = lipgloss.NewStyle().Bold(true).Underline(true)
	changedStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("11"))
	unownedStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("9"))
	dimStyle     = lipgloss.NewStyle().Faint(true)
)

// Claims is the model of `claims --watch`.
type Claims struct {
	rows      []inspect.ClaimRow
	changed   map[int]bool // partitions the last update changed, marked until the next one
	handovers []inspect.Handover
	updates   int
	lastAt    time.Time

	filter    textinput.Model
	filtering bool
	showHelp  bool
	help      help.Model
	width     int
	height    int
	now       func() time.Time
}

// NewClaims starts the view on the rows as loaded; now stamps updates in the title.
func NewClaims(rows []inspect.ClaimRow, now func() time.Time) Claims {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "node, address, flag..."
	ti.CharLimit = 64
	return Claims{rows: rows, changed: map[int]bool{}, filter: ti, help: help.New(), width: 80, height: 24, now: now}
}

func (m Claims) Init() tea.Cmd { return nil }

func (m Claims) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
	case UpdateMsg:
		m.rows = msg.Rows
		m.changed = map[int]bool{}
		for _, p := range inspect.ChangedPartitions(msg.Changes) {
			m.changed[p] = true
		}
		for _, h := range msg.Handovers {
			m.changed[h.Partition] = true
		}
		m.handovers = append(append([]inspect.Handover(nil), msg.Handovers...), m.handovers...)
		if len(m.handovers) > maxHandovers {
			m.handovers = m.handovers[:maxHandovers]
		}
		m.updates++
		m.lastAt = m.now()
	case tea.KeyMsg:
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
			return m, cmd
		}
		switch {
		case key.Matches(msg, keys.Quit):
			return m, tea.Quit
		case key.Matches(msg, keys.Help):
			m.showHelp = !m.showHelp
		case key.Matches(msg, keys.Filter):
			m.filtering = true
			return m, m.filter.Focus()
		case key.Matches(msg, keys.Clear):
			m.filter.SetValue("")
		}
	}
	return m, nil
}

// Filter is the text rows must contain to be shown.
func (m Claims) Filter() string { return m.filter.Value() }

// Visible lists the rows the filter keeps.
func (m Claims) Visible() []inspect.ClaimRow {
	f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
	if f == "" {
		return m.rows
	}
	var out []inspect.ClaimRow
	for _, r := range m.rows {
		cells := r.Cells()
		text := strings.ToLower(strings.Join(cells, " ") + " node " + cells[1] + " p" + cells[0])
		if strings.Contains(text, f) {
			out = append(out, r)
		}
	}
	return out
}

// The table's columns at 80 columns: what fits, the rest is in `claims` without --watch.
var columns = []struct {
	title string
	width int
}{{"", 1}, {"PART", 4}, {"OWNER", 5}, {"ADDRESS", 18}, {"CLAIM", 6}, {"CLAIMED", 8}, {"GROUPS", 6}, {"END", 6}, {"FLAGS", 18}}

func fit(s string, w int) string {
	if len(s) > w {
		if w <= 1 {
			return s[:w]
		}
		return s[:w-1] + "~"
	}
	return s + strings.Repeat(" ", w-len(s))
}

func line(cells []string) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fit(c, columns[i].width))
	}
	return strings.TrimRight(b.String(), " ")
}

func rowCells(r inspect.ClaimRow, changed bool) []string {
	c := r.Cells()
	mark := " "
	if changed {
		mark = ">"
	}
	claimed := "-"
	if r.ClaimedAt != nil {
		claimed = r.ClaimedAt.UTC().Format("15:04:05")
	}
	flags := c[13]
	if flags == "" || flags == "-" {
		flags = "-"
	}
	owner := c[1]
	if owner == "" {
		owner = "NONE"
	}
	return []string{mark, c[0], owner, dash(c[2]), dash(c[3]), claimed, c[6], c[7], flags}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// View draws the view in m.height lines of at most m.width columns.
func (m Claims) View() string {
	var out []string
	owned := 0
	for _, r := range m.rows {
		if r.OwnerNode != nil {
			owned++
		}
	}
	status := fmt.Sprintf("%d/%d partitions owned", owned, len(m.rows))
	if m.updates > 0 {
		status += fmt.Sprintf(" · update %d at %s", m.updates, m.lastAt.UTC().Format("15:04:05.000"))
	}
	out = append(out, titleStyle.Render(clip("claims --watch · "+status, m.width)))
	headers := make([]string, len(columns))
	for i, c := range columns {
		headers[i] = c.title
	}
	out = append(out, headerStyle.Render(clip(line(headers), m.width)))
	for _, r := range m.Visible() {
		l := clip(line(rowCells(r, m.changed[r.Partition])), m.width)
		switch {
		case m.changed[r.Partition]:
			l = changedStyle.Render(l)
		case r.OwnerNode == nil:
			l = unownedStyle.Render(l)
		}
		out = append(out, l)
	}
	var bottom []string
	switch {
	case m.showHelp:
		bottom = append(bottom, titleStyle.Render("keys"))
		bottom = append(bottom, strings.Split(m.help.FullHelpView(keys.FullHelp()), "\n")...)
		bottom = append(bottom, dimStyle.Render(clip("> marks rows the last update changed; * marks the controller", m.width)))
	default:
		bottom = append(bottom, titleStyle.Render(clip("recent handovers", m.width)))
		if len(m.handovers) == 0 {
			bottom = append(bottom, dimStyle.Render("none since the view started"))
		}
		for _, h := range m.handovers {
			bottom = append(bottom, clip(h.At.UTC().Format("15:04:05.000")+" "+inspect.HandoverText(h), m.width))
		}
	}
	var footer string
	if m.filtering {
		footer = m.filter.View()
	} else {
		footer = m.help.ShortHelpView(keys.ShortHelp())
		if f := m.filter.Value(); f != "" {
			footer = "filter " + strconv.Quote(f) + " · " + footer
		}
	}
	// Rows give way to the bottom pane first, so the view never outgrows the terminal.
	room := m.height - len(bottom) - 1
	if room < len(out) {
		out = out[:max(room, 0)]
	}
	for len(out) < room {
		out = append(out, "")
	}
	out = append(out, bottom...)
	out = append(out, footer)
	if len(out) > m.height {
		out = out[len(out)-m.height:]
	}
	return strings.Join(out, "\n")
}

func clip(s string, w int) string {
	if len(s) > w {
		return s[:w]
	}
	return s
}
