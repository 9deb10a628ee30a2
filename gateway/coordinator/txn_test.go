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
// which commits the offsets the producer committed to a group (kept by the group's coordinator,
// here the same log partition), and whose Complete record follows in the log; one left open is
// aborted when its timeout passes,
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
	gm, _ := (directory{a}).Manager(grp)
	if err := gm.StageTxnOffsets(committed, pid, epoch, grp, []record.TxnOffset{{Group: grp, Topic: "in", Partition: 0, Offset: 17, LeaderEpoch: -1}}, gm.TxnGuard(pid)); err != nil {
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
		req := stageIn(3, id, grp, pid, epoch, offset)
		resp, err := a.Txns().TxnOffsetCommit(ctx, kafkaIdentity(), req)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("TxnOffsetCommit: %v %+v", err, resp)
		}
	}
	fetch := func(c *Coordinator, stable bool) (int64, int16) {
		t.Helper()
		return fetchIn(t, ctx, c, grp, stable)
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

// inProcessPeers is a Config.Peer that answers as the coordinator announcing each address does,
// in process; while down, every request fails as a refused dial does.
type inProcessPeers struct {
	mu    sync.Mutex
	by    map[string]*Coordinator
	down  bool
	calls int
}

func (p *inProcessPeers) add(c *Coordinator) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.by == nil {
		p.by = map[string]*Coordinator{}
	}
	p.by[c.addr] = c
}

func (p *inProcessPeers) send(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	p.mu.Lock()
	c, down := p.by[addr], p.down
	p.calls++
	p.mu.Unlock()
	if c == nil || down {
		return nil, fmt.Errorf("dial %s: connection refused", addr)
	}
	switch r := req.(type) {
	case *kmsg.WriteTxnMarkersRequest:
		return c.Txns().WriteTxnMarkers(ctx, kafkaIdentity(), r)
	case *kmsg.AddPartitionsToTxnRequest:
		return c.Txns().AddPartitionsToTxn(ctx, kafkaIdentity(), r)
	}
	return nil, fmt.Errorf("unexpected %T", req)
}

func (p *inProcessPeers) callCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// txnFleet is two gateways with transactions on one store, sharing the log, whose requests to
// each other go through peers (which a test can take down): pa is a log partition a serves, pb
// one b serves, and each knows the other serves it.
type txnFleet struct {
	s      *testStore
	a, b   *Coordinator
	peers  *inProcessPeers
	pa, pb int
}

func startTxnFleet(t *testing.T) *txnFleet {
	t.Helper()
	f := &txnFleet{s: newStore(t), peers: &inProcessPeers{}}
	var pids atomic.Int64
	withTxns := func(c *Config) {
		c.Transactions = true
		c.Txn = txn.Config{ProducerID: func(context.Context) (int64, error) { return pids.Add(1), nil }, RetryBackoff: 20 * time.Millisecond}
		c.Peer = f.peers.send
	}
	f.a = start(t, f.s, 1, withTxns)
	a := f.a
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	f.b = start(t, f.s, 2, withTxns)
	b := f.b
	f.peers.add(a)
	f.peers.add(b)
	waitServing(t, "a and b share the log", func() error {
		sa, sb := serving(a), serving(b)
		return checkfor.True(len(sa) > 0 && len(sb) > 0 && len(sa)+len(sb) == 16 && settled(a) && settled(b), "a %v b %v", sa, sb)
	})
	for p := range serving(a) {
		f.pa = p
	}
	for p := range serving(b) {
		f.pb = p
	}
	waitServing(t, "each gateway knowing who serves the other's partition", func() error {
		oa, ob := a.Owners()[f.pb], b.Owners()[f.pa]
		return checkfor.True(oa.Node == 2 && ob.Node == 1, "a sees %d on %d, b sees %d on %d", oa.Node, f.pb, ob.Node, f.pa)
	})
	return f
}

// initAtB is the transaction manager of b that coordinates id, with the producer id and epoch
// of a first InitProducerId of id (a minute's timeout).
func (f *txnFleet) initAtB(t *testing.T, id string) (*txn.Manager, int64, int16) {
	t.Helper()
	tm, code := (directory{f.b}).Txns(id)
	if tm == nil {
		t.Fatalf("b does not serve %s: code %d", id, code)
	}
	pid, epoch, err := tm.InitProducerID(id, time.Minute, txn.NoProducer, txn.NoProducer)
	if err != nil {
		t.Fatal(err)
	}
	return tm, pid, epoch
}

// A group coordinated by one gateway and a transactional id by another (a fleet): the group's
// coordinator checks the TxnOffsetCommit at the transaction's coordinator and keeps the offsets
// in the group's log partition (RequireStable answers UNSTABLE_OFFSET_COMMIT); the transaction's
// coordinator, at EndTxn, sends the commit marker to the group's coordinator and appends the
// Complete record only once that marker is durable: while the group's gateway cannot be reached
// the transaction stays PrepareCommit and the offsets pending, and once it can the offsets are
// committed. An abort drops what was staged the same way.
func TestTxnOffsetsAcrossGateways(t *testing.T) {
	f := startTxnFleet(t)
	s, a, b, peers, pa := f.s, f.a, f.b, f.peers, f.pa
	grp, id := groupIn(f.pa, "fleet-group"), groupIn(f.pb, "fleet-txn")
	ctx := ctxT(t)
	tm, pid, epoch := f.initAtB(t, id)
	commitOffset := func(offset int64) int16 {
		t.Helper()
		req := stageIn(3, id, grp, pid, epoch, offset)
		// Retried while a partition moves, as a client retries.
		var code int16
		checkfor.Eventually(t, 10*time.Second, "a TxnOffsetCommit answered", func() error {
			resp, err := a.Txns().TxnOffsetCommit(ctx, kafkaIdentity(), req)
			if err != nil {
				t.Fatal(err)
			}
			code = resp.Topics[0].Partitions[0].ErrorCode
			return checkfor.True(code != kerr.CoordinatorNotAvailable.Code && code != kerr.CoordinatorLoadInProgress.Code, "code %d", code)
		})
		return code
	}
	fetch := func(stable bool) (int64, int16) {
		t.Helper()
		return fetchIn(t, ctx, a, grp, stable)
	}
	// Not yet added to the transaction: the coordinator at b says so.
	if code := commitOffset(40); code != kerr.InvalidTxnState.Code {
		t.Fatalf("TxnOffsetCommit of a group not added: code %d", code)
	}
	if err := tm.AddGroup(id, pid, epoch, grp); err != nil {
		t.Fatal(err)
	}
	if code := commitOffset(41); code != 0 {
		t.Fatalf("TxnOffsetCommit: code %d", code)
	}
	if off, code := fetch(true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("RequireStable with offsets pending: offset %d code %d", off, code)
	}
	if pend := fullReplay(t, s.client(t), a, pa).TxnOffsets(); len(pend) != 1 || pend[0].ProducerID != pid || pend[0].Offsets[0].Offset != 41 {
		t.Fatalf("the group's log partition holds %+v", pend)
	}
	peers.mu.Lock()
	peers.down = true
	peers.mu.Unlock()
	calls := peers.callCount()
	if err := tm.EndTxn(id, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "b trying the marker twice", func() error {
		return checkfor.True(peers.callCount() >= calls+2, "%d calls", peers.callCount()-calls)
	})
	if x, _ := tm.Describe(id); x.State != record.TxnPrepareCommit {
		t.Fatalf("the transaction is %s while its group's marker cannot be written", x.State)
	}
	if _, code := fetch(true); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("RequireStable before the marker: code %d", code)
	}
	peers.mu.Lock()
	peers.down = false
	peers.mu.Unlock()
	checkfor.Eventually(t, 10*time.Second, "the commit complete", func() error {
		x, _ := tm.Describe(id)
		return checkfor.True(x.State == record.TxnCompleteCommit, "%s", x.State)
	})
	if off, code := fetch(true); code != 0 || off != 41 {
		t.Fatalf("after the commit: offset %d code %d, want 41", off, code)
	}
	if pend := fullReplay(t, s.client(t), a, pa).TxnOffsets(); len(pend) != 0 {
		t.Fatalf("pending after the commit: %+v", pend)
	}
	// An abort drops what the next transaction committed to the group.
	if err := tm.AddGroup(id, pid, epoch, grp); err != nil {
		t.Fatal(err)
	}
	if code := commitOffset(99); code != 0 {
		t.Fatalf("TxnOffsetCommit: code %d", code)
	}
	if err := tm.EndTxn(id, pid, epoch, false); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "the abort complete", func() error {
		x, _ := tm.Describe(id)
		return checkfor.True(x.State == record.TxnCompleteAbort, "%s", x.State)
	})
	if off, code := fetch(true); code != 0 || off != 41 {
		t.Fatalf("after the abort: offset %d code %d, want 41", off, code)
	}
	// The group's gateway leaves with offsets pending: b restores them from the group's log
	// partition, answers RequireStable from them, and the commit's marker (now b's own) commits
	// them there.
	if err := tm.AddGroup(id, pid, epoch, grp); err != nil {
		t.Fatal(err)
	}
	if code := commitOffset(77); code != 0 {
		t.Fatalf("TxnOffsetCommit: code %d", code)
	}
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	waitServing(t, "b serving the group's log partition", func() error {
		return checkfor.True(serving(b)[pa], "b serves %v", serving(b))
	})
	fetchAt := func(c *Coordinator) (int64, int16) {
		t.Helper()
		return fetchIn(t, ctx, c, grp, true)
	}
	if off, code := fetchAt(b); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("RequireStable at the group's next gateway: offset %d code %d", off, code)
	}
	if err := tm.EndTxn(id, pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "the commit at the group's next gateway", func() error {
		off, code := fetchAt(b)
		return checkfor.True(code == 0 && off == 77, "offset %d code %d", off, code)
	})
}

// Transactions v2 on one gateway, the group and the transactional id in different log
// partitions: a TxnOffsetCommit v5 adds the group's log partition to the transaction itself
// (no AddOffsetsToTxn), EndTxn v5 bumps the epoch, and the marker still commits the offsets
// staged at the epoch before the bump; the next transaction, at the bumped epoch, stages and
// aborts without touching them.
func TestTxnOffsetsTransactionsV2(t *testing.T) {
	s := newStore(t)
	var pids atomic.Int64
	a := start(t, s, 1, func(c *Config) {
		c.Transactions = true
		c.Txn = txn.Config{ProducerID: func(context.Context) (int64, error) { return pids.Add(1), nil }}
	})
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	grp, id := groupIn(4, "v2-group"), groupIn(11, "v2-txn")
	ctx := ctxT(t)
	tm, _ := (directory{a}).Txns(id)
	pid, epoch, err := tm.InitProducerID(id, time.Minute, txn.NoProducer, txn.NoProducer)
	if err != nil {
		t.Fatal(err)
	}
	stage := func(epoch int16, offset int64) {
		t.Helper()
		req := stageIn(5, id, grp, pid, epoch, offset)
		resp, err := a.Txns().TxnOffsetCommit(ctx, kafkaIdentity(), req)
		if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("TxnOffsetCommit v5: %v %+v", err, resp)
		}
	}
	fetch := func() (int64, int16) {
		t.Helper()
		return fetchIn(t, ctx, a, grp, true)
	}
	end := func(epoch int16, commit bool) int16 {
		t.Helper()
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 5, id, pid, epoch, commit
		resp, err := a.Txns().EndTxn(ctx, kafkaIdentity(), req)
		if err != nil || resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != epoch+1 {
			t.Fatalf("EndTxn v5: %v %+v", err, resp)
		}
		return resp.ProducerEpoch
	}
	stage(epoch, 41)
	if x, _ := tm.Describe(id); x.State != record.TxnOngoing || len(x.Partitions) != 1 || x.Partitions[0].Topic != txn.GroupsTopic ||
		x.Partitions[0].Partitions[0] != int32(record.Partition(grp)) {
		t.Fatalf("after the TxnOffsetCommit v5: %+v", x)
	}
	if off, code := fetch(); code != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("RequireStable with offsets staged: offset %d code %d", off, code)
	}
	epoch = end(epoch, true)
	checkfor.Eventually(t, 10*time.Second, "the committed offset", func() error {
		off, code := fetch()
		return checkfor.True(code == 0 && off == 41, "offset %d code %d", off, code)
	})
	stage(epoch, 99)
	end(epoch, false)
	checkfor.Eventually(t, 10*time.Second, "the abort completed", func() error {
		x, _ := tm.Describe(id)
		return checkfor.True(x.State == record.TxnCompleteAbort, "%s", x.State)
	})
	if off, code := fetch(); code != 0 || off != 41 {
		t.Fatalf("after the abort: offset %d code %d, want 41", off, code)
	}
}

// stageIn is a TxnOffsetCommit of the given version staging offset for partition 2 of topic
// "in" in grp, for transactional id id at pid and epoch.
// Transactions v2 on a fleet, as franz-go's GroupTransactSession runs it: the group on gateway a,
// the transactional id on gateway b. EndTxn v5 commits at b and is answered the bumped epoch
// once its Prepare record is read back; its marker for the group's log partition must then reach
// a, and while it cannot (here a is unreachable; on a loaded fleet it is only slower) the
// producer's next end, an abort at the epoch it was given, is CONCURRENT_TRANSACTIONS, which
// the client retries. Answering it PRODUCER_FENCED, as b did, failed franz-go's TestTxnEtl on a
// fleet. Once the marker is written the retried abort succeeds and the commit's offset stands.
func TestTransactionsV2NextEndWhileTheMarkerTravels(t *testing.T) {
	f := startTxnFleet(t)
	a, b := f.a, f.b
	grp, id := groupIn(f.pa, "v2-fleet-group"), groupIn(f.pb, "v2-fleet-txn")
	ctx := ctxT(t)
	tm, pid, epoch := f.initAtB(t, id)
	// The TxnOffsetCommit v5 at a adds the group's log partition to the transaction at b.
	checkfor.Eventually(t, 10*time.Second, "a TxnOffsetCommit v5 taken", func() error {
		resp, err := a.Txns().TxnOffsetCommit(ctx, kafkaIdentity(), stageIn(5, id, grp, pid, epoch, 41))
		if err != nil {
			t.Fatal(err)
		}
		return checkfor.True(resp.Topics[0].Partitions[0].ErrorCode == 0, "code %d", resp.Topics[0].Partitions[0].ErrorCode)
	})
	end := func(epoch int16, commit bool) *kmsg.EndTxnResponse {
		t.Helper()
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 5, id, pid, epoch, commit
		resp, err := b.Txns().EndTxn(ctx, kafkaIdentity(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	f.peers.mu.Lock()
	f.peers.down = true
	f.peers.mu.Unlock()
	calls := f.peers.callCount()
	resp := end(epoch, true)
	if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn v5 commit: %+v", resp)
	}
	next := resp.ProducerEpoch
	checkfor.Eventually(t, 10*time.Second, "b trying the group's marker twice", func() error {
		return checkfor.True(f.peers.callCount() >= calls+2, "%d calls", f.peers.callCount()-calls)
	})
	if x, _ := tm.Describe(id); x.State != record.TxnPrepareCommit || x.Epoch != next {
		t.Fatalf("the transaction is %s at %d while its group's marker cannot be written", x.State, x.Epoch)
	}
	if resp := end(next, false); resp.ErrorCode != kerr.ConcurrentTransactions.Code {
		t.Fatalf("the next abort, at the epoch the commit gave, while the commit's marker travels: code %d, want CONCURRENT_TRANSACTIONS", resp.ErrorCode)
	}
	f.peers.mu.Lock()
	f.peers.down = false
	f.peers.mu.Unlock()
	checkfor.Eventually(t, 10*time.Second, "the retried abort answered", func() error {
		resp = end(next, false)
		return checkfor.True(resp.ErrorCode != kerr.ConcurrentTransactions.Code, "still CONCURRENT_TRANSACTIONS")
	})
	if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != next+1 {
		t.Fatalf("the retried abort: %+v", resp)
	}
	if off, code := fetchIn(t, ctx, a, grp, true); code != 0 || off != 41 {
		t.Fatalf("after the commit and the empty abort: offset %d code %d, want 41", off, code)
	}
}

func stageIn(version int16, id, grp string, pid int64, epoch int16, offset int64) *kmsg.TxnOffsetCommitRequest {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = version, id, grp, pid, epoch, -1
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic = "in"
	rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = 2, offset, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// fetchIn is grp's committed offset of partition 2 of topic "in" at c, with its error code (the
// group's, when the whole answer failed), asked with RequireStable as stable says.
func fetchIn(t *testing.T, ctx context.Context, c *Coordinator, grp string, stable bool) (int64, int16) {
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
