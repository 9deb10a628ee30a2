package tui

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// What the screens and panes of rows (the nodes, partitions and handovers, the topics, the
// transactions) share: the lines above the rows, the window of rows that keeps the cursor in
// view, the keys that move the cursor and the s key's next sort.

// rowsView is a screen of n rows: the title, the last reading's error, the column header, what
// is missing once read with no row to show (none, or noMatch under a filter), then the rows in
// view around cursor (starting at offset where it can), each line made by line(i, selected).
// room is the lines the rows may take; an error line takes one of them.
func rowsView[T any](m Console, title, readErr string, cols []column[T], loaded bool, n int, none, noMatch string,
	room, cursor, offset int, line func(i int, selected bool) string) []string {
	out := []string{focusStyle.Render(clip(title, m.width))}
	if readErr != "" {
		out = append(out, badStyle.Render(clip("  ! "+readErr+"; the rows are as last read", m.width)))
		room = max(1, room-1)
	}
	out = append(out, headerStyle.Render(clip(header(layout(cols, m.width)), m.width)))
	if loaded && n == 0 {
		msg := none
		if m.filter.Value() != "" {
			msg = noMatch
		}
		out = append(out, dimStyle.Render(clip(msg, m.width)))
	}
	cursor = min(cursor, max(0, n-1))
	start := min(offset, cursor)
	if cursor >= start+room {
		start = cursor - room + 1
	}
	for i := start; i < n && i < start+room; i++ {
		out = append(out, line(i, i == cursor))
	}
	return out
}

// keepInView moves cursor among n rows and offset so that the cursor is among the room rows
// shown from offset.
func keepInView(cursor, offset *int, n, room int) {
	*cursor = min(*cursor, max(0, n-1))
	if *cursor < *offset {
		*offset = *cursor
	}
	if *cursor >= *offset+room {
		*offset = *cursor - room + 1
	}
	*offset = max(0, min(*offset, n-room))
}

// moveCursor moves a cursor among n rows by the movement keys (up, down, page up, page down,
// top, bottom), page rows at a time; false when msg is none of them.
func moveCursor(msg tea.KeyMsg, cursor *int, n, page int) bool {
	last := max(0, n-1)
	switch {
	case key.Matches(msg, keys.Up):
		*cursor = max(0, *cursor-1)
	case key.Matches(msg, keys.Down):
		*cursor = min(last, *cursor+1)
	case key.Matches(msg, keys.PageUp):
		*cursor = max(0, *cursor-page)
	case key.Matches(msg, keys.PageDown):
		*cursor = min(last, *cursor+page)
	case key.Matches(msg, keys.Top):
		*cursor = 0
	case key.Matches(msg, keys.Bottom):
		*cursor = last
	default:
		return false
	}
	return true
}

// nextSort is the sort after s on the s key: the next column after s's that sorts, cycling,
// ascending. Column 0 always sorts: without a cmp it is the rows' own order.
func nextSort[T any](s sortSpec, cols []column[T]) sortSpec {
	for i := 1; i <= len(cols); i++ {
		if c := (s.col + i) % len(cols); c == 0 || cols[c].cmp != nil {
			return sortSpec{col: c}
		}
	}
	return sortSpec{}
}

// reading is a screen's last reading of what it shows: asked for when the screen opens and
// again on the engine's beats while it stays open, one at a time.
type reading struct {
	loaded  bool   // a reading has come back
	err     string // the last reading's error; the rows stay as last read
	asking  bool
	askedAt time.Time
}

// start marks a reading asked for at now; false when one is under way.
func (r *reading) start(now time.Time) bool {
	if r.asking {
		return false
	}
	r.asking, r.askedAt = true, now
	return true
}

// due tells whether every has passed at now since the last reading was asked for.
func (r *reading) due(now time.Time, every time.Duration) bool {
	return now.Sub(r.askedAt) >= every
}

// done marks the reading back with err; true when it succeeded and its rows are to be kept.
func (r *reading) done(err error) bool {
	r.asking = false
	if err != nil {
		r.err = err.Error()
		return false
	}
	r.loaded, r.err = true, ""
	return true
}
