package groupadmin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
)

// How a seek is recorded, so that --undo finds it: every partition's commit of a seek carries
// the metadata SeekMark + its id (the time it was committed, RFC 3339 with nanoseconds, UTC),
// and every commit of an undo UndoMark + the id of the seek it undoes. The coordinator log keeps
// each commit as a record with its metadata, so the seeks of a group are the valid OffsetCommit
// records of its log partition that carry the mark; the offsets a seek replaced are the group's
// offsets folded through the record before its first. The marks are an interface: other tools
// may read them.
const (
	SeekMark = "iggy-kafka seek "
	UndoMark = "iggy-kafka seek undo "
)

// metadata is the commit metadata of plan p committed at now.
func metadata(p Plan, now time.Time) string {
	if p.Target.Kind == Undo {
		return UndoMark + p.Target.Seek
	}
	return SeekMark + now.UTC().Format(time.RFC3339Nano)
}

// LastSeek finds in the coordinator log the newest seek of group not undone yet and returns the
// target that puts back the offsets it replaced (Kind Undo), and the partitions it moved that
// had no commit before it: a commit cannot give those their "none" back, so they are left.
func LastSeek(ctx context.Context, log *logread.Log, group string) (Target, []string, error) {
	id, s, err := lastSeek(ctx, log, group)
	if err != nil {
		return Target{}, nil, err
	}
	if id == "" {
		return Target{}, nil, fmt.Errorf("the coordinator log holds no seek of group %s left to undo", group)
	}
	before := map[string]map[int32]int64{}
	if s.first > 0 {
		r, err := replay.Run(ctx, log, record.Partition(group), replay.Options{Until: logread.Position{Offset: s.first - 1, HasOffset: true}})
		if err != nil {
			return Target{}, nil, err
		}
		for _, g := range r.Groups {
			if g.Group != group {
				continue
			}
			for _, o := range g.Offsets {
				if s.parts[o.Topic][o.Partition] {
					if before[o.Topic] == nil {
						before[o.Topic] = map[int32]int64{}
					}
					before[o.Topic][o.Partition] = o.Offset
				}
			}
		}
	}
	var missing []string
	for t, ps := range s.parts {
		for pt := range ps {
			if _, ok := before[t][pt]; !ok {
				missing = append(missing, fmt.Sprintf("%s[%d]", t, pt))
			}
		}
	}
	slices.Sort(missing)
	if len(before) == 0 {
		return Target{}, missing, fmt.Errorf("seek %s of group %s moved partitions that had no commit before it: there is nothing to put back", id, group)
	}
	at, _ := time.Parse(time.RFC3339Nano, id)
	return Target{Kind: Undo, Seek: id, Time: at, Commits: before}, missing, nil
}

// Undoable is the id of group's newest seek not undone yet, "" when there is none.
func Undoable(ctx context.Context, log *logread.Log, group string) (string, error) {
	id, _, err := lastSeek(ctx, log, group)
	return id, err
}

// seek is one seek of a group in the log: the offset of its first commit and the partitions it
// moved.
type seek struct {
	first uint64
	parts map[string]map[int32]bool
}

// lastSeek reads group's log partition (valid records only, by the gateways' validity rule)
// for its newest seek not undone; "" when there is none.
func lastSeek(ctx context.Context, log *logread.Log, group string) (string, *seek, error) {
	p := record.Partition(group)
	ends, err := log.Ends(ctx)
	if err != nil {
		return "", nil, err
	}
	seeks := map[string]*seek{}
	var order []string
	undone := map[string]bool{}
	var v record.Validity
	err = log.Read(ctx, p, 0, ends[p], func(e *logread.Entry) error {
		if e.Err != nil || !v.Apply(&e.Record) || e.Record.Type != record.TypeOffsetCommit {
			return nil
		}
		oc := e.Record.OffsetCommit
		if oc.Group != group {
			return nil
		}
		if id, ok := strings.CutPrefix(oc.Metadata, UndoMark); ok {
			undone[id] = true
			return nil
		}
		id, ok := strings.CutPrefix(oc.Metadata, SeekMark)
		if !ok {
			return nil
		}
		s := seeks[id]
		if s == nil {
			s = &seek{first: e.Offset, parts: map[string]map[int32]bool{}}
			seeks[id] = s
			order = append(order, id)
		}
		if s.parts[oc.Topic] == nil {
			s.parts[oc.Topic] = map[int32]bool{}
		}
		s.parts[oc.Topic][oc.Partition] = true
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	for i := len(order) - 1; i >= 0; i-- {
		if !undone[order[i]] {
			return order[i], seeks[order[i]], nil
		}
	}
	return "", nil, nil
}
