package groupadmin

import (
	"fmt"
	"strconv"
	"time"
)

// TargetKind says how a seek picks each partition's new offset.
type TargetKind int

const (
	// Earliest is the partition's log start offset.
	Earliest TargetKind = iota + 1
	// Latest is the partition's end offset (high watermark): nothing left to read.
	Latest
	// Offset is one offset for every partition.
	Offset
	// Time is the first offset whose record timestamp is at or after Time (the end when none
	// is).
	Time
	// Shift moves the committed offset by Shift records (negative: back).
	Shift
	// CommitAt puts back the offsets the group had committed at Time, as the coordinator log's
	// history holds them (Commits, from CommitsAt); partitions without a commit then are left
	// out.
	CommitAt
	// Undo puts back the offsets the seek Seek replaced (Commits, from LastSeek).
	Undo
)

// Target is where a seek moves each partition.
type Target struct {
	Kind   TargetKind
	Offset int64
	Time   time.Time
	Shift  int64
	// Commits are CommitAt's and Undo's offsets: topic -> partition -> offset.
	Commits map[string]map[int32]int64
	// Seek is the id of the seek Undo undoes.
	Seek string
}

// String is the target as the plan's summary says it.
func (t Target) String() string {
	switch t.Kind {
	case Earliest:
		return "the log start"
	case Latest:
		return "the log end"
	case Offset:
		return "offset " + strconv.FormatInt(t.Offset, 10)
	case Time:
		return "the first record at or after " + t.Time.UTC().Format(time.RFC3339Nano)
	case Shift:
		return fmt.Sprintf("a shift of %+d", t.Shift)
	case CommitAt:
		return "the offsets committed at " + t.Time.UTC().Format(time.RFC3339Nano)
	case Undo:
		return "the offsets seek " + t.Seek + " replaced"
	}
	return "no target"
}

// Partition is what BuildPlan needs of one partition: its bounds, the group's commit on it, and
// for a Time target the first offset at or after the time.
type Partition struct {
	Topic     string
	Partition int32
	// Committed is the group's committed offset, -1 without one.
	Committed int64
	// Metadata is the committed offset's metadata, kept for an undo.
	Metadata string
	// Start and End are the log start offset and the end offset (high watermark).
	Start, End int64
	// AtTime is, for a Time target, the first offset at or after the time (End when no record
	// is that recent).
	AtTime int64
}

// Step is one partition of a plan. JSON field names are an interface: add, never rename.
type Step struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Committed is the offset committed now, nil without a commit.
	Committed *int64 `json:"committed_offset"`
	LogStart  int64  `json:"log_start_offset"`
	LogEnd    int64  `json:"log_end_offset"`
	New       int64  `json:"new_offset"`
	// Reread counts the records the group reads again (the new offset below the commit), Skip
	// those it will not read (above it). Without a commit both count from the log start, where
	// the group's lag counts from.
	Reread int64 `json:"reread"`
	Skip   int64 `json:"skip"`
	// Clamped says why the new offset is not the target's: it lay before the log start or past
	// the end, so the nearer bound is taken. "" when not clamped.
	Clamped string `json:"clamped,omitempty"`
	// ClampedTo names the bound taken: "log_start" or "log_end" ("" when not clamped).
	ClampedTo string `json:"clamped_to,omitempty"`
}

func (Step) Columns() []string {
	return []string{"TOPIC", "PARTITION", "COMMITTED", "LOG-START", "LOG-END", "NEW-OFFSET", "RE-READ", "SKIP", "NOTE"}
}

func (s Step) Cells() []string {
	committed := "-"
	if s.Committed != nil {
		committed = strconv.FormatInt(*s.Committed, 10)
	}
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return []string{s.Topic, strconv.Itoa(int(s.Partition)), committed, i(s.LogStart), i(s.LogEnd), i(s.New), i(s.Reread), i(s.Skip), s.Clamped}
}

// Plan is a seek of one group: a step per partition, in topic and partition order.
type Plan struct {
	Group  string
	Target Target
	Steps  []Step
}

// BuildPlan computes the new offset of each partition for target, clamped to the partition's
// log start and end, and what the group will read again or skip. parts must be in the order
// the plan lists them.
func BuildPlan(group string, target Target, parts []Partition) Plan {
	p := Plan{Group: group, Target: target, Steps: make([]Step, 0, len(parts))}
	for _, pt := range parts {
		s := Step{Topic: pt.Topic, Partition: pt.Partition, LogStart: pt.Start, LogEnd: pt.End}
		from := pt.Start
		if pt.Committed >= 0 {
			c := pt.Committed
			s.Committed, from = &c, c
		}
		var want int64
		switch target.Kind {
		case Earliest:
			want = pt.Start
		case Latest:
			want = pt.End
		case Offset:
			want = target.Offset
		case Time:
			want = pt.AtTime
		case Shift:
			want = from + target.Shift
		case CommitAt, Undo:
			want = target.Commits[pt.Topic][pt.Partition]
		}
		s.New = want
		switch {
		case want < pt.Start:
			s.New, s.ClampedTo, s.Clamped = pt.Start, "log_start", fmt.Sprintf("%d is before the log start: clamped to %d", want, pt.Start)
		case want > pt.End:
			s.New, s.ClampedTo, s.Clamped = pt.End, "log_end", fmt.Sprintf("%d is past the log end: clamped to %d", want, pt.End)
		}
		// A commit outside the partition's bounds (records deleted since) reads from the
		// nearer bound, so the counts start there.
		from = min(max(from, pt.Start), pt.End)
		if s.New < from {
			s.Reread = from - s.New
		} else {
			s.Skip = s.New - from
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

// Summary is the plan in one sentence, and under "summary" in JSON and YAML. JSON field names
// are an interface.
type Summary struct {
	Group      string `json:"group"`
	Target     string `json:"target"`
	Partitions int    `json:"partitions"`
	// Moved counts the partitions whose new offset differs from the commit (or that have none).
	Moved   int   `json:"moved"`
	Reread  int64 `json:"reread"`
	Skip    int64 `json:"skip"`
	Clamped int   `json:"clamped"`
	// Done says the offsets were committed; false for a dry run.
	Done bool `json:"done"`
}

// Summary totals the plan.
func (p Plan) Summary() Summary {
	s := Summary{Group: p.Group, Target: p.Target.String(), Partitions: len(p.Steps)}
	for _, st := range p.Steps {
		if st.Committed == nil || *st.Committed != st.New {
			s.Moved++
		}
		s.Reread += st.Reread
		s.Skip += st.Skip
		if st.Clamped != "" {
			s.Clamped++
		}
	}
	return s
}

func (s Summary) String() string {
	verb := "would move"
	if s.Done {
		verb = "moved"
	}
	out := fmt.Sprintf("group %s %s %d of %d partition(s) to %s: %d record(s) to read again, %d to skip",
		s.Group, verb, s.Moved, s.Partitions, s.Target, s.Reread, s.Skip)
	if s.Clamped > 0 {
		out += fmt.Sprintf("; %d partition(s) clamped to the log's bounds", s.Clamped)
	}
	return out
}
