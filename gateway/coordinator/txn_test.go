package coordinator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// ends records the transaction ends a gateway writes; with hold set, End blocks until its
// context ends (markers that never get through).
type ends struct {
	hold bool
	mu   sync.Mutex
	got  []record.Transaction
}

func (e *ends) End(ctx context.Context, t record.Transaction) error {
	e.mu.Lock()
	e.got = append(e.got, t)
	e.mu.Unlock()
	if e.hold {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (e *ends) of(id string) []record.Transaction {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []record.Transaction
	for _, t := range e.got {
		if t.ID == id {
			out = append(out, t)
		}
	}
	return out
}

// The gateway that takes a log partition over takes its transactions with it: one left in
// PrepareCommit by the leaving owner (its markers never got through) is ended by the new owner,
// which commits the offsets it staged for a group, and whose Complete record follows in the log; one left open is aborted when its timeout passes,
// and its end written by the new owner (a's markers never get through, so even an abort a
// began before leaving is b's to finish).
func TestTransactionsHandedOver(t *testing.T) {
	s := newStore(t)
	var pids atomic.Int64
	withTxns := func(m txn.Markers) func(*Config) {
		return func(c *Config) {
			c.Transactions = true
			c.Txn = txn.Config{Markers: m, ProducerID: func(context.Context) (int64, error) { return pids.Add(1), nil }}
		}
	}
	aEnds, bEnds := &ends{hold: true}, &ends{}
	a := start(t, s, 1, withTxns(aEnds))
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	committed, open := groupIn(3, "txn-commit"), groupIn(9, "txn-open")
	tm := func(c *Coordinator, id string) *txn.Manager {
		m, code := (directory{c}).Txns(id)
		if m == nil {
			t.Fatalf("%s not served by node %d: code %d", id, c.cfg.NodeID, code)
		}
		return m
	}
	parts := []record.TxnTopic{{Topic: "out", Partitions: []int32{0, 1}}}
	pid, epoch, err := tm(a, committed).InitProducerID(committed, time.Minute, txn.NoProducer, txn.NoProducer)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm(a, committed).AddPartitions(committed, pid, epoch, parts); err != nil {
		t.Fatal(err)
	}
	// The commit carries a group's offsets too: b commits them when it ends the transaction.
	// The group shares the transaction's log partition, so b serves it when it ends the
	// transaction (one of another partition b may not serve yet: the end is then tried again).
	grp := groupIn(3, "txn-group")
	if err := tm(a, committed).AddGroup(committed, pid, epoch, grp); err != nil {
		t.Fatal(err)
	}
	if err := tm(a, committed).StageOffsets(committed, pid, epoch, []record.TxnOffset{{Group: grp, Topic: "in", Partition: 0, Offset: 17, LeaderEpoch: -1}}); err != nil {
		t.Fatal(err)
	}
	if err := tm(a, committed).EndTxn(committed, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	opid, oepoch, err := tm(a, open).InitProducerID(open, 1500*time.Millisecond, txn.NoProducer, txn.NoProducer)
	if err != nil {
		t.Fatal(err)
	}
	if err := tm(a, open).AddPartitions(open, opid, oepoch, parts); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "a writing the commit's markers", func() error {
		return checkfor.True(len(aEnds.of(committed)) > 0, "no end yet")
	})
	if err := a.Leave(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	b := start(t, s, 2, withTxns(bEnds))
	state := func(p int, id string) (record.Transaction, uint64) {
		st := fullReplay(t, s.client(t), b, p)
		x, _ := st.Transaction(id)
		return x, st.Claim().Number
	}
	checkfor.Eventually(t, 10*time.Second, "b completing a's commit", func() error {
		x, _ := state(3, committed)
		if x.State != record.TxnCompleteCommit {
			return fmt.Errorf("%s is %s in the log", committed, x.State)
		}
		return nil
	})
	got := bEnds.of(committed)
	if len(got) != 1 || got[0].State != record.TxnPrepareCommit || got[0].ProducerID != pid || len(got[0].Partitions) != 1 {
		t.Fatalf("b's ends of %s: %+v", committed, got)
	}
	if gst := fullReplay(t, s.client(t), b, 3); len(gst.GroupOffsets(grp)) != 1 || gst.GroupOffsets(grp)[0].Offset != 17 {
		t.Fatalf("the staged offset of %s committed by b: %+v", grp, gst.GroupOffsets(grp))
	}
	checkfor.Eventually(t, 10*time.Second, "b aborting the open transaction at its timeout", func() error {
		x, claim := state(9, open)
		if x.State != record.TxnCompleteAbort || x.Epoch != oepoch+1 {
			return fmt.Errorf("%s is %s at epoch %d in the log (claim %d)", open, x.State, x.Epoch, claim)
		}
		return nil
	})
	if got := bEnds.of(open); len(got) != 1 || got[0].State != record.TxnPrepareAbort {
		t.Fatalf("b's ends of %s: %+v", open, got)
	}
}

// Offsets a transaction stages (TxnOffsetCommit) are UNSTABLE_OFFSET_COMMIT to a RequireStable
// OffsetFetch until the transaction ends, become the group's committed offsets when it commits,
// are dropped when it aborts, and the committed ones are what the next owner of the log
// partition answers after a handover.
func TestTxnOffsetsHandedOver(t *testing.T) {
	s := newStore(t)
	var pids atomic.Int64
	withTxns := func(c *Config) {
		c.Transactions = true
		c.Txn = txn.Config{ProducerID: func(context.Context) (int64, error) { return pids.Add(1), nil }}
	}
	a := start(t, s, 1, withTxns)
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	// The group and the transactional id in different log partitions, both served by a.
	grp, id := groupIn(4, "etl-group"), groupIn(11, "etl-txn")
	ctx := ctxT(t)
	tm, _ := (directory{a}).Txns(id)
	pid, epoch, err := tm.InitProducerID(id, time.Minute, txn.NoProducer, txn.NoProducer)
	if err != nil {
		t.Fatal(err)
	}
	stage := func(offset int64) {
		t.Helper()
		if err := tm.AddGroup(id, pid, epoch, grp); err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = 3, id, grp, pid, epoch, -1
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic = "in"
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = 2, offset, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := a.Txns().TxnOffsetCommit(ctx, kafkaIdentity(), req)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
		}
	}
	fetch := func(c *Coordinator, stable bool) (int64, int16) {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version, req.Group, req.RequireStable = 7, grp, stable
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = "in", []int32{2}
		req.Topics = append(req.Topics, rt)
		resp, err := c.Groups().OffsetFetch(ctx, kafkaIdentity(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			return -1, resp.ErrorCode
		}
		p := resp.Topics[0].Partitions[0]
		return p.Offset, p.ErrorCode
	}
	stage(41)
	if off, code := fetch(a, true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("RequireStable with offsets staged: offset %d code %d", off, code)
	}
	if off, code := fetch(a, false); code != 0 || off != -1 {
		t.Fatalf("a staged offset is visible before the commit: offset %d code %d", off, code)
	}
	if err := tm.EndTxn(id, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "the committed offset", func() error {
		off, code := fetch(a, true)
		return checkfor.True(code == 0 && off == 41, "offset %d code %d", off, code)
	})
	stage(99)
	if err := tm.EndTxn(id, pid, epoch, false); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "the abort completed", func() error {
		x, _ := tm.Describe(id)
		return checkfor.True(x.State == record.TxnCompleteAbort, "%s", x.State)
	})
	if off, code := fetch(a, true); code != 0 || off != 41 {
		t.Fatalf("after the abort: offset %d code %d, want 41", off, code)
	}

	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	b := start(t, s, 2, withTxns)
	checkfor.Eventually(t, 10*time.Second, "b answering the committed offset", func() error {
		off, code := fetch(b, true)
		return checkfor.True(code == 0 && off == 41, "offset %d code %d", off, code)
	})
}
