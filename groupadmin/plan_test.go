package groupadmin_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/groupadmin"
)

func ptr(n int64) *int64 { return &n }

func TestBuildPlan(t *testing.T) {
	// One partition committed at 30 of [10, 50); one without a commit; one whose commit lies
	// before its start (records deleted since).
	parts := []groupadmin.Partition{
		{Topic: "orders", Partition: 0, Committed: 30, Start: 10, End: 50, AtTime: 42},
		{Topic: "orders", Partition: 1, Committed: -1, Start: 5, End: 20, AtTime: 20},
		{Topic: "orders", Partition: 2, Committed: 3, Start: 8, End: 9, AtTime: 8},
	}
	at := time.Date(2026, 12, 1, 14, 2, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		target groupadmin.Target
		want   []groupadmin.Step
		sum    string
	}{
		{"earliest", groupadmin.Target{Kind: groupadmin.Earliest}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 10, Reread: 20},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 5},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 8},
		}, "group g would move 3 of 3 partition(s) to the log start: 20 record(s) to read again, 0 to skip"},
		{"latest", groupadmin.Target{Kind: groupadmin.Latest}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 50, Skip: 20},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 20, Skip: 15},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 9, Skip: 1},
		}, "group g would move 3 of 3 partition(s) to the log end: 0 record(s) to read again, 36 to skip"},
		{"offset inside, past the end, and before the start", groupadmin.Target{Kind: groupadmin.Offset, Offset: 12}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 12, Reread: 18},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 12, Skip: 7},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 9, Skip: 1, ClampedTo: "log_end", Clamped: "12 is past the log end: clamped to 9"},
		}, "group g would move 3 of 3 partition(s) to offset 12: 18 record(s) to read again, 8 to skip; 1 partition(s) clamped to the log's bounds"},
		{"time", groupadmin.Target{Kind: groupadmin.Time, Time: at}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 42, Skip: 12},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 20, Skip: 15},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 8},
		}, "group g would move 3 of 3 partition(s) to the first record at or after 2026-12-01T14:02:00Z: 0 record(s) to read again, 27 to skip"},
		{"shift back past the start", groupadmin.Target{Kind: groupadmin.Shift, Shift: -25}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 10, Reread: 20, ClampedTo: "log_start", Clamped: "5 is before the log start: clamped to 10"},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 5, ClampedTo: "log_start", Clamped: "-20 is before the log start: clamped to 5"},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 8, ClampedTo: "log_start", Clamped: "-22 is before the log start: clamped to 8"},
		}, "group g would move 3 of 3 partition(s) to a shift of -25: 20 record(s) to read again, 0 to skip; 3 partition(s) clamped to the log's bounds"},
		{"shift forward", groupadmin.Target{Kind: groupadmin.Shift, Shift: 4}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 34, Skip: 4},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 9, Skip: 4},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 8, ClampedTo: "log_start", Clamped: "7 is before the log start: clamped to 8"},
		}, "group g would move 3 of 3 partition(s) to a shift of +4: 0 record(s) to read again, 8 to skip; 1 partition(s) clamped to the log's bounds"},
		{"commit at a time: records deleted since are clamped", groupadmin.Target{Kind: groupadmin.CommitAt, Time: at, Commits: map[string]map[int32]int64{"orders": {0: 12, 1: 30, 2: 4}}}, []groupadmin.Step{
			{Topic: "orders", Partition: 0, Committed: ptr(30), LogStart: 10, LogEnd: 50, New: 12, Reread: 18},
			{Topic: "orders", Partition: 1, LogStart: 5, LogEnd: 20, New: 20, Skip: 15, ClampedTo: "log_end", Clamped: "30 is past the log end: clamped to 20"},
			{Topic: "orders", Partition: 2, Committed: ptr(3), LogStart: 8, LogEnd: 9, New: 8, ClampedTo: "log_start", Clamped: "4 is before the log start: clamped to 8"},
		}, "group g would move 3 of 3 partition(s) to the offsets committed at 2026-12-01T14:02:00Z: 18 record(s) to read again, 15 to skip; 2 partition(s) clamped to the log's bounds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := groupadmin.BuildPlan("g", tc.target, parts)
			if !reflect.DeepEqual(p.Steps, tc.want) {
				t.Fatalf("steps\n%+v\nwant\n%+v", p.Steps, tc.want)
			}
			if s := p.Summary().String(); s != tc.sum {
				t.Fatalf("summary %q\nwant    %q", s, tc.sum)
			}
		})
	}
}

// A partition already at its target does not count as moved.
func TestSummaryCountsMovedPartitions(t *testing.T) {
	p := groupadmin.BuildPlan("g", groupadmin.Target{Kind: groupadmin.Offset, Offset: 7}, []groupadmin.Partition{
		{Topic: "a", Partition: 0, Committed: 7, Start: 0, End: 10},
		{Topic: "a", Partition: 1, Committed: 2, Start: 0, End: 10},
	})
	s := p.Summary()
	if s.Moved != 1 || s.Partitions != 2 || s.Skip != 5 || s.Reread != 0 {
		t.Fatalf("summary %+v", s)
	}
	s.Done = true
	if got := s.String(); got != "group g moved 1 of 2 partition(s) to offset 7: 0 record(s) to read again, 5 to skip" {
		t.Fatalf("done: %q", got)
	}
}

func TestParseTopics(t *testing.T) {
	got, err := groupadmin.ParseTopics([]string{"orders", "audit:2,0,2"})
	want := []groupadmin.Topics{{Topic: "orders"}, {Topic: "audit", Partitions: []int32{2, 0}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	for _, bad := range []string{":1", "t:x", "t:-1", "t:"} {
		if _, err := groupadmin.ParseTopics([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, value string
		want        groupadmin.Target
		err         string
	}{
		{"to", "earliest", groupadmin.Target{Kind: groupadmin.Earliest}, ""},
		{"to", "latest", groupadmin.Target{Kind: groupadmin.Latest}, ""},
		{"to", "first", groupadmin.Target{}, `to "first": want earliest or latest`},
		{"to-offset", "42", groupadmin.Target{Kind: groupadmin.Offset, Offset: 42}, ""},
		{"to-offset", "-1", groupadmin.Target{}, `to-offset "-1": an offset is a number, 0 or more`},
		{"shift", "-100", groupadmin.Target{Kind: groupadmin.Shift, Shift: -100}, ""},
		{"shift", "back", groupadmin.Target{}, `shift "back": a shift is a number of records`},
		{"to-time", "1h", groupadmin.Target{Kind: groupadmin.Time, Time: now.Add(-time.Hour)}, ""},
		{"to-time", "2026-12-01T14:02:00Z", groupadmin.Target{Kind: groupadmin.Time, Time: time.Date(2026, 12, 1, 14, 2, 0, 0, time.UTC)}, ""},
		{"to-time", "7", groupadmin.Target{}, `to-time "7" is neither an RFC 3339 time nor a duration ago`},
		{"to-time", "2026-12-01T16:00:00Z", groupadmin.Target{}, "to-time 2026-12-01T16:00:00Z is in the future"},
		{"to-commit-at", "90m", groupadmin.Target{Kind: groupadmin.CommitAt, Time: now.Add(-90 * time.Minute)}, ""},
		{"undo", "", groupadmin.Target{Kind: groupadmin.Undo}, ""},
		{"undo", "x", groupadmin.Target{}, `undo takes no value`},
		{"rewind", "1", groupadmin.Target{}, `"rewind" is not a target`},
	} {
		got, err := groupadmin.ParseTarget(tc.name, tc.value, now)
		switch {
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("%s %q: error %v, want %q", tc.name, tc.value, err, tc.err)
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%s %q: %+v %v, want %+v", tc.name, tc.value, got, err, tc.want)
		}
	}
}
