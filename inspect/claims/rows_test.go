package claims_test

import (
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func TestClaimRowFlags(t *testing.T) {
	cases := []struct {
		name      string
		owner     int32 // 0: unclaimed
		addr      string
		members   []uint32
		announced map[int32]fleet.Announcement
		want      []string
		cells     map[int]string // column index -> text
	}{
		{"unowned", 0, "", nil, nil, []string{claims.FlagUnowned}, map[int]string{1: ""}},
		{"agrees", 1, "h:1", []uint32{7}, map[int32]fleet.Announcement{1: member(testlog.Announcement(1, "h:1", 55, 0), 7)}, []string{}, map[int]string{1: "1*", 11: "5s", 12: "1"}},
		{"assignment differs", 1, "h:1", []uint32{8}, map[int32]fleet.Announcement{1: testlog.Announcement(1, "h:1", 55, 0), 2: member(testlog.Announcement(2, "h:2", 55, 1, 2), 8)}, []string{claims.FlagAssignmentDiffers}, map[int]string{12: "2"}},
		{"not announced", 3, "h:3", nil, map[int32]fleet.Announcement{1: testlog.Announcement(1, "h:1", 55, 0)}, []string{claims.FlagNotAnnounced, claims.FlagOwnersDiffer}, map[int]string{11: ""}},
		{"announced by another", 1, "h:1", nil, map[int32]fleet.Announcement{1: testlog.Announcement(1, "h:1", 55), 2: testlog.Announcement(2, "h:2", 55, 0)}, []string{claims.FlagOwnersDiffer}, nil},
		{"address differs", 1, "h:1", nil, map[int32]fleet.Announcement{1: testlog.Announcement(1, "h:9", 55, 0)}, []string{claims.FlagAddrDiffers}, nil},
		{"stale and leaving", 1, "h:1", nil, map[int32]fleet.Announcement{1: leaving(testlog.Announcement(1, "h:1", 30, 0))}, []string{claims.FlagStale, claims.FlagLeaving}, map[int]string{11: "30s"}},
		{"unassigned", 1, "h:1", []uint32{}, nil, []string{claims.FlagUnassigned}, map[int]string{12: ""}},
		// A member no live gateway announces (one Iggy kept after a restart) holds no lease.
		{"unknown member", 1, "h:1", []uint32{9}, nil, []string{claims.FlagUnassigned}, map[int]string{12: ""}},
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := claims.NewModel()
			if c.owner != 0 {
				e := logread.Entry{Partition: 0, Record: record.Record{Type: record.TypeClaim, Claim: 1, Time: at, ClaimInfo: &record.Claim{Number: 1, Node: c.owner, Addr: c.addr}}}
				f.Parts[0].Apply(&e)
				e = logread.Entry{Partition: 0, Offset: 1, Record: testlog.Commit(1, "g", "t", 0, 1, at.Add(time.Second))}
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

func member(a fleet.Announcement, m uint32) fleet.Announcement {
	a.Member, a.HasMember = m, true
	return a
}

func leaving(a fleet.Announcement) fleet.Announcement { a.Leaving = true; return a }
