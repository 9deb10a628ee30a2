package tui

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/topics"
)

// topicsEvery is how often the topics screen asks for a new reading while it is shown, paced by
// the engine's beats (so by its clock).
const topicsEvery = 2 * time.Second

// topicsMsg is a reading of the topics.
type topicsMsg struct {
	snap topics.Snapshot
	err  error
}

// topicsView is the topics screen: one row per topic (its partitions summed) followed by a row
// per partition.
type topicsView struct {
	reading
	snap     topics.Snapshot
	cursor   int
	offset   int
	lastRead time.Time
	sort     sortSpec
}

// topicsKeys are the topics screen's own bindings; it moves and filters with the console's.
var topicsKeys = struct{ Tail, Back key.Binding }{
	Tail: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "tail (on a topic: all)")),
	Back: key.NewBinding(key.WithKeys("esc", "t"), key.WithHelp("esc", "back")),
}

func (m Console) topicsFooter() string {
	m.help.Width = m.width
	up, down := keys.Up, keys.Down
	up.SetHelp("↑/↓", "move")
	down.SetEnabled(false)
	return m.help.ShortHelpView([]key.Binding{up, down, topicsKeys.Tail, keys.Filter, topicsKeys.Back, keys.Quit})
}

// topicItem is a row of the topics screen: a topic's sum (whole) or one of its partitions.
type topicItem struct {
	row   topics.Row
	whole bool
	parts int
}

// TopicRows are the rows the topics screen shows, filtered by topic or group name.
func (m Console) topicItems() []topicItem {
	// Topics are sorted by their sums, and each topic's partitions among themselves.
	var tops [][]topicItem
	for _, t := range m.topics.snap.Topics {
		if !m.match(t.Topic + " " + strings.Join(t.Groups, " ")) {
			continue
		}
		parts := make([]topicItem, len(t.Partitions))
		for i, p := range t.Partitions {
			parts[i] = topicItem{row: p}
		}
		tops = append(tops, append([]topicItem{{row: t.Row, whole: true, parts: len(t.Partitions)}}, sortRows(parts, topicColumns, m.topics.sort)...))
	}
	if c := m.topics.sort; c.col > 0 && c.col < len(topicColumns) && topicColumns[c.col].cmp != nil {
		cmp := topicColumns[c.col].cmp
		slices.SortStableFunc(tops, func(a, b []topicItem) int {
			if c.desc {
				return cmp(b[0], a[0])
			}
			return cmp(a[0], b[0])
		})
	} else if c.desc {
		slices.Reverse(tops)
	}
	return slices.Concat(tops...)
}

// askTopics asks for a reading unless one is under way.
func (m Console) askTopics() (Console, tea.Cmd) {
	if !m.topics.start(m.now()) {
		return m, nil
	}
	return m, m.run(func(ctx context.Context) tea.Msg {
		s, err := m.act.Topics(ctx)
		return topicsMsg{s, err}
	})
}

// beatTopics asks again, on an engine beat, once topicsEvery has passed on the screen.
func (m Console) beatTopics() (Console, tea.Cmd) {
	if m.screen != topicsScreen || !m.topics.due(m.now(), topicsEvery) {
		return m, nil
	}
	return m.askTopics()
}

func (m Console) gotTopics(msg topicsMsg) Console {
	if m.topics.done(msg.err) {
		m.topics.snap, m.topics.lastRead = msg.snap, msg.snap.At
	}
	return m
}

func (m Console) topicsRoom() int { return max(1, m.height-len(m.top())-len(m.footer())-2) }

func (m Console) topicsKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	items := m.topicItems()
	page := max(1, m.topicsRoom()-1)
	t := &m.topics
	switch {
	case key.Matches(msg, topicsKeys.Back):
		if m.message != "" && msg.String() == "esc" {
			m.message = ""
			return m, nil
		}
		m.screen = mainScreen
		m.filter.SetValue("")
	case moveCursor(msg, &t.cursor, len(items), page):
	case key.Matches(msg, keys.Sort):
		t.sort = nextSort(t.sort, topicColumns)
	case key.Matches(msg, keys.Reverse):
		t.sort.desc = !t.sort.desc
	case key.Matches(msg, keys.Filter):
		m.filtering = true
		t.cursor = 0
		return m, m.filter.Focus()
	case key.Matches(msg, topicsKeys.Tail):
		if len(items) == 0 {
			return m, nil
		}
		it := items[min(t.cursor, len(items)-1)]
		var parts []int32
		if !it.whole {
			parts = []int32{it.row.Partition}
		}
		return m.openTail(it.row.Topic, parts)
	}
	return m, nil
}

// perSecond shows a rate of things per second: 0, 12, 12.5, 1.2k, 3.4M.
func perSecond(v *float64) string {
	if v == nil {
		return ""
	}
	return short(*v, "")
}

// bytesText shows a size in bytes: 512B, 1.5KiB, 12MiB, 3.4GiB.
func bytesText(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 || n >= 100 {
		return strconv.FormatFloat(n, 'f', 0, 64) + units[i]
	}
	return strconv.FormatFloat(n, 'f', 1, 64) + units[i]
}

func bytesRate(v *float64) string {
	if v == nil {
		return ""
	}
	return bytesText(*v)
}

func short(v float64, unit string) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M" + unit
	case v >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k" + unit
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k" + unit
	case v == float64(int64(v)) || v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64) + unit
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + unit
}

var topicColumns = []column[topicItem]{
	{title: "TOPIC", width: 16, prio: 0, more: 8, morePrio: 3, cell: func(it topicItem) string {
		if it.whole {
			return it.row.Topic
		}
		return "  " + it.row.Topic
	}},
	{title: "PART", width: 5, prio: 0, cell: func(it topicItem) string {
		if it.whole {
			return "all " + strconv.Itoa(it.parts)
		}
		return strconv.Itoa(int(it.row.Partition))
	}},
	{title: "END", width: 9, prio: 0, cell: func(it topicItem) string { return strconv.FormatInt(it.row.End, 10) },
		cmp: func(a, b topicItem) int { return cmp.Compare(a.row.End, b.row.End) }},
	{title: "IN/S", width: 6, prio: 0, cell: func(it topicItem) string { return perSecond(it.row.RecordsIn) },
		cmp: func(a, b topicItem) int { return ptrCmp(a.row.RecordsIn, b.row.RecordsIn) }},
	{title: "OUT/S", width: 6, prio: 0, cell: func(it topicItem) string { return perSecond(it.row.RecordsOut) },
		cmp: func(a, b topicItem) int { return ptrCmp(a.row.RecordsOut, b.row.RecordsOut) }},
	{title: "LAG", width: 7, prio: 1, cell: func(it topicItem) string { return int64Text(it.row.Lag) },
		cmp: func(a, b topicItem) int { return ptrCmp(a.row.Lag, b.row.Lag) }},
	{title: "BYTES-IN/S", width: 10, prio: 2, cell: func(it topicItem) string { return bytesRate(it.row.BytesIn) },
		cmp: func(a, b topicItem) int { return ptrCmp(a.row.BytesIn, b.row.BytesIn) }},
	{title: "BYTES-OUT/S", width: 11, prio: 2, cell: func(it topicItem) string { return bytesRate(it.row.BytesOut) },
		cmp: func(a, b topicItem) int { return ptrCmp(a.row.BytesOut, b.row.BytesOut) }},
	{title: "SIZE", width: 8, prio: 1, cell: func(it topicItem) string { return bytesText(float64(it.row.Bytes)) },
		cmp: func(a, b topicItem) int { return cmp.Compare(a.row.Bytes, b.row.Bytes) }},
	{title: "GROUPS", width: 12, prio: 1, flex: true, cell: func(it topicItem) string { return strings.Join(it.row.Groups, ",") }},
}

func (m Console) topicsView() []string {
	t := m.topics
	items := m.topicItems()
	title := "[TOPICS]"
	switch {
	case !t.loaded && t.err == "":
		title += " reading the topics..."
	case t.loaded:
		title += " " + plural(len(t.snap.Topics), "topic")
		if t.snap.Over > 0 {
			title += " · rates over the last " + output.Seconds(t.snap.Over.Seconds())
		} else {
			title += " · rates from the next reading"
		}
		title += " · read " + t.lastRead.UTC().Format("15:04:05")
		if t.sort.col > 0 || t.sort.desc {
			title += " · by " + strings.ToLower(topicColumns[t.sort.col].title)
			if t.sort.desc {
				title += ", reversed"
			}
		}
	}
	cols := layout(topicColumns, m.width)
	return rowsView(m, title, t.err, topicColumns, t.loaded, len(items), "  no topic in the fleet",
		"  no topic matches the filter", m.topicsRoom(), t.cursor, t.offset, func(i int, selected bool) string {
			mark := "  "
			if selected {
				mark = "> "
			}
			l := clip(mark+joinCells(cols, cells(cols, items[i]))[2:], m.width)
			if items[i].whole {
				l = titleStyle.Render(l)
			}
			return l
		})
}

// scrolledTopics keeps the topics cursor on screen.
func (m Console) scrolledTopics() Console {
	keepInView(&m.topics.cursor, &m.topics.offset, len(m.topicItems()), m.topicsRoom())
	return m
}
