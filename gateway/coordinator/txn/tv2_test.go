package txn

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// seed appends txns to the fixture's log and restarts its manager from it.
func (f *fixture) seed(t *testing.T, txns ...record.Transaction) {
	t.Helper()
	for i := range txns {
		if err := f.j.Append(context.Background(), record.Record{Type: record.TypeTransaction, Transaction: &txns[i]}); err != nil {
			t.Fatal(err)
		}
	}
	f.restarted(t)
}

// restarted is a manager that took the fixture's log partition over: it holds only what the log
// holds (the fold of every record), as the next owner of the partition does.
func (f *fixture) restarted(t *testing.T) *Manager {
	t.Helper()
	f.m.Close()
	m := NewManager(Config{Clock: f.clk, Journal: f.j, Markers: f.mk, ProducerID: f.m.cfg.ProducerID})
	m.Restore(f.j.folded())
	m.Start()
	t.Cleanup(m.Close)
	f.m = m
	return m
}

// KIP-360: a producer whose InitProducerId bump lost its answer asks again with the pair it held
// before, and is answered the pair the bump gave, with no second bump, also by the next owner of
// the log partition (the pair before the bump is in the record). A fresh InitProducerId (a new
// incarnation) forgets it, so the older instance's retry is then fenced.
func TestInitProducerIDRetryOfALostBump(t *testing.T) {
	f := newFixture(t)
	pid, e0, err := f.m.InitProducerID("r", time.Minute, NoProducer, NoProducer)
	wantCode(t, "init", err, nil)
	p1, e1, err := f.m.InitProducerID("r", time.Minute, pid, e0)
	wantCode(t, "bump naming the current pair", err, nil)
	if p1 != pid || e1 != e0+1 {
		t.Fatalf("bump gave %d/%d, want %d/%d", p1, e1, pid, e0+1)
	}
	if got, _ := f.j.last("r"); got.Last == nil || *got.Last != (record.ProducerEpoch{ProducerID: pid, Epoch: e0}) {
		t.Fatalf("record after the bump: Last %+v", got.Last)
	}
	m := f.restarted(t)
	p2, e2, err := m.InitProducerID("r", 2*time.Minute, pid, e0)
	wantCode(t, "the bump retried at the next owner", err, nil)
	if p2 != pid || e2 != e1 {
		t.Fatalf("retry gave %d/%d, want the bumped %d/%d unchanged", p2, e2, pid, e1)
	}
	if got, _ := m.Describe("r"); got.Timeout != 2*time.Minute || got.Epoch != e1 {
		t.Fatalf("after the retry %+v", got)
	}
	_, _, err = m.InitProducerID("r", time.Minute, pid, e0-1)
	wantCode(t, "a pair older than the one before the bump", err, kerr.ProducerFenced)
	// Another incarnation starts without naming a pair: the retry of the older bump is fenced.
	_, e3, err := m.InitProducerID("r", time.Minute, NoProducer, NoProducer)
	wantCode(t, "new incarnation", err, nil)
	if e3 != e1+1 {
		t.Fatalf("new incarnation at %d, want %d", e3, e1+1)
	}
	_, _, err = m.InitProducerID("r", time.Minute, pid, e0)
	wantCode(t, "the older bump retried after a new incarnation", err, kerr.ProducerFenced)
	_, _, err = m.InitProducerID("r", time.Minute, pid, e1)
	wantCode(t, "the fenced incarnation's pair", err, kerr.ProducerFenced)
}

// KIP-360 at the last epoch: the bump takes a new producer id at epoch 0, and the retry naming
// the old id and its last epoch gets that new pair.
func TestInitProducerIDRetryAcrossANewProducerID(t *testing.T) {
	f := newFixture(t)
	f.seed(t, record.Transaction{ID: "x", ProducerID: 77, Epoch: maxEpoch, Timeout: time.Minute, State: record.TxnCompleteCommit})
	pid, epoch, err := f.m.InitProducerID("x", time.Minute, 77, maxEpoch)
	wantCode(t, "bump at the last epoch", err, nil)
	if pid == 77 || epoch != 0 {
		t.Fatalf("bump gave %d/%d, want a new producer id at 0", pid, epoch)
	}
	p2, e2, err := f.restarted(t).InitProducerID("x", time.Minute, 77, maxEpoch)
	wantCode(t, "retry", err, nil)
	if p2 != pid || e2 != 0 {
		t.Fatalf("retry gave %d/%d, want %d/0", p2, e2, pid)
	}
}

// Transactions v2 (EndTxn v5): every end bumps the epoch and says so; the markers go out at the
// bumped epoch; the end retried at the epoch before the bump is answered again without a record,
// also by the next owner; the other cases of Kafka's table answer its codes.
func TestEndTxnV2(t *testing.T) {
	f := newFixture(t)
	f.mk.hold = make(chan struct{})
	pid, e0, _ := f.m.InitProducerID("v2", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("v2", pid, e0, orders), nil)
	p, e, err := f.m.EndTxnV2("v2", pid, e0, true)
	wantCode(t, "commit", err, nil)
	if p != pid || e != e0+1 {
		t.Fatalf("commit answered %d/%d, want %d/%d", p, e, pid, e0+1)
	}
	prep := f.state(t, "v2", record.TxnPrepareCommit)
	if prep.Epoch != e0+1 || prep.Last == nil || *prep.Last != (record.ProducerEpoch{ProducerID: pid, Epoch: e0}) {
		t.Fatalf("prepare record %+v", prep)
	}
	_, _, err = f.m.EndTxnV2("v2", pid, e0, true)
	wantCode(t, "commit retried while its markers are written", err, kerr.ConcurrentTransactions)
	_, _, err = f.m.EndTxnV2("v2", pid, e0+1, true)
	wantCode(t, "commit at the new epoch while the markers are written", err, kerr.ConcurrentTransactions)
	wantCode(t, "the next transaction's add while the markers are written", f.m.AddPartitions("v2", pid, e0+1, orders), kerr.ConcurrentTransactions)
	close(f.mk.hold)
	f.state(t, "v2", record.TxnCompleteCommit)
	if ends := f.mk.list(); len(ends) != 1 || ends[0].Epoch != e0+1 || ends[0].ProducerID != pid {
		t.Fatalf("markers %+v, want one at %d/%d", ends, pid, e0+1)
	}

	m := f.restarted(t)
	n := f.j.count()
	p, e, err = m.EndTxnV2("v2", pid, e0, true)
	wantCode(t, "commit retried after it completed, at the next owner", err, nil)
	if p != pid || e != e0+1 || f.j.count() != n {
		t.Fatalf("retry answered %d/%d with %d records, want %d/%d with none", p, e, f.j.count()-n, pid, e0+1)
	}
	_, _, err = m.EndTxnV2("v2", pid, e0, false)
	wantCode(t, "abort retried after a commit", err, kerr.InvalidTxnState)
	_, _, err = m.EndTxnV2("v2", pid, e0+1, true)
	wantCode(t, "commit with nothing open", err, kerr.InvalidTxnState)
	_, _, err = m.EndTxnV2("v2", pid, e0-1, true)
	wantCode(t, "an epoch older than the one before the bump", err, kerr.ProducerFenced)
	_, _, err = m.EndTxnV2("v2", pid+1, e0+1, true)
	wantCode(t, "another producer id", err, kerr.InvalidProducerIDMapping)

	// An abort with nothing open bumps the epoch too.
	p, e, err = m.EndTxnV2("v2", pid, e0+1, false)
	wantCode(t, "empty abort", err, nil)
	if p != pid || e != e0+2 {
		t.Fatalf("empty abort answered %d/%d, want %d/%d", p, e, pid, e0+2)
	}
	f.state(t, "v2", record.TxnCompleteAbort)
	p, e, err = m.EndTxnV2("v2", pid, e0+1, false)
	wantCode(t, "empty abort retried", err, nil)
	if p != pid || e != e0+2 {
		t.Fatalf("empty abort retried answered %d/%d, want %d/%d", p, e, pid, e0+2)
	}
	// The next transaction at the epoch EndTxn gave.
	wantCode(t, "next transaction", m.AddPartitions("v2", pid, e0+2, orders), nil)
	_, _, err = m.EndTxnV2("v2", pid, e0+1, false)
	wantCode(t, "an old abort retried while the next transaction is open", err, kerr.ProducerFenced)
	if _, e, err = m.EndTxnV2("v2", pid, e0+2, false); err != nil || e != e0+3 {
		t.Fatalf("abort of the next transaction: %v, epoch %d", err, e)
	}
	f.state(t, "v2", record.TxnCompleteAbort)
	// The empty abort's end names no partition, so no marker is written.
	if ends := f.mk.list(); len(ends) != 3 || len(ends[1].Partitions) != 0 || ends[1].Epoch != e0+2 ||
		ends[2].Epoch != e0+3 || ends[2].State != record.TxnPrepareAbort || len(ends[2].Partitions) != 1 {
		t.Fatalf("markers %+v", ends)
	}
}

// A transactions-v2 end from the last epoch of a producer id: the markers go out at 32767 under
// the old id, the answer and the Complete record are a new producer id at epoch 0, and the retry
// naming the old id and epoch is answered that new pair.
func TestEndTxnV2SpendsTheEpochs(t *testing.T) {
	f := newFixture(t)
	f.seed(t, record.Transaction{ID: "o", ProducerID: 77, Epoch: maxEpoch, Timeout: time.Minute, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "orders", Partitions: []int32{0}}}, Started: t0})
	p, e, err := f.m.EndTxnV2("o", 77, maxEpoch, true)
	wantCode(t, "commit at the last epoch", err, nil)
	if p == 77 || e != 0 {
		t.Fatalf("commit answered %d/%d, want a new producer id at 0", p, e)
	}
	done := f.state(t, "o", record.TxnCompleteCommit)
	if done.ProducerID != p || done.Epoch != 0 || done.Next != nil || done.Last == nil || *done.Last != (record.ProducerEpoch{ProducerID: 77, Epoch: maxEpoch}) {
		t.Fatalf("complete record %+v", done)
	}
	if ends := f.mk.list(); len(ends) != 1 || ends[0].ProducerID != 77 || ends[0].Epoch != maxEpoch+1 {
		t.Fatalf("markers %+v, want one of 77 at %d", ends, maxEpoch+1)
	}
	p2, e2, err := f.restarted(t).EndTxnV2("o", 77, maxEpoch, true)
	wantCode(t, "commit retried", err, nil)
	if p2 != p || e2 != 0 {
		t.Fatalf("retry answered %d/%d, want %d/0", p2, e2, p)
	}
	if _, _, err := f.m.EndTxnV2("o", 77, maxEpoch, false); code(err) != kerr.InvalidTxnState.Code {
		t.Fatalf("abort retried after the commit: %v", err)
	}
}

// A fence at the last epoch keeps the producer id, so its abort markers end the fenced
// producer's batches (they are written at 32767); the next InitProducerId takes a new id.
func TestFenceAtTheLastEpochKeepsTheProducerID(t *testing.T) {
	f := newFixture(t)
	f.seed(t, record.Transaction{ID: "z", ProducerID: 77, Epoch: maxEpoch, Timeout: time.Minute, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "orders", Partitions: []int32{1}}}, Started: t0})
	_, _, err := f.m.InitProducerID("z", time.Minute, NoProducer, NoProducer)
	wantCode(t, "new incarnation", err, kerr.ConcurrentTransactions)
	f.state(t, "z", record.TxnCompleteAbort)
	if ends := f.mk.list(); len(ends) != 1 || ends[0].ProducerID != 77 || ends[0].Epoch != maxEpoch+1 {
		t.Fatalf("abort markers %+v, want producer 77 at %d", ends, maxEpoch+1)
	}
	pid, epoch, err := f.m.InitProducerID("z", time.Minute, NoProducer, NoProducer)
	wantCode(t, "new incarnation again", err, nil)
	if pid == 77 || epoch != 0 {
		t.Fatalf("new incarnation %d/%d, want a new producer id at 0", pid, epoch)
	}
}

// The router: EndTxn v5 answers the pair to go on with (-1 on an error); a Produce v12 adds its
// partitions (beginning the transaction), where v11 only checks them; a TxnOffsetCommit v5 adds
// its group's log partition, which the markers' Check then finds.
func TestRouterTransactionsV2(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	r := NewRouter(oneManager{m: f.m}, f.clk)
	pid, e0, _ := f.m.InitProducerID("etl", time.Minute, NoProducer, NoProducer)

	parts := map[string][]int32{"out": {1}}
	if got := r.VerifyProduce(ctx, "etl", pid, e0, parts, false); got["out"][1] != kerr.InvalidTxnState.Code {
		t.Fatalf("produce v11 before any add: %v", got)
	}
	if got := r.VerifyProduce(ctx, "etl", pid, e0, parts, true); got["out"][1] != 0 {
		t.Fatalf("produce v12: %v", got)
	}
	open := f.state(t, "etl", record.TxnOngoing)
	if !reflect.DeepEqual(open.Partitions, []record.TxnTopic{{Topic: "out", Partitions: []int32{1}}}) {
		t.Fatalf("open transaction %+v", open)
	}
	if got := r.VerifyProduce(ctx, "etl", pid, e0-1, parts, true); got["out"][1] != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("produce v12 at an old epoch: %v", got)
	}

	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = 5, "etl", pid, e0, true
	resp, _ := r.EndTxn(ctx, kafka.Identity{}, end)
	if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != e0+1 {
		t.Fatalf("EndTxn v5: %+v", resp)
	}
	f.state(t, "etl", record.TxnCompleteCommit)
	// While the next end is written, a produce of the transaction after it is retried.
	f.mk.mu.Lock()
	f.mk.hold = make(chan struct{})
	f.mk.mu.Unlock()
	end.ProducerEpoch = e0 + 5
	if resp, _ := r.EndTxn(ctx, kafka.Identity{}, end); resp.ErrorCode != kerr.ProducerFenced.Code || resp.ProducerID != -1 || resp.ProducerEpoch != -1 {
		t.Fatalf("EndTxn v5 at a wrong epoch: %+v", resp)
	}
	// EndTxn v3 (transactions v1) keeps v1's rules: the same end at the current epoch is a
	// retry, answered 0, and bumps nothing.
	end.Version, end.ProducerEpoch = 3, e0+1
	if resp, _ := r.EndTxn(ctx, kafka.Identity{}, end); resp.ErrorCode != 0 {
		t.Fatalf("EndTxn v3 after the v5 commit: %+v", resp)
	}

	e1 := e0 + 1
	if got := r.VerifyProduce(ctx, "etl", pid, e1, parts, true); got["out"][1] != 0 {
		t.Fatalf("produce v12 of the next transaction: %v", got)
	}
	end.Version, end.ProducerEpoch, end.Commit = 5, e1, false
	resp, _ = r.EndTxn(ctx, kafka.Identity{}, end)
	if resp.ErrorCode != 0 || resp.ProducerEpoch != e1+1 {
		t.Fatalf("EndTxn v5 abort: %+v", resp)
	}
	// A produce of the next transaction while the previous end is written waits for it (on the
	// router's clock), then is added, as Kafka's brokers retry CONCURRENT_TRANSACTIONS; one that
	// waits past addWait is answered NOT_ENOUGH_REPLICAS, which the producer retries.
	got := make(chan map[string]map[int32]int16, 1)
	added := f.clk.Added()
	go func() { got <- r.VerifyProduce(ctx, "etl", pid, e1+1, parts, true) }()
	<-added
	close(f.mk.hold)
	f.state(t, "etl", record.TxnCompleteAbort)
	f.clk.Advance(addBackoff)
	if codes := <-got; codes["out"][1] != 0 {
		t.Fatalf("produce v12 after waiting for the previous end: %v", codes)
	}
	f.mk.mu.Lock()
	f.mk.hold = make(chan struct{})
	f.mk.mu.Unlock()
	end.ProducerEpoch = e1 + 1
	if resp, _ := r.EndTxn(ctx, kafka.Identity{}, end); resp.ErrorCode != 0 {
		t.Fatalf("EndTxn v5 abort: %+v", resp)
	}
	added = f.clk.Added()
	go func() { got <- r.VerifyProduce(ctx, "etl", pid, e1+2, parts, true) }()
	for waited := time.Duration(0); ; {
		select {
		case codes := <-got:
			if codes["out"][1] != kerr.NotEnoughReplicas.Code || waited < addWait {
				t.Fatalf("produce v12 while the previous end is written, after %v: %v, want NOT_ENOUGH_REPLICAS past %v", waited, codes, addWait)
			}
		case <-added:
			added = f.clk.Added()
			f.clk.Advance(addBackoffMax)
			waited += addBackoffMax
			continue
		}
		break
	}
	close(f.mk.hold)
	f.state(t, "etl", record.TxnCompleteAbort)

	// Partition N of GroupsTopic added by the implicit add of a TxnOffsetCommit v5.
	e2 := e1 + 2
	lp := int32(record.Partition("etl-group"))
	codes, err := r.verify(ctx, "etl", pid, e2, []record.TxnTopic{{Topic: GroupsTopic, Partitions: []int32{lp}}}, true)
	if err != nil || codes[GroupsTopic][lp] != 0 {
		t.Fatalf("implicit add of log partition %d: %v %v", lp, codes, err)
	}
	wantCode(t, "check of the group's partition", f.m.Check("etl", pid, e2, GroupsTopic, lp), nil)
	wantCode(t, "check of another log partition", f.m.Check("etl", pid, e2, GroupsTopic, (lp+1)%record.Partitions), kerr.InvalidTxnState)
}

// The next end of a transactions-v2 producer while its previous end is being written: EndTxn v5
// answers the bumped epoch once the Prepare record is read back, before the markers, and
// franz-go's GroupTransactSession may end its next transaction at once (an abort when a rebalance
// revoked its partitions before anything was produced). On a fleet the markers of the previous
// end travel to the gateway of the group's log partition, so the next end often arrives while
// they do. It is CONCURRENT_TRANSACTIONS, which the client retries, as Kafka's coordinator answers
// it since KAFKA-18464; it was PRODUCER_FENCED, which franz-go's TestTxnEtl failed with on a
// fleet. Once the previous end is complete the retry ends the next transaction.
func TestEndTxnV2WhileThePreviousEndIsWritten(t *testing.T) {
	f := newFixture(t)
	f.mk.hold = make(chan struct{})
	pid, e0, _ := f.m.InitProducerID("etl", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("etl", pid, e0, orders), nil)
	_, e1, err := f.m.EndTxnV2("etl", pid, e0, true)
	wantCode(t, "commit", err, nil)
	f.state(t, "etl", record.TxnPrepareCommit)
	n := f.j.count()
	for _, commit := range []bool{false, true} {
		_, _, err = f.m.EndTxnV2("etl", pid, e1, commit)
		wantCode(t, fmt.Sprintf("next end (commit %v) at the epoch the commit gave, while its markers are written", commit), err, kerr.ConcurrentTransactions)
	}
	_, _, err = f.m.EndTxnV2("etl", pid, e0, false)
	wantCode(t, "the opposite end retried while the markers are written", err, kerr.ConcurrentTransactions)
	if f.j.count() != n {
		t.Fatalf("%d records appended while the end was written, want none", f.j.count()-n)
	}
	close(f.mk.hold)
	f.state(t, "etl", record.TxnCompleteCommit)
	p, e2, err := f.m.EndTxnV2("etl", pid, e1, false)
	wantCode(t, "the next end retried once the commit is complete", err, nil)
	if p != pid || e2 != e1+1 {
		t.Fatalf("abort answered %d/%d, want %d/%d", p, e2, pid, e1+1)
	}
	f.state(t, "etl", record.TxnCompleteAbort)
	_, _, err = f.m.EndTxnV2("etl", pid, e0, true)
	wantCode(t, "an end two epochs old", err, kerr.ProducerFenced)
}

// The same across a new producer id: an end from the last epoch answers a new producer id at
// epoch 0 while its markers are still written under the old one (Transaction.Next), and the
// producer's next requests under the new id, its Produce v12's add and its next end, are
// CONCURRENT_TRANSACTIONS until the end is complete, not INVALID_PRODUCER_ID_MAPPING.
func TestNextRequestsUnderANewProducerIDWhileTheEndIsWritten(t *testing.T) {
	f := newFixture(t)
	f.seed(t, record.Transaction{ID: "o", ProducerID: 77, Epoch: maxEpoch, Timeout: time.Minute, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "orders", Partitions: []int32{0}}}, Started: t0})
	f.mk.hold = make(chan struct{})
	p, e, err := f.m.EndTxnV2("o", 77, maxEpoch, true)
	wantCode(t, "commit at the last epoch", err, nil)
	f.state(t, "o", record.TxnPrepareCommit)
	wantCode(t, "add under the new producer id while the end is written", f.m.AddPartitions("o", p, e, orders), kerr.ConcurrentTransactions)
	_, _, err = f.m.EndTxnV2("o", p, e, false)
	wantCode(t, "next end under the new producer id while the end is written", err, kerr.ConcurrentTransactions)
	_, _, err = f.m.EndTxnV2("o", p+100, e, false)
	wantCode(t, "another producer id while the end is written", err, kerr.InvalidProducerIDMapping)
	_, _, err = f.m.InitProducerID("o", time.Minute, p, e)
	wantCode(t, "KIP-360 bump naming the new producer id while the end is written", err, kerr.ConcurrentTransactions)
	_, _, err = f.m.InitProducerID("o", time.Minute, p, e+1)
	wantCode(t, "KIP-360 bump naming another epoch of the new producer id", err, kerr.ProducerFenced)
	close(f.mk.hold)
	f.state(t, "o", record.TxnCompleteCommit)
	wantCode(t, "add under the new producer id once the end is complete", f.m.AddPartitions("o", p, e, orders), nil)
}
