package coordinator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
// whose Complete record follows in the log; one left open is aborted when its timeout passes,
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
