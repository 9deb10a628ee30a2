package inspect_test

import (
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
)

func TestClaimRowFlags(t *testing.T) {
	cases := []struct {
		name       string
		owner      int32 // 0: unclaimed
		addr       string
		members    []uint32
		announced  map[int32]fleet.Announcement
		want       []string
		cells      map[int]string // column index -> text
	}{
		{"unowned", 0, "", nil, nil, []string{inspect.FlagUnowned}, map[int]string{1: ""}},
		{"agrees", 1, "h:1", []uint32{7}, map[int32]fleet.Announcement{1: member(ann(1, "h:1", 55, 0), 7)}, []string{}, map[int]string{1: "1*", 11: "5s", 12: "1"}},
		{"assignment differs", 1, "h:1", []uint32{8}, map[int32]fleet.Announcement{1: ann(1, "h:1", 55, 0), 2: member(ann(2, "h:2", 55, 1, 2), 8)}, []string{inspect.FlagAssignmentDiffers}, map[int]string{12: "2"}},
		{"not announced", 3, "h:3", nil, map[int32]fleet.Announcement{1: ann(1, "h:1", 55, 0)}, []string{inspect.FlagNotAnnounced, inspect.FlagOwnersDiffer}, map[int]string{11: ""}},
		{"announced by another", 1, "h:1", nil, map[int32]fleet.Announcement{1: ann(1, "h:1", 55), 2: ann(2, "h:2", 55, 0)}, []string{inspect.FlagOwnersDiffer}, nil},
		{"address differs", 1, "h:1", nil, map[int32]fleet.Announcement{1: ann(1, "h:9", 55, 0)}, []string{inspect.FlagAddrDiffers}, nil},
		{"stale and leaving", 1, "h:1", nil, map[int32]fleet.Announcement{1: leaving(ann(1, "h:1", 30, 0))}, []string{inspect.FlagStale, inspect.FlagLeaving}, map[int]string{11: "30s"}},
		{"unassigned", 1, "h:1", []uint32{}, nil, []string{inspect.FlagUnassigned}, map[int]string{12: ""}},
		{"unknown member", 1, "h:1", []uint32{9}, nil, []string{}, map[int]string{12: "member 9"}},
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := inspect.NewModel()
			if c.owner != 0 {
				e := inspect.Entry{Partition: 0, Record: record.Record{Type: record.TypeClaim, Claim: 1, Time: at, ClaimInfo: &record.Claim{Number: 1, Node: c.owner, Addr: c.addr}}}
				f.Parts[0].Apply(&e)
				e = inspect.Entry{Partition: 0, Offset: 1, Record: commit(1, "g", "t", 0, 1, at.Add(time.Second))}
				f.Parts[0].Apply(&e)
			}
			f.Members = c.members
			for _, a := range c.announced {
				f.View.Announce(a)
			}
			row := f.Rows(at.Add(time.Minute))[0]
			if !slices.Equal(row.Flags, c.want) {
				t.Fatalf("flags %v, want %v", row.Flags, c.want)
			}
			cells := row.Cells()
			for i, want := range c.cells {
				if cells[i] != want {
					t.Errorf("column %s = %q, want %q", row.Columns()[i], cells[i], want)
				}
			}
		})
	}
}

func TestRecordRowJSONMatchesEncodingJSON(t *testing.T) {
	rows := []inspect.RecordRow{
		{Partition: 3, Offset: 9, Time: time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC), Claim: 2, Valid: true, Type: "offset-commit", Group: "g<&>\"\\\n\x01é\u2028", Fields: "topic=t"},
		{Partition: 0, Offset: 1, Type: "undecodable", Error: "bad\tbyte \xff"},
	}
	for _, r := range rows {
		want, err := jsonMarshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON\n%s\nencoding/json\n%s", got, want)
		}
	}
}

// ann is node's announcement at second sec of the test minute, listing partitions under claim 1.
func ann(node int32, addr string, sec int, parts ...int) fleet.Announcement {
	a := fleet.Announcement{Node: node, Addr: addr, Time: time.Date(2026, 12, 1, 9, 0, sec, 0, time.UTC), Claims: map[int]uint64{}}
	for _, p := range parts {
		a.Claims[p] = 1
	}
	return a
}

func member(a fleet.Announcement, m uint32) fleet.Announcement {
	a.Member, a.HasMember = m, true
	return a
}

func leaving(a fleet.Announcement) fleet.Announcement { a.Leaving = true; return a }
