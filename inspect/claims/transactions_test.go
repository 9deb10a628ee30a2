package claims_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
)

// claims --transactions lists the open transactions of every partition with the node of the
// partition's newest claim, how long each has run, and leaves out ids with none open.
func TestTransactionRows(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	m := claims.NewModel()
	apply := func(p int, off uint64, r record.Record) {
		t.Helper()
		if !m.Parts[p].State.Apply(off, r) {
			t.Fatalf("record %d of partition %d void", off, p)
		}
	}
	open := record.Transaction{ID: "etl", ProducerID: 7, Epoch: 2, Timeout: 10 * time.Second, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "out", Partitions: []int32{0, 2}}, {Topic: "totals", Partitions: []int32{1}}},
		Groups:     []string{"etl-group"}, Started: at.Add(-4 * time.Second), Updated: at}
	done := record.Transaction{ID: "idle", ProducerID: 8, Timeout: time.Minute, State: record.TxnCompleteCommit, Updated: at}
	p, q := record.Partition(open.ID), record.Partition(done.ID)
	apply(p, 0, record.Record{Type: record.TypeClaim, Claim: 3, ClaimInfo: &record.Claim{Number: 3, Node: 2}})
	apply(p, 1, record.Record{Type: record.TypeTransaction, Claim: 3, Transaction: &open})
	if q != p {
		apply(q, 0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1}})
	}
	apply(q, 5, record.Record{Type: record.TypeTransaction, Claim: map[bool]uint64{true: 3, false: 1}[q == p], Transaction: &done})

	rows := m.Transactions(at, true)
	if len(rows) != 1 {
		t.Fatalf("rows %+v", rows)
	}
	want := []string{"etl", strconv.Itoa(p), "2", "Ongoing", "7", "2", "10s", "4s", "-", "out[0,2] totals[1]", "etl-group"}
	if got := rows[0].Cells(); !slices.Equal(got, want) {
		t.Fatalf("cells %q, want %q", got, want)
	}
	j, err := json.Marshal(rows[0])
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"transactional_id":"etl","partition":` + strconv.Itoa(p) + `,"coordinator":2,"state":"Ongoing","producer_id":7,"epoch":2,` +
		`"timeout_ms":10000,"age_seconds":4,"hanging":false,"partitions":"out[0,2] totals[1]","groups":["etl-group"]}`
	if string(j) != wantJSON {
		t.Fatalf("json %s, want %s", j, wantJSON)
	}
	if all := m.Transactions(at, false); len(all) != 2 || all[1].TransactionalID != "idle" || all[1].AgeSeconds != nil || all[1].Cells()[7] != "-" {
		t.Fatalf("every id: %+v", all)
	}

	// It hangs once it has run past its timeout (10 s), or past HangingAfter whatever its
	// timeout; an id with no open transaction never hangs.
	for i, c := range []struct {
		at      time.Time
		timeout time.Duration
		want    bool
	}{
		{at.Add(6 * time.Second), 10 * time.Second, false},
		{at.Add(6*time.Second + time.Millisecond), 10 * time.Second, true},
		{at.Add(claims.HangingAfter - 4*time.Second), time.Hour, false},
		{at.Add(claims.HangingAfter - 4*time.Second + time.Millisecond), time.Hour, true},
	} {
		long := open
		long.Timeout = c.timeout
		apply(p, uint64(2+i), record.Record{Type: record.TypeTransaction, Claim: 3, Transaction: &long})
		rows := m.Transactions(c.at, true)
		if len(rows) != 1 || rows[0].Hanging != c.want || (rows[0].Cells()[8] == "yes") != c.want {
			t.Errorf("at %v with timeout %v: hanging %v, want %v (%q)", c.at.Sub(at), c.timeout, rows[0].Hanging, c.want, rows[0].Cells())
		}
	}
	done.Started = at.Add(-time.Hour)
	apply(q, 10, record.Record{Type: record.TypeTransaction, Claim: map[bool]uint64{true: 3, false: 1}[q == p], Transaction: &done})
	for _, r := range m.Transactions(at, false) {
		if r.TransactionalID == "idle" && r.Hanging {
			t.Errorf("a completed transaction hangs: %+v", r)
		}
	}
}
