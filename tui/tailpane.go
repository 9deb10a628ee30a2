package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/iggy-kafka/iggy-kafka/tail"
)

// RecordStream is a live tail of records (*tail.Stream): Next waits for the next batch, Close
// stops the reader.
type RecordStream interface {
	Next(ctx context.Context) ([]tail.Record, error)
	Close()
}

// The tail pane keeps at most this many records, and at most this many bytes of values and
// keys, dropping the oldest: it is a window on a live partition, not a copy of it.
const (
	tailKeep      = 10_000
	tailKeepBytes = 64 << 20
)

// TailBacklog is how many records before the end a tail opened from the topics screen shows.
const TailBacklog = 100

// Messages of the tail pane, each tagged with the stream it comes from: a stream replaced by a
// jump may still answer.
type (
	tailOpenedMsg struct {
		id     int
		from   string
		stream RecordStream
		err    error
	}
	tailBatchMsg struct {
		id      int
		records []tail.Record
		err     error
	}
	tailClosedMsg struct{}
)

type tailInput int

const (
	noInput tailInput = iota
	jumpInput
	searchInput
)

// tailView is the tail pane: the records of a topic's partition (or of every partition) as they
// arrive, paused or following, searched, and one of them shown whole.
type tailView struct {
	topic string
	parts []int32
	from  string // as asked: "" is the last tailBacklog records

	id      int  // the stream's (Console.tailStream)
	nextID  int  // the next stream's
	waiting bool // a Next of the stream is under way

	records []tail.Record
	size    int // bytes of keys and values held
	dropped int // records let go at the top
	held    []tail.Record
	paused  bool
	ended   string

	cursor, offset int
	follow         bool // the cursor stays on the newest record
	hex            bool
	detail         bool
	detailScroll   int

	input   tailInput
	prompt  textinput.Model
	search  string
	matches []int
}

// tailKeys are the tail pane's bindings; its footer and the help page are built from them.
type tailKeyMap struct {
	Pause, Jump, Search, Next, Prev, Hex, Whole, Newest, Back key.Binding
}

var tailKeys = tailKeyMap{
	Pause:  key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause/resume")),
	Jump:   key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "jump to an offset or a time")),
	Search: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "search keys, headers, values")),
	Next:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next match")),
	Prev:   key.NewBinding(key.WithKeys("N"), key.WithHelp("N", "previous match")),
	Hex:    key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "values as hex/as shown")),
	Whole:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "the record whole")),
	Newest: key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "newest, following")),
	Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
}

func (k tailKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Pause, k.Jump, k.Search, k.Next, k.Hex, k.Whole, k.Back}
}

func (k tailKeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Pause, k.Jump, k.Search, k.Next, k.Prev}, {k.Hex, k.Whole, k.Newest, k.Back}}
}

func (t tailView) name() string {
	if t.parts == nil {
		return t.topic
	}
	s := make([]string, len(t.parts))
	for i, p := range t.parts {
		s[i] = strconv.Itoa(int(p))
	}
	return t.topic + ":" + strings.Join(s, ",")
}

// openTail opens the tail pane on topic's partitions (every one when nil).
func (m Console) openTail(topic string, parts []int32) (Console, tea.Cmd) {
	pi := textinput.New()
	pi.CharLimit = 128
	pi.Cursor.SetMode(cursor.CursorStatic)
	m.tail = tailView{topic: topic, parts: parts, prompt: pi, follow: true, nextID: m.tail.nextID}
	m.screen = tailScreen
	var closeOld tea.Cmd
	if old := m.tailStream; old != nil {
		closeOld = closeStream(old)
	}
	m.tailStream = nil
	return m, tea.Batch(closeOld, m.startTail(""))
}

// startTail asks for a stream from `from`; the pane keeps its records until it comes.
func (m *Console) startTail(from string) tea.Cmd {
	m.tail.nextID++
	id, topic, parts := m.tail.nextID, m.tail.topic, m.tail.parts
	m.busy = "opening the tail of " + m.tail.name()
	act := m.act
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), actionTimeout)
		defer cancel()
		s, err := act.Tail(ctx, topic, parts, from)
		return tailOpenedMsg{id, from, s, err}
	}
}

func closeStream(s RecordStream) tea.Cmd {
	return func() tea.Msg {
		s.Close()
		return tailClosedMsg{}
	}
}

// nextBatch waits for the stream's next batch.
func nextBatch(id int, s RecordStream) tea.Cmd {
	return func() tea.Msg {
		b, err := s.Next(context.Background())
		return tailBatchMsg{id, b, err}
	}
}

func (m Console) tailOpened(msg tailOpenedMsg) (Console, tea.Cmd) {
	if msg.id != m.tail.nextID {
		if msg.stream != nil {
			return m, closeStream(msg.stream)
		}
		return m, nil
	}
	m.busy = ""
	if msg.err != nil {
		m.say(true, "tail of "+m.tail.name()+": "+msg.err.Error())
		return m, nil
	}
	var cmds []tea.Cmd
	if m.tailStream != nil {
		cmds = append(cmds, closeStream(m.tailStream))
	}
	t := &m.tail
	m.tailStream = msg.stream
	t.id, t.from = msg.id, msg.from
	t.records, t.held, t.size, t.dropped, t.ended = nil, nil, 0, 0, ""
	t.cursor, t.offset, t.follow, t.paused, t.matches, t.search = 0, 0, true, false, nil, ""
	t.waiting = true
	cmds = append(cmds, nextBatch(t.id, msg.stream))
	return m, tea.Batch(cmds...)
}

func (m Console) tailBatch(msg tailBatchMsg) (Console, tea.Cmd) {
	t := &m.tail
	if msg.id != t.id || m.tailStream == nil {
		return m, nil
	}
	t.waiting = false
	if msg.err != nil {
		if !errors.Is(msg.err, tail.ErrEnded) && !errors.Is(msg.err, context.Canceled) {
			t.ended = msg.err.Error()
		} else {
			t.ended = "the tail ended"
		}
		return m, nil
	}
	if t.paused {
		t.held = append(t.held, msg.records...)
		return m, nil
	}
	m.tail.add(msg.records)
	t.waiting = true
	return m, nextBatch(t.id, m.tailStream)
}

// add appends records, letting the oldest go past tailKeep or tailKeepBytes.
func (t *tailView) add(rs []tail.Record) {
	for _, r := range rs {
		t.records = append(t.records, r)
		t.size += len(r.Key) + len(r.Value)
	}
	drop := 0
	for len(t.records)-drop > tailKeep || t.size > tailKeepBytes && len(t.records)-drop > 1 {
		t.size -= len(t.records[drop].Key) + len(t.records[drop].Value)
		drop++
	}
	if drop > 0 {
		t.records = append([]tail.Record(nil), t.records[drop:]...)
		t.dropped += drop
		t.cursor = max(0, t.cursor-drop)
		t.offset = max(0, t.offset-drop)
		t.matches = nil
		if t.search != "" {
			t.matches = t.find(t.search)
		}
	}
	if t.follow {
		t.cursor = max(0, len(t.records)-1)
	}
}

// find lists the records whose key, a header or value holds s, ignoring case.
func (t tailView) find(s string) []int {
	s = strings.ToLower(s)
	var out []int
	for i, r := range t.records {
		if recordHas(r, s) {
			out = append(out, i)
		}
	}
	return out
}

func recordHas(r tail.Record, lower string) bool {
	if strings.Contains(strings.ToLower(r.Key), lower) || strings.Contains(strings.ToLower(r.Value), lower) {
		return true
	}
	for _, h := range r.Headers {
		if strings.Contains(strings.ToLower(h.Key+"="+h.Value), lower) {
			return true
		}
	}
	return false
}

func (m Console) tailRoom() int { return max(1, m.height-len(m.top())-len(m.footer())-2) }

func (m Console) tailKey(msg tea.KeyMsg) (Console, tea.Cmd) {
	t := &m.tail
	if t.input != noInput {
		switch msg.Type {
		case tea.KeyCtrlC:
			return m, tea.Quit
		case tea.KeyEsc:
			t.input = noInput
			t.prompt.Blur()
			return m, nil
		case tea.KeyEnter:
			in, v := t.input, strings.TrimSpace(t.prompt.Value())
			t.input = noInput
			t.prompt.Blur()
			if v == "" {
				return m, nil
			}
			if in == jumpInput {
				return m, m.startTail(v)
			}
			t.search = v
			t.matches = t.find(v)
			m.pauseTail()
			if len(t.matches) == 0 {
				m.say(true, "no loaded record holds "+strconv.Quote(v))
				return m, nil
			}
			m.message = ""
			m.tail.firstMatch()
			return m, nil
		}
		var cmd tea.Cmd
		t.prompt, cmd = t.prompt.Update(msg)
		return m, cmd
	}
	if t.detail {
		switch {
		case key.Matches(msg, tailKeys.Back), key.Matches(msg, tailKeys.Whole):
			t.detail = false
		case key.Matches(msg, keys.Up):
			t.detailScroll = max(0, t.detailScroll-1)
		case key.Matches(msg, keys.Down):
			t.detailScroll++
		case key.Matches(msg, tailKeys.Hex):
			t.hex = !t.hex
		}
		return m, nil
	}
	page := max(1, m.tailRoom()-1)
	last := max(0, len(t.records)-1)
	switch {
	case key.Matches(msg, tailKeys.Back):
		if m.message != "" {
			m.message = ""
			return m, nil
		}
		if t.search != "" {
			t.search, t.matches = "", nil
			return m, nil
		}
		m.screen = topicsScreen
		s := m.tailStream
		// A stream still being opened is closed when it comes.
		m.tailStream, m.tail.id = nil, 0
		m.tail.nextID++
		m.busy = ""
		if s != nil {
			return m, closeStream(s)
		}
	case key.Matches(msg, tailKeys.Pause):
		if t.paused {
			return m.resumeTail()
		}
		m.pauseTail()
	case key.Matches(msg, tailKeys.Jump), key.Matches(msg, tailKeys.Search):
		t.input = searchInput
		t.prompt.Prompt = "search: "
		t.prompt.Placeholder = "text in a key, a header (k=v) or a value"
		if key.Matches(msg, tailKeys.Jump) {
			t.input = jumpInput
			t.prompt.Prompt = "jump to: "
			t.prompt.Placeholder = "an offset, an RFC 3339 time, 10m (ago), beginning, end"
		}
		t.prompt.SetValue("")
		return m, t.prompt.Focus()
	case key.Matches(msg, tailKeys.Next), key.Matches(msg, tailKeys.Prev):
		if len(t.matches) == 0 {
			return m, nil
		}
		t.toMatch(key.Matches(msg, tailKeys.Next))
	case key.Matches(msg, tailKeys.Hex):
		t.hex = !t.hex
	case key.Matches(msg, tailKeys.Whole):
		if len(t.records) > 0 {
			t.detail, t.detailScroll = true, 0
		}
	case key.Matches(msg, tailKeys.Newest):
		t.cursor, t.follow = last, true
		if t.paused {
			return m.resumeTail()
		}
	case key.Matches(msg, keys.Up):
		t.cursor, t.follow = max(0, t.cursor-1), false
	case key.Matches(msg, keys.Down):
		t.cursor = min(last, t.cursor+1)
		t.follow = t.cursor == last
	case key.Matches(msg, keys.PageUp):
		t.cursor, t.follow = max(0, t.cursor-page), false
	case key.Matches(msg, keys.PageDown):
		t.cursor = min(last, t.cursor+page)
		t.follow = t.cursor == last
	case key.Matches(msg, keys.Top):
		t.cursor, t.follow = 0, false
	}
	return m, nil
}

func (m *Console) pauseTail() {
	m.tail.paused = true
	m.tail.follow = false
}

func (m Console) resumeTail() (Console, tea.Cmd) {
	t := &m.tail
	t.paused, t.follow = false, t.cursor >= len(t.records)-1
	held := t.held
	t.held = nil
	t.add(held)
	if m.tailStream == nil || t.waiting || t.ended != "" {
		return m, nil
	}
	t.waiting = true
	return m, nextBatch(t.id, m.tailStream)
}

// toMatch moves the cursor to the next match below it (or the previous above it), wrapping.
func (t *tailView) toMatch(forward bool) {
	if len(t.matches) == 0 {
		return
	}
	if forward {
		for _, i := range t.matches {
			if i > t.cursor {
				t.cursor = i
				return
			}
		}
		t.cursor = t.matches[0]
		return
	}
	for j := len(t.matches) - 1; j >= 0; j-- {
		if t.matches[j] < t.cursor {
			t.cursor = t.matches[j]
			return
		}
	}
	t.cursor = t.matches[len(t.matches)-1]
}

// firstMatch moves the cursor to the newest match at or above it: a tail is read from the
// bottom.
func (t *tailView) firstMatch() {
	for j := len(t.matches) - 1; j >= 0; j-- {
		if t.matches[j] <= t.cursor {
			t.cursor = t.matches[j]
			return
		}
	}
	t.cursor = t.matches[len(t.matches)-1]
}

// matchIndex is the cursor's place among the matches, -1 when it is on none.
func (t tailView) matchIndex() int {
	for j, i := range t.matches {
		if i == t.cursor {
			return j
		}
	}
	return -1
}

// valueText is a value as the pane shows it: as tail.Show found it, or its bytes in hex.
func (t tailView) valueText(r tail.Record) string {
	switch {
	case r.ValueEncoding == tail.EncNull:
		return "null"
	case t.hex:
		return r.HexValue()
	}
	return r.Value
}

func headersText(r tail.Record) string {
	hs := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = h.Key + "=" + h.Value
	}
	return strings.Join(hs, ",")
}

func (m Console) tailColumns() []column[tail.Record] {
	t := m.tail
	cols := []column[tail.Record]{
		{title: "OFFSET", width: 8, prio: 0, cell: func(r tail.Record) string { return strconv.FormatInt(r.Offset, 10) }},
		{title: "TIME", width: 12, prio: 0, cell: func(r tail.Record) string { return r.Timestamp.UTC().Format("15:04:05.000") }},
		{title: "DATE", width: 10, prio: 5, cell: func(r tail.Record) string { return r.Timestamp.UTC().Format("2006-01-02") }},
		{title: "KEY", width: 10, prio: 1, more: 6, morePrio: 4, cell: func(r tail.Record) string { return tail.OneLine(r.Key) }},
		{title: "HEADERS", width: 14, prio: 2, more: 10, morePrio: 4, cell: func(r tail.Record) string { return tail.OneLine(headersText(r)) }},
		{title: "ENC", width: 4, prio: 1, cell: func(r tail.Record) string {
			if t.hex {
				return tail.EncHex
			}
			return r.ValueEncoding
		}},
		{title: "VALUE", width: 12, prio: 0, flex: true, cell: func(r tail.Record) string { return tail.OneLine(t.valueText(r)) }},
	}
	if t.parts == nil || len(t.parts) > 1 {
		cols = append([]column[tail.Record]{{title: "P", width: 3, prio: 0, cell: func(r tail.Record) string { return strconv.Itoa(int(r.Partition)) }}}, cols...)
	}
	return cols
}

func (m Console) tailTitle() string {
	t := m.tail
	s := "[TAIL " + t.name() + "] "
	switch {
	case t.ended != "":
		s += "stopped: " + t.ended
	case t.paused:
		s += "PAUSED"
		if len(t.held) > 0 {
			s += " (" + plural(len(t.held), "new record") + " held)"
		}
	case m.tailStream == nil:
		s += "opening"
	default:
		s += "following"
	}
	if n := len(t.records); n > 0 {
		s += fmt.Sprintf(" · %s loaded, offsets %d-%d", plural(n, "record"), t.records[0].Offset, t.records[n-1].Offset)
		if t.parts == nil || len(t.parts) > 1 {
			s = strings.TrimSuffix(s, fmt.Sprintf(", offsets %d-%d", t.records[0].Offset, t.records[n-1].Offset))
		}
	}
	if t.dropped > 0 {
		s += fmt.Sprintf(" (%d older let go)", t.dropped)
	}
	if t.from != "" {
		s += " · from " + t.from
	}
	return s
}

func (m Console) tailPaneView() []string {
	t := m.tail
	if t.detail && len(t.records) > 0 {
		return m.recordView()
	}
	// A title cut short says so: a range of offsets cut in the middle would read as another.
	out := []string{focusStyle.Render(strings.TrimRight(fit(m.tailTitle(), m.width), " "))}
	cols := layout(m.tailColumns(), m.width)
	out = append(out, headerStyle.Render(clip(header(cols), m.width)))
	if len(t.records) == 0 {
		msg := "  no record yet: waiting for the next one"
		switch {
		case m.tailStream == nil && t.ended == "":
			msg = "  opening the tail..."
		case t.ended != "":
			msg = "  no record"
		}
		out = append(out, dimStyle.Render(clip(msg, m.width)))
		return out
	}
	room := m.tailRoom()
	cur := min(t.cursor, len(t.records)-1)
	start := min(t.offset, cur)
	if cur >= start+room {
		start = cur - room + 1
	}
	start = max(0, min(start, len(t.records)-room))
	matched := map[int]bool{}
	for _, i := range t.matches {
		matched[i] = true
	}
	for i := start; i < len(t.records) && i < start+room; i++ {
		mark := " "
		if i == cur {
			mark = ">"
		}
		found := " "
		if matched[i] {
			found = "*"
		}
		l := clip(mark+found+joinCells(cols, cells(cols, t.records[i]))[2:], m.width)
		if matched[i] {
			l = changedStyle.Render(l)
		}
		out = append(out, l)
	}
	return out
}

// recordView shows the selected record whole: a JSON value indented, text wrapped, hex in rows
// of 32 bytes.
func (m Console) recordView() []string {
	t := m.tail
	r := t.records[min(t.cursor, len(t.records)-1)]
	out := []string{focusStyle.Render(clip(fmt.Sprintf("[RECORD %s[%d] offset %d]", r.Topic, r.Partition, r.Offset), m.width))}
	var lines []string
	lines = append(lines, "time     "+r.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"))
	lines = append(lines, "key      "+dash(tail.OneLine(r.Key))+" ("+r.KeyEncoding+")")
	if len(r.Headers) == 0 {
		lines = append(lines, "headers  -")
	}
	for i, h := range r.Headers {
		head := "         "
		if i == 0 {
			head = "headers  "
		}
		lines = append(lines, head+tail.OneLine(h.Key)+"="+tail.OneLine(h.Value)+" ("+h.Encoding+")")
	}
	enc := r.ValueEncoding
	if t.hex && enc != tail.EncNull {
		enc = tail.EncHex
	}
	lines = append(lines, fmt.Sprintf("value    %s, %d bytes", enc, r.ValueBytes))
	v := t.valueText(r)
	switch {
	case enc == tail.EncJSON:
		var b bytes.Buffer
		if json.Indent(&b, []byte(v), "  ", "  ") == nil {
			v = b.String()
		}
		lines = append(lines, strings.Split("  "+v, "\n")...)
	case enc == tail.EncHex:
		for i := 0; i < len(v); i += 64 {
			lines = append(lines, "  "+v[i:min(len(v), i+64)])
		}
	default:
		for _, l := range strings.Split(v, "\n") {
			for _, w := range wrapHard(l, max(10, m.width-2)) {
				lines = append(lines, "  "+w)
			}
		}
	}
	room := max(1, m.height-len(m.top())-len(m.footer())-1)
	start := min(t.detailScroll, max(0, len(lines)-room))
	for _, l := range lines[start:] {
		out = append(out, clip(l, m.width))
	}
	return out
}

// wrapHard cuts s into lines of w runes (a value need not have spaces).
func wrapHard(s string, w int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return []string{""}
	}
	var out []string
	for len(r) > w {
		out = append(out, string(r[:w]))
		r = r[w:]
	}
	return append(out, string(r))
}

func (m Console) tailFooter() string {
	t := m.tail
	switch {
	case t.input != noInput:
		return t.prompt.View()
	case t.detail:
		return "↑/↓ scroll · x hex · esc back"
	}
	s := m.help.ShortHelpView(tailKeys.ShortHelp())
	if t.search != "" {
		pos := "no match"
		if len(t.matches) > 0 {
			pos = fmt.Sprintf("%d of %d", t.matchIndex()+1, len(t.matches))
			if t.matchIndex() < 0 {
				pos = fmt.Sprintf("%d matches", len(t.matches))
			}
		}
		s = "search " + strconv.Quote(t.search) + ": " + pos + " · n/N next/previous · esc clears · " + s
	}
	return s
}
