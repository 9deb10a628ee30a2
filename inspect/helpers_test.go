package inspect_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// logEnv is a real store on a temporary directory holding an empty coordinator log, and a client
// to write records into it the way gateways do: record.Encode, one record per message.
type logEnv struct {
	*testlog.Log
	t    testing.TB
	ctx  context.Context
	log  *logread.Log
	base time.Time
}

func newLogEnv(t testing.TB) *logEnv {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{PoolSize: 2, Dial: func(ctx context.Context, _ string) (net.Conn, error) { return srv.Dial(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &logEnv{Log: testlog.Create(ctx, t, c, "kafka"), t: t, ctx: ctx, log: logread.NewLog(c, "kafka", nil), base: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
}

func (e *logEnv) at(sec int) time.Time { return e.base.Add(time.Duration(sec) * time.Second) }

func claim(n uint64, node int32, at time.Time) record.Record {
	return record.Record{Type: record.TypeClaim, Claim: n, Time: at, ClaimInfo: &record.Claim{Number: n, Node: node, Addr: "localhost:" + itoa(9091+int(node))}}
}

func commit(claimNo uint64, group, topic string, p int32, off int64, at time.Time) record.Record {
	return record.Record{Type: record.TypeOffsetCommit, Claim: claimNo, Time: at, OffsetCommit: &record.OffsetCommit{Group: group, Topic: topic, Partition: p, Offset: off, LeaderEpoch: -1}}
}

func assignment(topic string, parts ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: topic, Partitions: parts})
	return a.AppendTo(nil)
}

func groupSnap(claimNo uint64, name string, gen int32, at time.Time) record.Record {
	return record.Record{Type: record.TypeGroup, Claim: claimNo, Time: at, Group: &record.Group{
		Name: name, Generation: gen, ProtocolType: "consumer", Protocol: "range", Leader: "m-1", State: "Stable",
		Members: []record.Member{
			{MemberID: "m-1", ClientID: "worker-a", ClientHost: "/10.0.0.1", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range", Metadata: []byte{0, 1}}}, Assignment: assignment("orders", 0, 1)},
			{MemberID: "m-2", InstanceID: "static-b", ClientID: "worker-b", ClientHost: "/10.0.0.2", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range", Metadata: []byte{0, 1}}}, Assignment: assignment("orders", 2)},
		},
	}}
}

func itoa(n int) string {
	b := []byte{}
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// groupIn finds a group name that lands in log partition p.
func groupIn(p int, prefix string) string {
	for i := 0; ; i++ {
		g := prefix + "-" + itoa(i)
		if record.Partition(g) == p {
			return g
		}
	}
}
