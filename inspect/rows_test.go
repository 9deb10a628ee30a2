package inspect_test

import (
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
)

func TestClaimRowFlags(t *testing.T) {
	cases := []struct {
		name       string
		owner      int32 // 0: unclaimed
		addr       string
		assignment map[int]uint32
		announced  map[int32]inspect.Announcement
		want       []string
		cells      map[int]string // column index -> text
	}{
		{"unowned", 0, "", nil, nil, []string{inspect.FlagUnowned}, map[int]string{1: ""}},
		{"agrees", 1, "h:1", map[int]uint32{0: 7}, map[int32]inspect.Announcement{1: {Node: 1, Addr: "h:1", Client: 7}}, []string{}, map[int]string{1: "1*", 12: "1"}},
		{"assignment differs", 1, "h:1", map[int]uint32{0: 8}, map[int32]inspect.Announcement{1: {Node: 1, Addr: "h:1", Client: 7}, 2: {Node: 2, Client: 8}}, []string{inspect.FlagAssignmentDiffers}, map[int]string{12: "2"}},
		{"not announced", 3, "h:3", nil, map[int32]inspect.Announcement{1: {Node: 1}}, []string{inspect.FlagNotAnnounced}, nil},
		{"address differs", 1, "h:1", nil, map[int32]inspect.Announcement{1: {Node: 1, Addr: "h:9"}}, []string{inspect.FlagAddrDiffers}, nil},
		{"unassigned", 1, "h:1", map[int]uint32{1: 7}, nil, []string{inspect.FlagUnassigned}, map[int]string{12: ""}},
		{"unknown client", 1, "h:1", map[int]uint32{0: 9}, nil, []string{}, map[int]string{12: "client 9"}},
		{"draining with lag", 1, "h:1", nil, map[int32]inspect.Announcement{1: {Node: 1, Addr: "h:1", Draining: true, Applied: map[int]uint64{0: 1}}}, []string{inspect.FlagDraining}, map[int]string{11: "1"}},
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := inspect.NewFleet()
			if c.owner != 0 {
				e := inspect.Entry{Partition: 0, Record: record.Record{Type: record.TypeClaim, Claim: 1, Time: at, ClaimInfo: &record.Claim{Number: 1, Node: c.owner, Addr: c.addr}}}
				f.Parts[0].Apply(&e)
				e = inspect.Entry{Partition: 0, Offset: 1, Record: commit(1, "g", "t", 0, 1, at.Add(time.Second))}
				f.Parts[0].Apply(&e)
			}
			if c.assignment != nil {
				f.Assignment = c.assignment
			}
			if c.announced != nil {
				f.Announcements = c.announced
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
