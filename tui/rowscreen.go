package tui

// What the screens of rows (the topics, the transactions) share: the lines above the rows and
// the window of rows that keeps the cursor in view.

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
