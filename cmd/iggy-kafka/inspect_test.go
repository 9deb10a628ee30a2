package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// inspect --verify ends with its verdict in every format: the records it read and the findings,
// none on a clean log, one after a fenced owner writes on.
func TestInspectVerifyVerdict(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, f := range []string{"text", "json", "yaml"} {
		code, out, stderr := runCLI(t, env, "inspect", "--verify", "-o", f)
		if code != exitOK || stderr != "" {
			t.Fatalf("clean verify -o %s: exit %d stderr %q", f, code, stderr)
		}
		golden.Assert(t, "verify.clean."+f, []byte(out))
	}
	at := time.Date(2026, 12, 1, 9, 1, 0, 0, time.UTC)
	put(2, record.Record{Type: record.TypeClaim, Claim: 2, Time: at, ClaimInfo: &record.Claim{Number: 2, Node: 1, Addr: "localhost:9091"}})
	put(2, record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at, OffsetCommit: &record.OffsetCommit{Group: "g", Topic: "t", Partition: 2, Offset: 9, LeaderEpoch: -1}})
	for _, f := range []string{"text", "json", "yaml"} {
		code, out, stderr := runCLI(t, env, "inspect", "--verify", "-o", f)
		if code != exitFailed || !strings.Contains(stderr, "1 finding(s)") {
			t.Fatalf("verify -o %s with a void record: exit %d stderr %q", f, code, stderr)
		}
		golden.Assert(t, "verify.findings."+f, []byte(out))
	}
	// --group verifies the group's partition alone: another partition is clean.
	g := "g"
	for i := 0; record.Partition(g) == 2; i++ {
		g = "g" + strconv.Itoa(i)
	}
	code, out, _ := runCLI(t, env, "inspect", "--verify", "--group", g)
	if code != exitOK || !strings.HasSuffix(out, "\n2 records, 0 findings\n") {
		t.Fatalf("verify --group %s: exit %d\n%s", g, code, out)
	}
}

// everyRecordStore is a store whose coordinator log partition 4 holds one record of every type,
// a void one and one that does not decode.
func everyRecordStore(t *testing.T) string {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	log := testlog.Create(ctx, t, c, "kafka")
	at := func(s int) time.Time { return time.Date(2026, 12, 1, 9, 0, s, 0, time.UTC) }
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{0, 1}}}
	group := &record.Group{Name: "orders", Generation: 3, ProtocolType: "consumer", Protocol: "range", Leader: "m-1", State: "Stable", Members: []record.Member{
		{MemberID: "m-1", ClientID: "worker-a", ClientHost: "/10.0.0.1", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range"}}, Assignment: a.AppendTo(nil)},
		{MemberID: "m-2", InstanceID: "static-b", ClientID: "worker-b", ClientHost: "/10.0.0.2", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range"}}},
	}}
	commit := record.OffsetCommit{Group: "orders", Topic: "orders", Partition: 1, Offset: 42, LeaderEpoch: 7, Metadata: "by worker-a", Expire: at(0).Add(7 * 24 * time.Hour)}
	log.Put(4,
		record.Record{Type: record.TypeClaim, Claim: 1, Time: at(0), ClaimInfo: &record.Claim{Number: 1, Node: 2, Addr: "localhost:9092"}},
		record.Record{Type: record.TypeGroup, Claim: 1, Time: at(1), Group: group},
		record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at(2), OffsetCommit: &commit},
		record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at(3), OffsetCommit: &record.OffsetCommit{Group: "gone", Topic: "t", Partition: 0, Offset: 1, LeaderEpoch: -1}},
		record.Record{Type: record.TypeOffsetDeleted, Claim: 1, Time: at(4), OffsetDeleted: &record.OffsetDeleted{Group: "gone", Topic: "t", Partition: 0}},
		record.Record{Type: record.TypeGroupDeleted, Claim: 1, Time: at(5), GroupDeleted: &record.GroupDeleted{Group: "gone"}},
		record.Record{Type: record.TypeCheckpoint, Claim: 1, Time: at(6), Checkpoint: &record.Checkpoint{Through: 5, Groups: []record.Group{*group}, Offsets: []record.OffsetCommit{commit}}},
		record.Record{Type: record.TypeClaim, Claim: 2, Time: at(7), ClaimInfo: &record.Claim{Number: 2, Node: 3, Addr: "localhost:9093"}},
		record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at(8), OffsetCommit: &record.OffsetCommit{Group: "orders", Topic: "orders", Partition: 0, Offset: 99, LeaderEpoch: -1}},
	)
	log.PutRaw(4, iggy.Message{Payload: []byte{record.Version, 2}})
	return srv.Addr
}

// inspect -o json and yaml give each record's fields as an object of its type's fields, and an
// undecodable record's error; the text keeps its key=value column.
func TestInspectRecordFields(t *testing.T) {
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + everyRecordStore(t), "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, f := range []string{"text", "json", "yaml"} {
		code, out, stderr := runCLI(t, env, "inspect", "--partition", "4", "-o", f)
		if code != exitOK || stderr != "" {
			t.Fatalf("inspect -o %s: exit %d stderr %q", f, code, stderr)
		}
		golden.Assert(t, "inspect.fields."+f, []byte(out))
		if f != "json" {
			continue
		}
		var doc struct {
			Data []struct {
				Type   string         `json:"type"`
				Fields map[string]any `json:"fields"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Data) != 10 {
			t.Fatalf("inspect -o json: %d rows, %v\n%s", len(doc.Data), err, out)
		}
		for _, r := range doc.Data {
			if r.Fields == nil {
				t.Errorf("%s record: fields are not an object", r.Type)
			}
		}
		if m, ok := doc.Data[1].Fields["members"].([]any); !ok || len(m) != 2 {
			t.Errorf("group record: members %v", doc.Data[1].Fields["members"])
		}
	}
}

// inspect --follow starts at the end of the log, as tail -f does: it prints only the records
// appended after it has read the log.
func TestInspectFollowStartsAtTheEnd(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caught := make(chan struct{}, 1)
	followCaughtUp = func() {
		select {
		case caught <- struct{}{}:
		default:
		}
	}
	defer func() { followCaughtUp = nil }()
	var out, errs syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"inspect", "--follow", "--partition", "6"}, env, &out, &errs) }()
	select {
	case <-caught:
	case c := <-code:
		t.Fatalf("inspect --follow exited %d: %s", c, errs.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("inspect --follow did not catch up: %s", errs.String())
	}
	at := time.Date(2026, 12, 1, 9, 2, 0, 0, time.UTC)
	put(6, record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: at, OffsetCommit: &record.OffsetCommit{Group: "g", Topic: "t", Partition: 6, Offset: 9, LeaderEpoch: -1}})
	checkfor.Eventually(t, 10*time.Second, "the appended record", func() error {
		if n := strings.Count(out.String(), "\n"); n < 2 {
			return errors.New("follow output: " + out.String() + errs.String())
		}
		return nil
	})
	cancel()
	if c := <-code; c != exitOK {
		t.Fatalf("exit %d: %s", c, errs.String())
	}
	golden.Assert(t, "inspect.follow.text", []byte(out.String()))

	// A --from that is not a position is a usage error, and --verify takes none.
	for _, args := range [][]string{{"inspect", "--from", "latest"}, {"inspect", "--verify", "--from", "beginning"}} {
		if c, _, stderr := runCLI(t, env, args...); c != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, c, exitUsage, stderr)
		}
	}
}
