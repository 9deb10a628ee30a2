package txn

import (
	"context"
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

func staged(group string, p int32, off int64) record.TxnOffset {
	return record.TxnOffset{Group: group, Topic: "in", Partition: p, Offset: off, LeaderEpoch: -1}
}

// Offsets staged in a transaction are in its record before the answer, a later offset of a
// partition replaces the staged one, the end hands them to the markers, and the Complete record
// drops them; a producer that is not the id's current one, a group not added and a transaction
// not open are refused with Kafka's codes and change nothing.
func TestStageOffsets(t *testing.T) {
	f := newFixture(t)
	pid, epoch, err := f.m.InitProducerID("etl", 10*time.Second, NoProducer, NoProducer)
	wantCode(t, "init", err, nil)
	wantCode(t, "stage before any add", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 0, 5)}), kerr.InvalidTxnState)
	wantCode(t, "add group", f.m.AddGroup("etl", pid, epoch, "g"), nil)
	wantCode(t, "stage for a group not added", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("other", 0, 5)}), kerr.InvalidTxnState)
	wantCode(t, "stage by another producer id", f.m.StageOffsets("etl", pid+1, epoch, []record.TxnOffset{staged("g", 0, 5)}), kerr.InvalidProducerIDMapping)
	wantCode(t, "stage at another epoch", f.m.StageOffsets("etl", pid, epoch+1, []record.TxnOffset{staged("g", 0, 5)}), kerr.ProducerFenced)
	wantCode(t, "stage for an unknown id", f.m.StageOffsets("nobody", pid, epoch, []record.TxnOffset{staged("g", 0, 5)}), kerr.InvalidProducerIDMapping)
	if got, _ := f.j.last("etl"); got.Offsets != nil {
		t.Fatalf("a refused stage reached the log: %+v", got.Offsets)
	}
	wantCode(t, "stage", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 1, 10), staged("g", 0, 5)}), nil)
	n := f.j.count()
	wantCode(t, "stage the same again", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 0, 5)}), nil)
	if f.j.count() != n {
		t.Fatal("staging what the transaction holds appended a record")
	}
	wantCode(t, "stage a later offset", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 0, 8)}), nil)
	want := []record.TxnOffset{staged("g", 0, 8), staged("g", 1, 10)}
	if got, _ := f.j.last("etl"); !reflect.DeepEqual(got.Offsets, want) {
		t.Fatalf("logged offsets %+v, want %+v", got.Offsets, want)
	}
	if !f.m.Pending("g", "in", 0) || f.m.Pending("g", "in", 2) || f.m.Pending("other", "in", 0) {
		t.Fatal("Pending does not name exactly the staged partitions")
	}

	f.mk.mu.Lock()
	f.mk.hold = make(chan struct{})
	f.mk.mu.Unlock()
	wantCode(t, "commit", f.m.EndTxn("etl", pid, epoch, true), nil)
	f.state(t, "etl", record.TxnPrepareCommit)
	if !f.m.Pending("g", "in", 0) {
		t.Fatal("offsets of a transaction whose end is being written are not pending")
	}
	wantCode(t, "stage while the end is written", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 0, 9)}), kerr.ConcurrentTransactions)
	close(f.mk.hold)
	done := f.state(t, "etl", record.TxnCompleteCommit)
	if done.Offsets != nil {
		t.Fatalf("the Complete record keeps staged offsets: %+v", done.Offsets)
	}
	if f.m.Pending("g", "in", 0) {
		t.Fatal("offsets pending after the commit completed")
	}
	ends := f.mk.list()
	if len(ends) != 1 || !reflect.DeepEqual(ends[0].Offsets, want) {
		t.Fatalf("the end handed over %+v", ends)
	}
	if got, want := f.m.List(), f.j.folded(); !reflect.DeepEqual(got, want) {
		t.Fatalf("memory %+v\nlog %+v", got, want)
	}

	// The next transaction starts with nothing staged; a timeout's abort hands the offsets to
	// the end as PrepareAbort, which commits none of them.
	wantCode(t, "add group again", f.m.AddGroup("etl", pid, epoch, "g"), nil)
	if open := f.state(t, "etl", record.TxnOngoing); open.Offsets != nil {
		t.Fatalf("a new transaction holds old offsets: %+v", open.Offsets)
	}
	wantCode(t, "stage in the next", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 0, 20)}), nil)
	f.clk.Advance(10 * time.Second)
	f.state(t, "etl", record.TxnCompleteAbort)
	ends = f.mk.list()
	if last := ends[len(ends)-1]; last.State != record.TxnPrepareAbort || len(last.Offsets) != 1 || last.Offsets[0].Offset != 20 {
		t.Fatalf("the timeout's end %+v", last)
	}
}

// The staged offsets are in the log: a manager restored from it (a handover) holds them, and
// ends the transaction with them.
func TestStagedOffsetsRestored(t *testing.T) {
	f := newFixture(t)
	pid, epoch, _ := f.m.InitProducerID("etl", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add group", f.m.AddGroup("etl", pid, epoch, "g"), nil)
	wantCode(t, "stage", f.m.StageOffsets("etl", pid, epoch, []record.TxnOffset{staged("g", 3, 30)}), nil)
	f.m.Close()

	next := NewManager(Config{Clock: f.clk, Journal: f.j, Markers: f.mk})
	next.Restore(f.j.folded())
	next.Start()
	t.Cleanup(next.Close)
	if !next.Pending("g", "in", 3) {
		t.Fatal("the restored manager lost the staged offsets")
	}
	f.m = next
	wantCode(t, "commit on the next owner", next.EndTxn("etl", pid, epoch, true), nil)
	f.state(t, "etl", record.TxnCompleteCommit)
	if ends := f.mk.list(); len(ends) != 1 || len(ends[0].Offsets) != 1 || ends[0].Offsets[0].Offset != 30 {
		t.Fatalf("ends %+v", ends)
	}
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

// The router checks the group before it stages: each partition gets its own code, the
// transaction's codes follow the version (PRODUCER_FENCED from v3), and a group served here with
// the transaction elsewhere is COORDINATOR_NOT_AVAILABLE, which the client retries.
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
		resp, err := NewRouter(d).TxnOffsetCommit(ctx, id, r)
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
	t1, _ := f.m.Describe("etl")
	if want := []record.TxnOffset{{Group: "g", Topic: "in", Partition: 0, Offset: 5, LeaderEpoch: 4}}; !reflect.DeepEqual(t1.Offsets, want) {
		t.Fatalf("staged %+v, want %+v", t1.Offsets, want)
	}
	for _, c := range []struct {
		name string
		d    Directory
		r    *kmsg.TxnOffsetCommitRequest
		want *kerr.Error
	}{
		{"group not served here", oneManager{m: f.m}, req(3, pid, epoch, part(0, 6, "")), kerr.NotCoordinator},
		{"transaction not served here", oneManager{g: gm}, req(3, pid, epoch, part(0, 6, "")), kerr.CoordinatorNotAvailable},
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
	if t2, _ := f.m.Describe("etl"); !reflect.DeepEqual(t2.Offsets, t1.Offsets) {
		t.Fatalf("a refused commit changed the staged offsets: %+v", t2.Offsets)
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
