package testlog

import (
	"context"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// Env is an embedded store on a temporary directory holding an empty coordinator log of the
// stream "kafka", a client to it, and a base time for the records a test writes.
type Env struct {
	*Log
	Client *iggy.Client
	Ctx    context.Context
	Base   time.Time
}

// Start starts the store and creates the log; everything ends with t.
func Start(t testing.TB) *Env {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{PoolSize: 2, Dial: func(ctx context.Context, _ string) (net.Conn, error) { return srv.Dial(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Env{Log: Create(ctx, t, c, "kafka"), Client: c, Ctx: ctx, Base: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
}

// At is sec seconds after Base.
func (e *Env) At(sec int) time.Time { return e.Base.Add(time.Duration(sec) * time.Second) }

// Claim is claim number n of node, at a given time, with the node's address localhost:(9091+node).
func Claim(n uint64, node int32, at time.Time) record.Record {
	return record.Record{Type: record.TypeClaim, Claim: n, Time: at, ClaimInfo: &record.Claim{Number: n, Node: node, Addr: "localhost:" + strconv.Itoa(9091+int(node))}}
}

// Commit is an offset commit written under claim claimNo.
func Commit(claimNo uint64, group, topic string, p int32, off int64, at time.Time) record.Record {
	return record.Record{Type: record.TypeOffsetCommit, Claim: claimNo, Time: at, OffsetCommit: &record.OffsetCommit{Group: group, Topic: topic, Partition: p, Offset: off, LeaderEpoch: -1}}
}

// Assignment is a consumer protocol assignment of partitions of one topic.
func Assignment(topic string, parts ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: topic, Partitions: parts})
	return a.AppendTo(nil)
}

// GroupSnap is a stable classic group's snapshot at generation gen, with two members (one
// static) assigned partitions of "orders".
func GroupSnap(claimNo uint64, name string, gen int32, at time.Time) record.Record {
	return record.Record{Type: record.TypeGroup, Claim: claimNo, Time: at, Group: &record.Group{
		Name: name, Generation: gen, ProtocolType: "consumer", Protocol: "range", Leader: "m-1", State: "Stable",
		Members: []record.Member{
			{MemberID: "m-1", ClientID: "worker-a", ClientHost: "/10.0.0.1", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range", Metadata: []byte{0, 1}}}, Assignment: Assignment("orders", 0, 1)},
			{MemberID: "m-2", InstanceID: "static-b", ClientID: "worker-b", ClientHost: "/10.0.0.2", SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute, Protocols: []record.Protocol{{Name: "range", Metadata: []byte{0, 1}}}, Assignment: Assignment("orders", 2)},
		},
	}}
}

// GroupIn finds a group name that lands in log partition p.
func GroupIn(p int, prefix string) string {
	for i := 0; ; i++ {
		g := prefix + "-" + strconv.Itoa(i)
		if record.Partition(g) == p {
			return g
		}
	}
}

// Announcement is node's announcement at second sec after the Env's base time (2026-12-01
// 09:00:00 UTC), listing partitions under claim 1.
func Announcement(node int32, addr string, sec int, parts ...int) fleet.Announcement {
	a := fleet.Announcement{Node: node, Addr: addr, Time: time.Date(2026, 12, 1, 9, 0, sec, 0, time.UTC), Claims: map[int]uint64{}}
	for _, p := range parts {
		a.Claims[p] = 1
	}
	return a
}

// BenchRecords is the size of a benchmark's log: IGGY_INSPECT_BENCH_RECORDS, default 100,000
// (docs/performance.md's figures use 1,000,000).
func BenchRecords(b *testing.B) int {
	if s := os.Getenv("IGGY_INSPECT_BENCH_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 100_000
}

// Fill fills partition 0 with a claim then n-1 offset commits of varied groups, topics,
// partitions and offsets (not one record repeated), in batches of 1,000 messages.
func (e *Env) Fill(tb testing.TB, n int) {
	e.Put(0, Claim(1, 1, e.At(0)))
	msgs := make([]iggy.Message, 0, 1000)
	for i := 1; i < n; i++ {
		r := Commit(1, "group-"+strconv.Itoa(i%997), "topic-"+strconv.Itoa(i%13), int32(i%64), int64(i*7+i%31), e.Base.Add(time.Duration(i)*time.Millisecond))
		p, err := record.Encode(r)
		if err != nil {
			tb.Fatal(err)
		}
		msgs = append(msgs, iggy.Message{Payload: p})
		if len(msgs) == cap(msgs) || i == n-1 {
			e.PutRaw(0, msgs...)
			msgs = msgs[:0]
		}
	}
}
