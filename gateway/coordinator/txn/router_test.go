package txn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// oneManager serves every transactional id with m and every group (every log partition) with
// g; peer, when set, answers for the other gateways, and marks records the data partitions'
// markers (an error of markErr instead when set).
type oneManager struct {
	m       *Manager
	g       *group.Manager
	peer    func(ctx context.Context, p int, req kmsg.Request) (kmsg.Response, error)
	marks   *[]string
	markErr error
}

func (d oneManager) LogPartition(int) (*group.Manager, int16) { return d.Manager("") }

func (d oneManager) Peer(ctx context.Context, p int, req kmsg.Request) (kmsg.Response, error) {
	if d.peer == nil {
		return nil, errors.New("no other gateway")
	}
	return d.peer(ctx, p, req)
}

func (d oneManager) Mark(_ context.Context, topic string, p int32, pid int64, epoch int16, commit bool) error {
	if d.markErr != nil {
		return d.markErr
	}
	if d.marks != nil {
		*d.marks = append(*d.marks, fmt.Sprintf("%s/%d pid %d epoch %d commit %v", topic, p, pid, epoch, commit))
	}
	return nil
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
	r := NewRouter(oneManager{m: f.m}, nil)
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
	if got, _ := NewRouter(oneManager{}, nil).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("empty transactional id: code %d", got.ErrorCode)
	}
	bad.TransactionalID = &id
	if got, _ := NewRouter(oneManager{}, nil).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("an id served elsewhere: code %d", got.ErrorCode)
	}
}

// DescribeTransactions and ListTransactions answer from the manager's state with Kafka's state
// names and filters.
func TestRouterDescribeAndList(t *testing.T) {
	f := newFixture(t)
	r := NewRouter(oneManager{m: f.m}, nil)
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

// writeMarkers sends one marker of pid at epoch for topic's partitions and returns their codes.
func writeMarkers(t *testing.T, d Directory, pid int64, epoch int16, commit bool, topic string, parts ...int32) []int16 {
	t.Helper()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed = pid, epoch, commit
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = topic, parts
	mk.Topics = append(mk.Topics, rt)
	req.Markers = append(req.Markers, mk)
	resp, err := NewRouter(d, nil).WriteTxnMarkers(context.Background(), kafka.Identity{}, req)
	if err != nil {
		t.Fatal(err)
	}
	var out []int16
	for _, rm := range resp.Markers {
		if rm.ProducerID != pid {
			t.Fatalf("answer for producer %d, want %d", rm.ProducerID, pid)
		}
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				out = append(out, rp.ErrorCode)
			}
		}
	}
	return out
}

// WriteTxnMarkers on a groups' log partition ends what the producer committed there; bad input
// is answered with Kafka's codes and changes nothing: a log partition this gateway does not
// coordinate is NOT_LEADER_OR_FOLLOWER, one that does not exist UNKNOWN_TOPIC_OR_PARTITION, a
// marker older than the staged offsets INVALID_PRODUCER_EPOCH, a negative producer id or epoch
// INVALID_PRODUCER_ID_MAPPING or INVALID_PRODUCER_EPOCH; a producer with nothing pending ends
// nothing (0, so a marker written again is harmless). On a data partition the marker is written
// (Directory.Mark), its error answered as its code.
func TestRouterWriteTxnMarkers(t *testing.T) {
	f := newFixture(t)
	gm := group.NewManager(group.Config{Clock: f.clk})
	t.Cleanup(gm.Close)
	if err := gm.StageTxnOffsets("etl", 40, 2, "g", []record.TxnOffset{{Topic: "in", Partition: 0, Offset: 12, LeaderEpoch: -1}}, gm.TxnGuard(40)); err != nil {
		t.Fatal(err)
	}
	lp := int32(record.Partition("g"))
	var marks []string
	here := oneManager{g: gm, marks: &marks}
	for _, c := range []struct {
		name  string
		d     Directory
		pid   int64
		epoch int16
		topic string
		p     int32
		want  *kerr.Error
	}{
		{"group partition not coordinated here", oneManager{}, 40, 2, GroupsTopic, lp, kerr.NotLeaderForPartition},
		{"log partition that does not exist", here, 40, 2, GroupsTopic, record.Partitions, kerr.UnknownTopicOrPartition},
		{"stale epoch", here, 40, 1, GroupsTopic, lp, kerr.InvalidProducerEpoch},
		{"negative producer id", here, -1, 2, GroupsTopic, lp, kerr.InvalidProducerIDMapping},
		{"negative epoch", here, 40, -1, "out", 0, kerr.InvalidProducerEpoch},
		{"data partition that does not exist", oneManager{markErr: fmt.Errorf("no such topic: %w", kerr.UnknownTopicOrPartition)}, 40, 2, "gone", 0, kerr.UnknownTopicOrPartition},
		{"unknown producer", here, 41, 0, GroupsTopic, lp, nil},
	} {
		got := writeMarkers(t, c.d, c.pid, c.epoch, true, c.topic, c.p)
		if want := errCodeOf(c.want); len(got) != 1 || got[0] != want {
			t.Errorf("%s: codes %v, want %d", c.name, got, want)
		}
	}
	if got := gm.TxnOffsets(); len(got) != 1 || !gm.Unstable("g", "in", 0) {
		t.Fatalf("bad markers changed the pending offsets: %+v", got)
	}
	if len(marks) != 0 {
		t.Fatalf("bad markers were written: %v", marks)
	}
	if got := writeMarkers(t, here, 40, 2, true, GroupsTopic, lp); got[0] != 0 {
		t.Fatalf("commit marker: code %d", got[0])
	}
	if gm.Unstable("g", "in", 0) {
		t.Fatal("the commit marker left the offsets pending")
	}
	rg := gm.FetchOffsets(context.Background(), kafka.Identity{}, "g", nil, true, nil, -1)
	if len(rg.Topics) != 1 || rg.Topics[0].Partitions[0].Offset != 12 {
		t.Fatalf("committed offsets %+v", rg.Topics)
	}
	if got := writeMarkers(t, here, 40, 2, false, "out", 0, 3); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Fatalf("data partition markers: codes %v", got)
	}
	if want := []string{"out/0 pid 40 epoch 2 commit false", "out/3 pid 40 epoch 2 commit false"}; fmt.Sprint(marks) != fmt.Sprint(want) {
		t.Fatalf("markers written %v, want %v", marks, want)
	}
}

func errCodeOf(e *kerr.Error) int16 {
	if e == nil {
		return 0
	}
	return e.Code
}

// AddPartitionsToTxn v4: a verify-only batch answers per partition whether the open
// transaction holds it and adds nothing; a batch that is not verify-only adds; an id not served
// here is the directory's code. VerifyProduce asks the same, here or at the gateway that serves
// the id, with the codes a produce answers.
func TestRouterVerify(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	pid, epoch, _ := f.m.InitProducerID("etl", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("etl", pid, epoch, []record.TxnTopic{{Topic: "out", Partitions: []int32{1}}}), nil)
	v4 := func(verify bool, id string, parts ...int32) *kmsg.AddPartitionsToTxnRequest {
		r := kmsg.NewPtrAddPartitionsToTxnRequest()
		r.Version = 4
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, verify
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = "out", parts
		tx.Topics = append(tx.Topics, rt)
		r.Transactions = append(r.Transactions, tx)
		return r
	}
	codesOf := func(d Directory, r *kmsg.AddPartitionsToTxnRequest) []int16 {
		resp, err := NewRouter(d, nil).AddPartitionsToTxn(ctx, kafka.Identity{}, r)
		if err != nil {
			t.Fatal(err)
		}
		var out []int16
		for _, tx := range resp.Transactions {
			for _, rt := range tx.Topics {
				for _, rp := range rt.Partitions {
					out = append(out, rp.ErrorCode)
				}
			}
		}
		return out
	}
	here := oneManager{m: f.m}
	n := f.j.count()
	if got := codesOf(here, v4(true, "etl", 1, 2)); fmt.Sprint(got) != fmt.Sprint([]int16{0, kerr.InvalidTxnState.Code}) {
		t.Fatalf("verify-only: codes %v", got)
	}
	if f.j.count() != n {
		t.Fatal("a verify-only batch appended a record")
	}
	if got := codesOf(oneManager{}, v4(true, "etl", 1)); got[0] != kerr.NotCoordinator.Code {
		t.Fatalf("verify-only for an id not served here: codes %v", got)
	}
	if got := codesOf(here, v4(false, "etl", 2)); got[0] != 0 {
		t.Fatalf("add: codes %v", got)
	}
	wantCode(t, "added by a v4 batch", f.m.Check("etl", pid, epoch, "out", 2), nil)

	remote := oneManager{peer: func(ctx context.Context, _ int, r kmsg.Request) (kmsg.Response, error) {
		return NewRouter(here, nil).AddPartitionsToTxn(ctx, kafka.Identity{}, r.(*kmsg.AddPartitionsToTxnRequest))
	}}
	for _, d := range []Directory{here, remote} {
		got := NewRouter(d, nil).VerifyProduce(ctx, "etl", pid, epoch, map[string][]int32{"out": {1, 3}}, false)
		if got["out"][1] != 0 || got["out"][3] != kerr.InvalidTxnState.Code {
			t.Errorf("VerifyProduce: %v", got)
		}
		fenced := NewRouter(d, nil).VerifyProduce(ctx, "etl", pid, epoch-1, map[string][]int32{"out": {1}}, false)
		if fenced["out"][1] != kerr.InvalidProducerEpoch.Code {
			t.Errorf("VerifyProduce at a fenced epoch: %v", fenced)
		}
	}
	down := NewRouter(oneManager{}, nil).VerifyProduce(ctx, "etl", pid, epoch, map[string][]int32{"out": {1}}, false)
	if down["out"][1] != kerr.NotEnoughReplicas.Code {
		t.Errorf("VerifyProduce with the coordinator unreachable: %v", down)
	}
}
