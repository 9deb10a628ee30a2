package inspect

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Update is what a claims watcher learns in one round: the 16 rows as they stand, the
// handovers whose claim records just arrived, and the changes between the rows before and now.
type Update struct {
	Rows      []ClaimRow
	Handovers []Handover
	Changes   []Change
}

// Change is one difference between two claim rows of a partition: one line of `claims --watch`
// without a terminal. JSON field names are an interface.
type Change struct {
	Time      time.Time `json:"time"`
	Partition int       `json:"partition"`
	// Field is "owner", "claim", "groups", "checkpoint", "assigned" or "flags".
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

func (Change) Columns() []string { return []string{"TIME", "PARTITION", "FIELD", "OLD", "NEW"} }

func (c Change) Cells() []string {
	return []string{c.Time.UTC().Format("15:04:05.000"), strconv.Itoa(c.Partition), c.Field, c.Old, c.New}
}

// Diff lists what changed between two row sets of the same partitions.
func Diff(before, after []ClaimRow, now time.Time) []Change {
	var out []Change
	for i := range after {
		if i >= len(before) {
			break
		}
		a, b := before[i].Cells(), after[i].Cells()
		for _, f := range []struct {
			name string
			col  int
		}{{"owner", 1}, {"claim", 3}, {"groups", 6}, {"checkpoint", 8}, {"assigned", 12}, {"flags", 13}} {
			if a[f.col] != b[f.col] {
				out = append(out, Change{Time: now, Partition: after[i].Partition, Field: f.name, Old: a[f.col], New: b[f.col]})
			}
		}
	}
	return out
}

// ChangedPartitions lists the partitions a set of changes touches, sorted.
func ChangedPartitions(cs []Change) []int {
	var out []int
	for _, c := range cs {
		if !slices.Contains(out, c.Partition) {
			out = append(out, c.Partition)
		}
	}
	slices.Sort(out)
	return out
}

// RefreshEvery is how often a watcher re-reads what does not come through the log (Iggy's
// assignment and the announcements).
var RefreshEvery = time.Second

// FollowModel keeps f current: it follows the log from where f was loaded, re-reads the
// assignment, announcements and drain requests every RefreshEvery, and calls round with the
// handovers read since the last call after each round that applied a record or refreshed. It
// returns when ctx ends or round fails (ErrStop ends it without an error).
func FollowModel(ctx context.Context, l *Log, f *Model, round func(handovers []Handover) error) error {
	var handovers []Handover
	dirty := false
	lastRefresh := l.clock.Now()
	return l.Follow(ctx, AllPartitions(), f.Ends, func(e *Entry) error {
		if h, ok := f.Parts[e.Partition].Apply(e); ok {
			dirty = true
			if h != nil {
				handovers = append(handovers, *h)
			}
		}
		f.Ends[e.Partition] = max(f.Ends[e.Partition], e.Offset+1)
		return nil
	}, func() error {
		if now := l.clock.Now(); now.Sub(lastRefresh) >= RefreshEvery {
			lastRefresh = now
			if err := f.Refresh(ctx, l); err != nil {
				return err
			}
			dirty = true
		}
		if !dirty {
			return nil
		}
		h := handovers
		handovers, dirty = nil, false
		return round(h)
	})
}

// Watch follows the fleet and calls emit after each round that changed a row or brought a
// handover: as soon as the records that change a row are read, not on a redraw timer.
func Watch(ctx context.Context, l *Log, f *Model, emit func(Update) error) error {
	prev := f.Rows(l.clock.Now())
	return FollowModel(ctx, l, f, func(handovers []Handover) error {
		rows := f.Rows(l.clock.Now())
		changes := Diff(prev, rows, l.clock.Now())
		prev = rows
		if len(changes) == 0 && len(handovers) == 0 {
			return nil
		}
		return emit(Update{Rows: rows, Handovers: handovers, Changes: changes})
	})
}

// HandoverText is a handover as one sentence, for logs and the watch view's pane.
func HandoverText(h Handover) string {
	var b strings.Builder
	b.WriteString("partition " + strconv.Itoa(h.Partition) + ": ")
	if h.From == nil {
		b.WriteString("claimed by node " + strconv.Itoa(int(h.To)))
	} else {
		b.WriteString("node " + strconv.Itoa(int(*h.From)) + " -> node " + strconv.Itoa(int(h.To)))
	}
	b.WriteString(" (claim " + strconv.FormatUint(h.Claim, 10) + ")")
	if h.GapSeconds != nil {
		b.WriteString(", gap " + Seconds(*h.GapSeconds))
	}
	if h.HeldSeconds != nil {
		b.WriteString(", held " + Seconds(*h.HeldSeconds))
	}
	return b.String()
}
