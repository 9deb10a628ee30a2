package txn

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

var orders = []record.TxnTopic{{Topic: "orders", Partitions: []int32{2, 0}}}

// A transaction from InitProducerId to its commit: every step is in the log before it is
// answered, the markers name the partitions and the group, and the Complete record follows.
func TestCommit(t *testing.T) {
	f := newFixture(t)
	pid, epoch, err := f.m.InitProducerID("etl", 10*time.Second, NoProducer, NoProducer)
	wantCode(t, "init", err, nil)
	if pid != 1001 || epoch != 0 {
		t.Fatalf("init gave %d/%d, want 1001/0", pid, epoch)
	}
	if got, _ := f.j.last("etl"); got.State != record.TxnEmpty || got.Timeout != 10*time.Second {
		t.Fatalf("init record %+v", got)
	}
	wantCode(t, "produce before any add", f.m.Check("etl", pid, epoch, "orders", 0), kerr.InvalidTxnState)
	wantCode(t, "add partitions", f.m.AddPartitions("etl", pid, epoch, orders), nil)
	wantCode(t, "add group", f.m.AddGroup("etl", pid, epoch, "etl-group"), nil)
	n := f.j.count()
	wantCode(t, "add again", f.m.AddPartitions("etl", pid, epoch, []record.TxnTopic{{Topic: "orders", Partitions: []int32{0}}}), nil)
	if f.j.count() != n {
		t.Fatal("adding a partition the transaction has appended a record")
	}
	open := f.state(t, "etl", record.TxnOngoing)
	if want := []record.TxnTopic{{Topic: "orders", Partitions: []int32{0, 2}}}; !reflect.DeepEqual(open.Partitions, want) || !open.Started.Equal(t0) {
		t.Fatalf("open transaction %+v", open)
	}
	wantCode(t, "produce to an added partition", f.m.Check("etl", pid, epoch, "orders", 2), nil)
	wantCode(t, "produce to a partition not added", f.m.Check("etl", pid, epoch, "orders", 1), kerr.InvalidTxnState)
	wantCode(t, "produce at an old epoch", f.m.Check("etl", pid, epoch-1, "orders", 2), kerr.ProducerFenced)

	wantCode(t, "commit", f.m.EndTxn("etl", pid, epoch, true), nil)
	done := f.state(t, "etl", record.TxnCompleteCommit)
	if done.Partitions != nil || done.Groups != nil || !done.Started.IsZero() {
		t.Fatalf("complete record keeps the transaction: %+v", done)
	}
	ends := f.mk.list()
	if len(ends) != 1 || ends[0].State != record.TxnPrepareCommit || ends[0].Groups[0] != "etl-group" || len(ends[0].Partitions[0].Partitions) != 2 {
		t.Fatalf("markers %+v", ends)
	}
	wantCode(t, "commit retried", f.m.EndTxn("etl", pid, epoch, true), nil)
	wantCode(t, "abort after commit", f.m.EndTxn("etl", pid, epoch, false), kerr.InvalidTxnState)
	wantCode(t, "produce after commit", f.m.Check("etl", pid, epoch, "orders", 0), kerr.InvalidTxnState)
	if got, want := f.m.List(), f.j.folded(); !reflect.DeepEqual(got, want) {
		t.Fatalf("memory %+v\nlog %+v", got, want)
	}
}

// While the markers are being written every request of the id is CONCURRENT_TRANSACTIONS, and
// nothing is appended for them.
func TestConcurrentWhilePrepared(t *testing.T) {
	f := newFixture(t)
	f.mk.hold = make(chan struct{})
	f.mk.began = make(chan struct{}, 1)
	pid, epoch, _ := f.m.InitProducerID("a", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("a", pid, epoch, orders), nil)
	wantCode(t, "abort", f.m.EndTxn("a", pid, epoch, false), nil)
	<-f.mk.began
	n := f.j.count()
	_, _, err := f.m.InitProducerID("a", time.Minute, NoProducer, NoProducer)
	wantCode(t, "init while aborting", err, kerr.ConcurrentTransactions)
	wantCode(t, "add while aborting", f.m.AddPartitions("a", pid, epoch, orders), kerr.ConcurrentTransactions)
	wantCode(t, "abort again while aborting", f.m.EndTxn("a", pid, epoch, false), kerr.ConcurrentTransactions)
	wantCode(t, "commit while aborting", f.m.EndTxn("a", pid, epoch, true), kerr.InvalidTxnState)
	if f.j.count() != n {
		t.Fatal("a refused request appended a record")
	}
	close(f.mk.hold)
	f.state(t, "a", record.TxnCompleteAbort)
	pid2, epoch2, err := f.m.InitProducerID("a", time.Minute, NoProducer, NoProducer)
	wantCode(t, "init after the abort", err, nil)
	if pid2 != pid || epoch2 != epoch+1 {
		t.Fatalf("init after the abort gave %d/%d, want %d/%d", pid2, epoch2, pid, epoch+1)
	}
}

// A new incarnation fences the old one: its open transaction is aborted at a bumped epoch, the
// new one waits for that, and the old producer's requests are PRODUCER_FENCED from then on.
func TestNewIncarnationFences(t *testing.T) {
	f := newFixture(t)
	f.mk.hold = make(chan struct{})
	pid, e0, _ := f.m.InitProducerID("w", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("w", pid, e0, orders), nil)
	_, _, err := f.m.InitProducerID("w", time.Minute, NoProducer, NoProducer)
	wantCode(t, "init of the new incarnation", err, kerr.ConcurrentTransactions)
	prep := f.state(t, "w", record.TxnPrepareAbort)
	if prep.Epoch != e0+1 {
		t.Fatalf("fencing abort at epoch %d, want %d", prep.Epoch, e0+1)
	}
	wantCode(t, "old producer commits", f.m.EndTxn("w", pid, e0, true), kerr.ProducerFenced)
	wantCode(t, "old producer adds", f.m.AddPartitions("w", pid, e0, orders), kerr.ProducerFenced)
	wantCode(t, "old producer produces", f.m.Check("w", pid, e0, "orders", 0), kerr.ProducerFenced)
	close(f.mk.hold)
	f.state(t, "w", record.TxnCompleteAbort)
	if ends := f.mk.list(); len(ends) != 1 || ends[0].State != record.TxnPrepareAbort || ends[0].Epoch != e0+1 {
		t.Fatalf("markers %+v", ends)
	}
	_, e2, err := f.m.InitProducerID("w", time.Minute, NoProducer, NoProducer)
	wantCode(t, "init retried", err, nil)
	if e2 != e0+2 {
		t.Fatalf("new incarnation at epoch %d, want %d", e2, e0+2)
	}
	// KIP-360: a client naming the pair it holds gets the next epoch; another pair is fenced.
	_, _, err = f.m.InitProducerID("w", time.Minute, pid, e0)
	wantCode(t, "init naming an old pair", err, kerr.ProducerFenced)
	_, e3, err := f.m.InitProducerID("w", time.Minute, pid, e2)
	wantCode(t, "init naming the current pair", err, nil)
	if e3 != e2+1 {
		t.Fatalf("epoch %d, want %d", e3, e2+1)
	}
}

// A transaction open past its timeout is aborted at that moment of the clock and not before,
// with the epoch bumped so its producer is fenced.
func TestTimeout(t *testing.T) {
	f := newFixture(t)
	pid, epoch, _ := f.m.InitProducerID("s", 10*time.Second, NoProducer, NoProducer)
	f.clk.Advance(3 * time.Second)
	wantCode(t, "add", f.m.AddPartitions("s", pid, epoch, orders), nil)
	f.clk.Advance(7 * time.Second)
	wantCode(t, "add later", f.m.AddPartitions("s", pid, epoch, []record.TxnTopic{{Topic: "totals", Partitions: []int32{0}}}), nil)
	f.clk.Advance(3*time.Second - time.Millisecond)
	if got, _ := f.m.Describe("s"); got.State != record.TxnOngoing {
		t.Fatalf("aborted %v before its timeout: %s", time.Millisecond, got.State)
	}
	f.clk.Advance(time.Millisecond)
	got := f.state(t, "s", record.TxnCompleteAbort)
	if got.Epoch != epoch+1 {
		t.Fatalf("timed-out abort at epoch %d, want %d", got.Epoch, epoch+1)
	}
	ends := f.mk.list()
	if len(ends) != 1 || len(ends[0].Partitions) != 2 || !ends[0].Updated.Equal(t0.Add(13*time.Second)) {
		t.Fatalf("markers %+v", ends)
	}
	wantCode(t, "commit of the timed-out transaction", f.m.EndTxn("s", pid, epoch, true), kerr.ProducerFenced)
}

// Bad input is answered with Kafka's codes and appends nothing.
func TestBadInput(t *testing.T) {
	f := newFixture(t)
	pid, epoch, _ := f.m.InitProducerID("ok", time.Minute, NoProducer, NoProducer)
	n := f.j.count()
	cases := []struct {
		name string
		err  error
		want *kerr.Error
	}{
		{"empty id", second(f.m.InitProducerID("", time.Minute, NoProducer, NoProducer)), kerr.InvalidRequest},
		{"over-long id", second(f.m.InitProducerID(strings.Repeat("x", MaxIDLength+1), time.Minute, NoProducer, NoProducer)), kerr.InvalidRequest},
		{"timeout 0", second(f.m.InitProducerID("t0", 0, NoProducer, NoProducer)), kerr.InvalidTransactionTimeout},
		{"timeout above the maximum", second(f.m.InitProducerID("t1", 15*time.Minute+time.Millisecond, NoProducer, NoProducer)), kerr.InvalidTransactionTimeout},
		{"end with no transaction", f.m.EndTxn("ok", pid, epoch, true), kerr.InvalidTxnState},
		{"abort with no transaction", f.m.EndTxn("ok", pid, epoch, false), kerr.InvalidTxnState},
		{"add to an unknown id", f.m.AddPartitions("nobody", pid, epoch, orders), kerr.InvalidProducerIDMapping},
		{"add with another producer id", f.m.AddPartitions("ok", pid+1, epoch, orders), kerr.InvalidProducerIDMapping},
		{"add at a stale epoch", f.m.AddPartitions("ok", pid, epoch-1, orders), kerr.ProducerFenced},
		{"group without a name", f.m.AddGroup("ok", pid, epoch, ""), kerr.InvalidGroupID},
		{"end for an unknown id", f.m.EndTxn("nobody", pid, epoch, true), kerr.InvalidProducerIDMapping},
		{"produce for an unknown id", f.m.Check("nobody", pid, epoch, "orders", 0), kerr.InvalidProducerIDMapping},
	}
	for _, c := range cases {
		wantCode(t, c.name, c.err, c.want)
	}
	if f.j.count() != n {
		t.Fatalf("%d records appended by refused requests", f.j.count()-n)
	}
	if ids := f.m.List(); len(ids) != 1 || ids[0].ID != "ok" {
		t.Fatalf("refused requests left ids behind: %+v", ids)
	}
}

func second(_ int64, _ int16, err error) error { return err }

// A failed append changes nothing; a fenced one stops the manager.
func TestAppendFailures(t *testing.T) {
	f := newFixture(t)
	pid, epoch, _ := f.m.InitProducerID("x", time.Minute, NoProducer, NoProducer)
	f.j.setFail(errors.New("iggy unreachable"))
	wantCode(t, "add while the log fails", f.m.AddPartitions("x", pid, epoch, orders), kerr.CoordinatorNotAvailable)
	_, _, err := f.m.InitProducerID("fresh", time.Minute, NoProducer, NoProducer)
	wantCode(t, "new id while the log fails", err, kerr.CoordinatorNotAvailable)
	if got, _ := f.m.Describe("x"); got.State != record.TxnEmpty || got.Partitions != nil {
		t.Fatalf("a failed append changed the state: %+v", got)
	}
	if _, ok := f.m.Describe("fresh"); ok {
		t.Fatal("a failed first InitProducerId left its id behind")
	}
	f.j.setFail(errFenced)
	wantCode(t, "add when fenced", f.m.AddPartitions("x", pid, epoch, orders), kerr.NotCoordinator)
	f.j.setFail(nil)
	wantCode(t, "add after the fence", f.m.AddPartitions("x", pid, epoch, orders), kerr.NotCoordinator)
}

// The gateway that gains the partition finishes what it finds half-ended and keeps the timeout
// of what is open, counted from when the transaction started.
func TestRestore(t *testing.T) {
	f := newFixture(t)
	f.m.Close()
	f.m = NewManager(f.m.cfg)
	t.Cleanup(f.m.Close)
	prepared := record.Transaction{ID: "p", ProducerID: 7, Epoch: 3, Timeout: time.Minute, State: record.TxnPrepareCommit,
		Partitions: orders[:1], Started: t0.Add(-time.Second), Updated: t0}
	open := record.Transaction{ID: "o", ProducerID: 8, Epoch: 1, Timeout: 10 * time.Second, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "orders", Partitions: []int32{1}}}, Started: t0.Add(-4 * time.Second), Updated: t0}
	f.m.Restore([]record.Transaction{prepared, open})
	if ends := f.mk.list(); len(ends) != 0 {
		t.Fatalf("markers written before Start: %+v", ends)
	}
	f.m.Start()
	f.state(t, "p", record.TxnCompleteCommit)
	if ends := f.mk.list(); len(ends) != 1 || ends[0].ID != "p" || ends[0].Epoch != 3 {
		t.Fatalf("markers %+v", ends)
	}
	wantCode(t, "the restored producer goes on", f.m.Check("o", 8, 1, "orders", 1), nil)
	f.clk.Advance(6*time.Second - time.Millisecond)
	if got, _ := f.m.Describe("o"); got.State != record.TxnOngoing {
		t.Fatalf("restored transaction aborted early: %s", got.State)
	}
	f.clk.Advance(time.Millisecond)
	if got := f.state(t, "o", record.TxnCompleteAbort); got.Epoch != 2 {
		t.Fatalf("epoch %d after the timeout, want 2", got.Epoch)
	}
}

// A failed marker write is tried again after the backoff, on the clock, until it succeeds.
func TestMarkersRetried(t *testing.T) {
	f := newFixture(t)
	f.mk.fail = errors.New("partition unreachable")
	f.mk.began = make(chan struct{}, 4)
	pid, epoch, _ := f.m.InitProducerID("r", time.Minute, NoProducer, NoProducer)
	wantCode(t, "add", f.m.AddPartitions("r", pid, epoch, orders), nil)
	wantCode(t, "commit", f.m.EndTxn("r", pid, epoch, true), nil)
	<-f.mk.began
	// The retry waits on the clock: until it moves, the transaction stays prepared.
	checkfor.Eventually(t, 5*time.Second, "the retry's timer", func() error {
		return checkfor.True(f.clk.Timers() > 0, "no timer")
	})
	f.mk.mu.Lock()
	f.mk.fail = nil
	f.mk.mu.Unlock()
	if got, _ := f.m.Describe("r"); got.State != record.TxnPrepareCommit {
		t.Fatalf("state %s before the retry", got.State)
	}
	f.clk.Advance(100 * time.Millisecond)
	f.state(t, "r", record.TxnCompleteCommit)
}
