package txn

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// Check answers for __consumer_offsets partition N whether a group of log partition N was added
// to the open transaction (what a group's coordinator verifies a TxnOffsetCommit with), with
// Kafka's codes for a producer that is not the id's current one and for no open transaction.
func TestCheckGroupsTopic(t *testing.T) {
	f := newFixture(t)
	pid, epoch, err := f.m.InitProducerID("etl", 10*time.Second, NoProducer, NoProducer)
	wantCode(t, "init", err, nil)
	lp := int32(record.Partition("g"))
	wantCode(t, "before any add", f.m.Check("etl", pid, epoch, GroupsTopic, lp), kerr.InvalidTxnState)
	wantCode(t, "add group", f.m.AddGroup("etl", pid, epoch, "g"), nil)
	wantCode(t, "the group's log partition", f.m.Check("etl", pid, epoch, GroupsTopic, lp), nil)
	wantCode(t, "another log partition", f.m.Check("etl", pid, epoch, GroupsTopic, (lp+1)%record.Partitions), kerr.InvalidTxnState)
	wantCode(t, "a data partition not added", f.m.Check("etl", pid, epoch, "in", 0), kerr.InvalidTxnState)
	wantCode(t, "another producer id", f.m.Check("etl", pid+1, epoch, GroupsTopic, lp), kerr.InvalidProducerIDMapping)
	wantCode(t, "another epoch", f.m.Check("etl", pid, epoch+1, GroupsTopic, lp), kerr.ProducerFenced)
	wantCode(t, "an unknown id", f.m.Check("nobody", pid, epoch, GroupsTopic, lp), kerr.InvalidProducerIDMapping)
	wantCode(t, "add partition", f.m.AddPartitions("etl", pid, epoch, []record.TxnTopic{{Topic: "in", Partitions: []int32{1}}}), nil)
	wantCode(t, "a data partition added", f.m.Check("etl", pid, epoch, "in", 1), nil)
	wantCode(t, "commit", f.m.EndTxn("etl", pid, epoch, true), nil)
	f.state(t, "etl", record.TxnCompleteCommit)
	wantCode(t, "after the end", f.m.Check("etl", pid, epoch, GroupsTopic, lp), kerr.InvalidTxnState)
}

type storage struct {
	kafka.Storage
	topics map[string]int32
}

func (s storage) Topic(_ context.Context, name string, _ bool) (kafka.TopicInfo, error) {
	n, ok := s.topics[name]
	if !ok {
		return kafka.TopicInfo{}, kerr.UnknownTopicOrPartition
	}
	return kafka.TopicInfo{Name: name, Partitions: n}, nil
}

// The router checks the group and the transaction (here, or at the gateway that coordinates it,
// with AddPartitionsToTxn v4 verify-only) before the group's manager keeps the offsets: each
// partition gets its own code, the transaction's codes follow the version (PRODUCER_FENCED from
// v3), and a transaction coordinator that cannot be asked is COORDINATOR_NOT_AVAILABLE, which
// the client retries.
func TestRouterTxnOffsetCommit(t *testing.T) {
	f := newFixture(t)
	gm := group.NewManager(group.Config{Clock: f.clk})
	t.Cleanup(gm.Close)
	ctx := context.Background()
	id := kafka.Identity{Storage: storage{topics: map[string]int32{"in": 2}}}
	pid, epoch, _ := f.m.InitProducerID("etl", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add group", f.m.AddGroup("etl", pid, epoch, "g"), nil)
	req := func(version int16, pid int64, epoch int16, parts ...kmsg.TxnOffsetCommitRequestTopicPartition) *kmsg.TxnOffsetCommitRequest {
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.Version, r.TransactionalID, r.Group, r.ProducerID, r.ProducerEpoch, r.Generation = version, "etl", "g", pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.Partitions = "in", parts
		r.Topics = append(r.Topics, rt)
		return r
	}
	part := func(p int32, off int64, meta string) kmsg.TxnOffsetCommitRequestTopicPartition {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata, rp.LeaderEpoch = p, off, &meta, 4
		return rp
	}
	codes := func(d Directory, r *kmsg.TxnOffsetCommitRequest) []int16 {
		resp, err := NewRouter(d, nil).TxnOffsetCommit(ctx, id, r)
		if err != nil {
			t.Fatal(err)
		}
		var out []int16
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				out = append(out, rp.ErrorCode)
			}
		}
		return out
	}
	both := oneManager{m: f.m, g: gm}
	big := strings.Repeat("x", maxMetadata+1)
	if got := codes(both, req(3, pid, epoch, part(0, 5, ""), part(7, 1, ""), part(1, 2, big))); !reflect.DeepEqual(got, []int16{0, kerr.UnknownTopicOrPartition.Code, kerr.OffsetMetadataTooLarge.Code}) {
		t.Fatalf("codes %v", got)
	}
	t1 := gm.TxnOffsets()
	if want := []record.TxnOffset{{Group: "g", Topic: "in", Partition: 0, Offset: 5, LeaderEpoch: 4}}; len(t1) != 1 || !reflect.DeepEqual(t1[0].Offsets, want) || t1[0].ProducerID != pid {
		t.Fatalf("staged %+v, want %+v", t1, want)
	}
	// The transaction at another gateway: asked there through Peer.
	elsewhere := oneManager{g: gm, peer: func(ctx context.Context, p int, r kmsg.Request) (kmsg.Response, error) {
		if p != record.Partition("etl") {
			t.Errorf("asked the gateway of log partition %d", p)
		}
		return NewRouter(oneManager{m: f.m}, nil).AddPartitionsToTxn(ctx, id, r.(*kmsg.AddPartitionsToTxnRequest))
	}}
	if got := codes(elsewhere, req(3, pid, epoch, part(1, 9, ""))); !reflect.DeepEqual(got, []int16{0}) {
		t.Fatalf("transaction at another gateway: codes %v", got)
	}
	t1 = gm.TxnOffsets()
	unreachable := oneManager{g: gm, peer: func(context.Context, int, kmsg.Request) (kmsg.Response, error) {
		return nil, errors.New("connection refused")
	}}
	for _, c := range []struct {
		name string
		d    Directory
		r    *kmsg.TxnOffsetCommitRequest
		want *kerr.Error
	}{
		{"group not served here", oneManager{m: f.m}, req(3, pid, epoch, part(0, 6, "")), kerr.NotCoordinator},
		{"transaction coordinator unreachable", unreachable, req(3, pid, epoch, part(0, 6, "")), kerr.CoordinatorNotAvailable},
		{"fenced epoch at another gateway", elsewhere, req(3, pid, epoch+1, part(0, 6, "")), kerr.ProducerFenced},
		{"group not added", both, func() *kmsg.TxnOffsetCommitRequest {
			r := req(3, pid, epoch, part(0, 6, ""))
			r.Group = "not-added"
			return r
		}(), kerr.InvalidTxnState},
		{"fenced epoch, v3", both, req(3, pid, epoch+1, part(0, 6, "")), kerr.ProducerFenced},
		{"fenced epoch, v2", both, req(2, pid, epoch+1, part(0, 6, "")), kerr.InvalidProducerEpoch},
		{"another producer id", both, req(3, pid+1, epoch, part(0, 6, "")), kerr.InvalidProducerIDMapping},
	} {
		if got := codes(c.d, c.r); len(got) != 1 || got[0] != c.want.Code {
			t.Errorf("%s: codes %v, want %s", c.name, got, c.want.Message)
		}
	}
	unknownMember := req(3, pid, epoch, part(0, 6, ""))
	unknownMember.Group = "with-members"
	if _, err := gm.Join(ctx, kafka.Identity{}, joinV3("with-members")); err != nil {
		t.Fatal(err)
	}
	unknownMember.MemberID, unknownMember.Generation = "nobody", 1
	if got := codes(both, unknownMember); got[0] != kerr.UnknownMemberID.Code {
		t.Errorf("an unknown member: codes %v", got)
	}
	if t2 := gm.TxnOffsets(); !reflect.DeepEqual(t2, t1) {
		t.Fatalf("a refused commit changed the staged offsets: %+v", t2)
	}
}

// joinV3 is a JoinGroup v3 (no member id required) that makes a one-member classic group.
func joinV3(g string) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version, r.Group, r.ProtocolType = 3, g, "consumer"
	r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = 10000, 10000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	r.Protocols = append(r.Protocols, p)
	return r
}
