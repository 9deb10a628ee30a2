package inspect_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// Every record type's row: its fields as an object (keys by hand, not from the code under
// test), its text unchanged, and AppendJSON writing what encoding/json writes.
func TestRecordRowFields(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 123456789, time.UTC)
	expire := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	g := testlog.GroupSnap(4, "g<&>", 3, at)
	cp := record.Checkpoint{Through: 8, Groups: []record.Group{*g.Group}, Offsets: []record.OffsetCommit{{Group: "g", Topic: "t"}, {Group: "g", Topic: "u"}}}
	meta := testlog.Commit(4, "g", "t\"\n\x01é\u2028", 2, 40, at)
	meta.OffsetCommit.Metadata, meta.OffsetCommit.Expire = "by worker-a", expire
	cases := []struct {
		name       string
		entry      logread.Entry
		text, json string
	}{
		{"claim", logread.Entry{Record: testlog.Claim(4, 2, at)},
			`number=4 node=2 addr=localhost:9093`,
			`{"number":4,"node":2,"addr":"localhost:9093"}`},
		{"group", logread.Entry{Record: g},
			`generation=3 state=Stable protocol_type=consumer protocol=range leader=m-1 members=2`,
			`{"generation":3,"state":"Stable","protocol_type":"consumer","protocol":"range","leader":"m-1","members":[` +
				`{"member_id":"m-1","client_id":"worker-a","client_host":"/10.0.0.1","session_timeout_ms":45000,"rebalance_timeout_ms":60000,"assignment":"orders[0,1]"},` +
				`{"member_id":"m-2","instance_id":"static-b","client_id":"worker-b","client_host":"/10.0.0.2","session_timeout_ms":45000,"rebalance_timeout_ms":60000,"assignment":"orders[2]"}]}`},
		{"offset commit", logread.Entry{Record: testlog.Commit(4, "g", "t", 2, 40, at)},
			`topic=t partition=2 offset=40 leader_epoch=-1`,
			`{"topic":"t","partition":2,"offset":40,"leader_epoch":-1,"metadata":"","expire":null}`},
		{"offset commit with metadata", logread.Entry{Record: meta},
			`topic="t\"\n\x01é\u2028" partition=2 offset=40 leader_epoch=-1 metadata="by worker-a" expire=2026-12-08T09:00:00Z`,
			`{"topic":"t\"\n\u0001é\u2028","partition":2,"offset":40,"leader_epoch":-1,"metadata":"by worker-a","expire":"2026-12-08T09:00:00Z"}`},
		{"group deleted", logread.Entry{Record: record.Record{Type: record.TypeGroupDeleted, Claim: 4, Time: at, GroupDeleted: &record.GroupDeleted{Group: "g"}}},
			``, `{}`},
		{"offset deleted", logread.Entry{Record: record.Record{Type: record.TypeOffsetDeleted, Claim: 4, Time: at, OffsetDeleted: &record.OffsetDeleted{Group: "g", Topic: "t", Partition: 7}}},
			`topic=t partition=7`, `{"topic":"t","partition":7}`},
		{"checkpoint", logread.Entry{Record: record.Record{Type: record.TypeCheckpoint, Claim: 4, Time: at, Checkpoint: &cp}},
			`through=8 groups=1 offsets=2`, `{"through":8,"groups":1,"offsets":2,"consumer_groups":0,"transactions":0}`},
		{"transaction", logread.Entry{Record: record.Record{Type: record.TypeTransaction, Claim: 4, Time: at, Transaction: &record.Transaction{
			ID: "etl-1", ProducerID: 4001, Epoch: 3, Timeout: 10 * time.Second, State: record.TxnPrepareCommit,
			Partitions: []record.TxnTopic{{Topic: "out", Partitions: []int32{0, 2}}}, Groups: []string{"etl"}, Started: at, Updated: at}}},
			`transactional_id=etl-1 producer_id=4001 epoch=3 state=PrepareCommit timeout_ms=10000 partitions=2 groups=1`,
			`{"transactional_id":"etl-1","producer_id":4001,"epoch":3,"state":"PrepareCommit","timeout_ms":10000,` +
				`"partitions":[{"topic":"out","partitions":[0,2]}],"groups":["etl"],"started":"2026-12-01T09:00:00.123456789Z","updated":"2026-12-01T09:00:00.123456789Z"}`},
		{"undecodable", logread.Entry{Err: errors.New("record: bad\tbyte \xff")},
			`error="record: bad\tbyte \xff"`, `{"error":"record: bad\tbyte \ufffd"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := inspect.NewRecordRow(&c.entry, true)
			if got := row.Fields.String(); got != c.text {
				t.Errorf("text %s, want %s", got, c.text)
			}
			if got := row.Cells()[7]; got != c.text && !(c.text == "" && got == "") {
				t.Errorf("FIELDS cell %q, want %q", got, c.text)
			}
			if got := string(row.Fields.AppendJSON(nil)); got != c.json {
				t.Errorf("json\n%s\nwant\n%s", got, c.json)
			}
			want, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			if got := row.AppendJSON(nil); string(got) != string(want) {
				t.Errorf("AppendJSON\n%s\nencoding/json\n%s", got, want)
			}
			var doc struct {
				Fields map[string]any `json:"fields"`
			}
			if err := json.Unmarshal(want, &doc); err != nil || doc.Fields == nil {
				t.Fatalf("row %s: fields are not an object: %v", want, err)
			}
		})
	}
}
