package inspect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
)

// Query says which records `inspect` shows.
type Query struct {
	// Partitions to read; empty means all 16. A Group overrides it with the group's partition.
	Partitions []int
	// Group keeps only the records about one consumer group.
	Group    string
	From, To logread.Position
	// FromEnd shows only the records appended after Inspect starts (kcat's -o end).
	FromEnd bool
	// Follow keeps reading as records arrive, until the context ends. A follow without a From
	// starts at the end of the log, as tail -f does.
	Follow bool
}

// ParseFrom reads where `inspect --from` starts: a Position (see ParsePosition), "beginning" or
// "start" for the first record, or "end" for only the records appended from now on; the words
// are kcat's and rpk's.
func ParseFrom(s string, now time.Time) (from logread.Position, fromEnd bool, err error) {
	switch s {
	case "beginning", "start":
		return logread.Position{HasOffset: true}, false, nil
	case "end":
		return logread.Position{}, true, nil
	}
	from, err = logread.ParsePosition(s, now)
	if err != nil {
		return logread.Position{}, false, fmt.Errorf("%q is neither an offset, an RFC 3339 time, a duration ago (10m), beginning nor end", s)
	}
	return from, false, nil
}

// fromEnd reports whether the query starts at the end of the log.
func (q Query) fromEnd() bool { return q.FromEnd || q.Follow && !q.From.Set() }

func (q Query) partitions() ([]int, error) {
	if q.Group != "" {
		return []int{record.Partition(q.Group)}, nil
	}
	if len(q.Partitions) == 0 {
		return logread.AllPartitions(), nil
	}
	for _, p := range q.Partitions {
		if err := logread.CheckPartition(p); err != nil {
			return nil, err
		}
	}
	return q.Partitions, nil
}

// Inspect calls emit with the row of every record the query selects, partition by partition in
// log order, then (with Follow) each new record as it arrives; caughtUp is called whenever the
// reader has reached the end of the log. Validity comes from folding every partition from its
// start (by record.Validity, the rule record.State folds with), so a record outside the range
// still counts for the ones inside: a follow from the end reads the log once before it shows
// anything.
func Inspect(ctx context.Context, l *logread.Log, q Query, emit func(RecordRow) error, caughtUp func()) error {
	parts, err := q.partitions()
	if err != nil {
		return err
	}
	ends, err := l.Ends(ctx)
	if err != nil {
		return err
	}
	states := make([]record.Validity, record.Partitions)
	done := make([]bool, record.Partitions)
	tail := q.fromEnd()
	handle := func(e *logread.Entry) error {
		valid := false
		if e.Err == nil {
			valid = states[e.Partition].Apply(&e.Record)
		}
		if done[e.Partition] || tail && e.Offset < ends[e.Partition] {
			return nil
		}
		t := e.Record.Time
		if q.To.After(e.Offset, t) {
			done[e.Partition] = true
			if !q.Follow {
				return logread.ErrStop
			}
			return nil
		}
		if q.From.Before(e.Offset, t) {
			return nil
		}
		if q.Group != "" && (e.Err != nil || stateview.RecordGroup(&e.Record) != q.Group) {
			return nil
		}
		return emit(NewRecordRow(e, valid))
	}
	for _, p := range parts {
		err := l.ReadBatches(ctx, p, 0, ends[p], func(batch []logread.Entry) error {
			for i := range batch {
				if err := handle(&batch[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, logread.ErrStop) {
			return err
		}
	}
	if caughtUp != nil {
		caughtUp()
	}
	if !q.Follow {
		return nil
	}
	return l.Follow(ctx, parts, ends, handle, func() error {
		if caughtUp != nil {
			caughtUp()
		}
		return nil
	})
}
