package txn

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// oneManager serves every transactional id with m and every group with g.
type oneManager struct {
	m *Manager
	g *group.Manager
}

func (d oneManager) Manager(string) (*group.Manager, int16) {
	if d.g == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return d.g, 0
}

func (d oneManager) AllTxns() []*Manager {
	if d.m == nil {
		return nil
	}
	return []*Manager{d.m}
}

func (d oneManager) Txns(string) (*Manager, int16) {
	if d.m == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return d.m, 0
}

// The router answers PRODUCER_FENCED as INVALID_PRODUCER_EPOCH to versions that predate the
// code, the directory's code when the id is not served here, and refuses a bad id before any
// manager is asked.
func TestRouterCodes(t *testing.T) {
	f := newFixture(t)
	r := NewRouter(oneManager{m: f.m})
	ctx := context.Background()
	id := "r"
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 4, &id, 1000
	resp, _ := r.InitProducerID(ctx, kafka.Identity{}, init)
	if resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: code %d", resp.ErrorCode)
	}
	_, _, _ = f.m.InitProducerID(id, time.Second, NoProducer, NoProducer) // the epoch moves on: resp's is fenced
	for _, c := range []struct {
		version int16
		want    *kerr.Error
	}{{0, kerr.InvalidProducerEpoch}, {1, kerr.InvalidProducerEpoch}, {2, kerr.ProducerFenced}, {3, kerr.ProducerFenced}} {
		end := kmsg.NewPtrEndTxnRequest()
		end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch = c.version, id, resp.ProducerID, resp.ProducerEpoch
		eresp, _ := r.EndTxn(ctx, kafka.Identity{}, end)
		if eresp.ErrorCode != c.want.Code {
			t.Errorf("EndTxn v%d by a fenced epoch: code %d, want %s", c.version, eresp.ErrorCode, c.want.Message)
		}
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = c.version, id, resp.ProducerID, resp.ProducerEpoch, "g"
		aresp, _ := r.AddOffsetsToTxn(ctx, kafka.Identity{}, add)
		if aresp.ErrorCode != c.want.Code {
			t.Errorf("AddOffsetsToTxn v%d by a fenced epoch: code %d, want %s", c.version, aresp.ErrorCode, c.want.Message)
		}
	}
	for v, want := range map[int16]*kerr.Error{3: kerr.InvalidProducerEpoch, 4: kerr.ProducerFenced} {
		again := kmsg.NewPtrInitProducerIDRequest()
		again.Version, again.TransactionalID, again.TransactionTimeoutMillis = v, &id, 1000
		again.ProducerID, again.ProducerEpoch = resp.ProducerID, resp.ProducerEpoch
		if got, _ := r.InitProducerID(ctx, kafka.Identity{}, again); got.ErrorCode != want.Code || got.ProducerID != -1 {
			t.Errorf("InitProducerId v%d naming a fenced pair: code %d id %d, want %s", v, got.ErrorCode, got.ProducerID, want.Message)
		}
	}
	empty := ""
	bad := kmsg.NewPtrInitProducerIDRequest()
	bad.TransactionalID, bad.TransactionTimeoutMillis = &empty, 1000
	if got, _ := NewRouter(oneManager{}).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("empty transactional id: code %d", got.ErrorCode)
	}
	bad.TransactionalID = &id
	if got, _ := NewRouter(oneManager{}).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("an id served elsewhere: code %d", got.ErrorCode)
	}
}

// DescribeTransactions and ListTransactions answer from the manager's state with Kafka's state
// names and filters.
func TestRouterDescribeAndList(t *testing.T) {
	f := newFixture(t)
	r := NewRouter(oneManager{m: f.m})
	ctx := context.Background()
	pid, epoch, _ := f.m.InitProducerID("open", time.Minute, NoProducer, NoProducer)
	f.clk.Advance(time.Second)
	_ = f.m.AddPartitions("open", pid, epoch, []record.TxnTopic{{Topic: "out", Partitions: []int32{1, 0}}})
	f.clk.Advance(5 * time.Second)
	_, _, _ = f.m.InitProducerID("idle", time.Minute, NoProducer, NoProducer)

	d := kmsg.NewPtrDescribeTransactionsRequest()
	d.TransactionalIDs = []string{"open", "nobody"}
	dresp, _ := r.DescribeTransactions(ctx, kafka.Identity{}, d)
	open, nobody := dresp.TransactionStates[0], dresp.TransactionStates[1]
	if open.ErrorCode != 0 || open.State != "Ongoing" || open.ProducerID != pid || open.TimeoutMillis != 60000 ||
		open.StartTimestamp != t0.Add(time.Second).UnixMilli() || len(open.Topics) != 1 || len(open.Topics[0].Partitions) != 2 {
		t.Errorf("described %+v", open)
	}
	if nobody.ErrorCode != kerr.TransactionalIDNotFound.Code {
		t.Errorf("an unknown id: code %d", nobody.ErrorCode)
	}
	list := func(states []string, pids []int64, duration int64) (ids []string, unknown []string) {
		l := kmsg.NewPtrListTransactionsRequest()
		l.Version, l.StateFilters, l.ProducerIDFilters, l.DurationFilterMillis = 1, states, pids, duration
		resp, _ := r.ListTransactions(ctx, kafka.Identity{}, l)
		for _, s := range resp.TransactionStates {
			ids = append(ids, s.TransactionalID+"="+s.TransactionState)
		}
		return ids, resp.UnknownStateFilters
	}
	for _, c := range []struct {
		states   []string
		pids     []int64
		duration int64
		want     string
	}{
		{nil, nil, -1, "[idle=Empty open=Ongoing]"},
		{[]string{"Ongoing"}, nil, -1, "[open=Ongoing]"},
		{nil, []int64{pid}, -1, "[open=Ongoing]"},
		{nil, nil, 4000, "[open=Ongoing]"},
		{nil, nil, 6000, "[]"},
	} {
		got, _ := list(c.states, c.pids, c.duration)
		if s := fmt.Sprint(got); s != c.want && !(c.want == "[]" && got == nil) {
			t.Errorf("list %v %v %d: %s, want %s", c.states, c.pids, c.duration, s, c.want)
		}
	}
	if _, unknown := list([]string{"Ongoing", "Hanging"}, nil, -1); len(unknown) != 1 || unknown[0] != "Hanging" {
		t.Errorf("unknown state filters %v", unknown)
	}
}
