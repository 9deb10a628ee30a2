package coordinator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
)

const (
	stLoading int32 = iota
	// stWaiting: claimed and restored, waiting out HandoverBound (or the previous owner's
	// release) before it answers.
	stWaiting
	stServing
	stStopped
)

// partition is one log partition this gateway holds a lease on. Its mutex orders appends: one
// batch in flight, so the journal's State is always the fold of the log up to its last append
// and a checkpoint's Through is exact.
type partition struct {
	c      *Coordinator
	id     int
	src    logio.Source
	status atomic.Int32
	fence  atomic.Bool // an append found the partition taken over
	claim  atomic.Uint64
	ctx    context.Context
	cancel context.CancelFunc
	// gained is when the sync answer that showed the gain arrived; prev (the newest claim
	// before ours) and serveAt are set before the status becomes stWaiting.
	gained  time.Time
	prev    record.Claim
	serveAt time.Time
	// done is closed once a stopped partition's manager is closed and no append is in flight.
	done chan struct{}

	mu        sync.Mutex
	st        *record.State
	next      uint64    // next log offset to apply
	claimedAt time.Time // when our claim was read back
	// alone: the lease read that gained the partition showed no other member.
	alone bool
	mgr   *group.Manager
	// txns serves the partition's transactional ids; started when the partition serves.
	txns *txn.Manager
}

func newPartition(c *Coordinator, p int, gained time.Time) *partition {
	pt := &partition{c: c, id: p, gained: gained, done: make(chan struct{}),
		src: logio.Poll{C: c.cfg.Client, P: logio.Partition{Stream: c.meta, Topic: c.topic, ID: uint32(p)}}}
	pt.ctx, pt.cancel = context.WithCancel(c.ctx)
	return pt
}

func (pt *partition) serving() bool { return pt.status.Load() == stServing && !pt.fence.Load() }

// promote starts serving a waiting partition once HandoverBound has passed since the gain, or
// at once when the previous owner released its claim.
func (pt *partition) promote() {
	if pt.status.Load() != stWaiting {
		return
	}
	early, released := pt.c.clk.Now().Before(pt.serveAt), false
	if early || pt.c.cfg.onServe != nil {
		pt.c.mu.Lock()
		released = pt.c.releasedLocked(pt.id, pt.prev)
		pt.c.mu.Unlock()
	}
	if early && !released {
		return
	}
	if pt.status.CompareAndSwap(stWaiting, stServing) {
		pt.mu.Lock()
		tm := pt.txns
		pt.mu.Unlock()
		if tm != nil {
			tm.Start()
		}
		pt.c.log.Info("partition serving", "partition", pt.id, "claim", pt.claim.Load(), "after_gain", pt.c.clk.Now().Sub(pt.gained))
		if pt.c.cfg.onServe != nil {
			pt.c.cfg.onServe(pt.id, released)
		}
		pt.c.kickAnnounce()
	}
}

// stop ends serving at once; the manager is closed in the background, since an append in flight
// holds the partition's lock until its request ends and the lease loop must not wait for it.
// Once the manager is closed and no append is in flight, the claim is recorded as released.
// Coordinator.Close waits for that.
func (pt *partition) stop(why string) {
	if pt.status.Swap(stStopped) == stStopped {
		return
	}
	pt.cancel()
	pt.c.stops.Add(1)
	go func() {
		defer pt.c.stops.Done()
		defer close(pt.done)
		pt.mu.Lock()
		mgr, tm := pt.mgr, pt.txns
		pt.mu.Unlock()
		if tm != nil {
			tm.Close()
		}
		if mgr != nil {
			mgr.Close()
		}
		if h := pt.c.cfg.beforeRelease; h != nil {
			h(pt.id)
		}
		if cl := pt.claim.Load(); cl != 0 {
			pt.c.noteReleased(pt.id, cl)
		}
	}()
	pt.c.log.Info("partition stopped", "partition", pt.id, "why", why)
}

// load replays the partition from its last checkpoint, claims it, reads the claim back and
// starts a manager with what the log holds.
func (pt *partition) load() {
	defer pt.c.wg.Done()
	start := pt.c.clk.Now()
	err := pt.loadErr()
	if err != nil {
		if pt.ctx.Err() == nil {
			pt.c.log.Warn("partition load failed; retried at the next lease read", "partition", pt.id, "err", err)
		}
		pt.stop("load failed")
		pt.c.forget(pt)
		return
	}
	pt.c.log.Info("partition claimed", "partition", pt.id, "claim", pt.claim.Load(), "took", pt.c.clk.Now().Sub(start))
	pt.promote()
}

func (pt *partition) loadErr() error {
	ctx := pt.ctx
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if err := pt.rebuild(ctx); err != nil {
		return err
	}
	// The previous owner is the node of the newest claim; its release, if any, was announced
	// before Iggy moved the partition, so a read of coordinator_owners now finds it.
	prev := pt.st.Claim()
	if err := pt.c.readOwners(ctx); err != nil && ctx.Err() == nil {
		pt.c.log.Debug("reading owner announcements before a claim", "partition", pt.id, "err", err)
	}
	// Unless the previous owner released its claim, it may still be appending (its own claim
	// among them) until HandoverBound after the gain: claim only after that, from the log as it
	// then stands, so claims strictly increase in log order and no claim is void, also when two
	// gateways gain an empty partition one after the other at start-up. A partition never
	// claimed, or last claimed and released by this gateway, gained as the group's only member,
	// is claimed at once (a fleet's first start, a lone gateway's new session).
	pt.c.mu.Lock()
	var released bool
	switch {
	case prev.Number == 0:
		released = pt.alone
	case prev.Node == pt.c.cfg.NodeID:
		// Another gateway may have gained p since this one stopped it, and be claiming now.
		released = pt.alone && pt.c.releasedLocked(pt.id, prev)
	default:
		released = pt.c.releasedLocked(pt.id, prev)
	}
	pt.c.mu.Unlock()
	if prev.Number == 0 && released && !pt.c.stillAlone(ctx) {
		// Another gateway joined since the lease read that found this one alone (two
		// gateways starting together): it may be claiming the same empty partition, so claim
		// the usual way, after HandoverBound and from the log as it then stands.
		released = false
	}
	if !released {
		if err := pt.waitRelease(ctx, prev); err != nil {
			return err
		}
		next, err := logio.Replay(ctx, pt.src, pt.st, pt.next, -1, pt.bad, nil)
		if err != nil {
			return err
		}
		pt.next = next
		prev = pt.st.Claim()
	}
	n := prev.Number + 1
	rec := record.Record{Type: record.TypeClaim, Claim: n, ClaimInfo: &record.Claim{Number: n, Node: pt.c.cfg.NodeID, Addr: pt.c.addr}}
	if err := pt.appendLocked(ctx, []record.Record{rec}, true); err != nil {
		return err
	}
	pt.claim.Store(n)
	pt.claimedAt = pt.c.clk.Now()
	gcfg := pt.c.cfg.Groups
	gcfg.Clock = pt.c.clk
	gcfg.Journal = journal{pt}
	gcfg.CommitTopic = pt.c.commitTopic(pt)
	gcfg.Logger = pt.c.log.With("partition", pt.id)
	mgr := group.NewManager(gcfg)
	var groups []record.Group
	var cgroups []record.ConsumerGroup
	var offsets []record.OffsetCommit
	for _, name := range pt.st.GroupNames() {
		if g, ok := pt.st.Group(name); ok {
			groups = append(groups, g)
		}
		if g, ok := pt.st.ConsumerGroup(name); ok {
			cgroups = append(cgroups, g)
		}
		offsets = append(offsets, pt.st.GroupOffsets(name)...)
	}
	mgr.RestoreConsumerGroups(cgroups)
	mgr.Restore(groups, offsets)
	mgr.RestoreTxnOffsets(pt.st.TxnOffsets())
	tcfg := pt.c.cfg.Txn
	tcfg.Clock = pt.c.clk
	tcfg.Journal = journal{pt}
	tcfg.Markers = offsetMarkers{next: tcfg.Markers, c: pt.c}
	tcfg.Logger = gcfg.Logger
	tm := txn.NewManager(tcfg)
	tm.Restore(pt.st.Transactions())
	pt.mgr, pt.txns = mgr, tm
	pt.prev = prev
	// Never before HandoverBound after the gain, nor before an owner that missed the move in
	// Iggy had two tail reads to find our claim (see the package doc).
	pt.serveAt = pt.gained.Add(pt.c.cfg.HandoverBound)
	if at := pt.claimedAt.Add(2 * pt.c.cfg.TailPoll); at.After(pt.serveAt) {
		pt.serveAt = at
	}
	if !pt.status.CompareAndSwap(stLoading, stWaiting) {
		tm.Close()
		mgr.Close()
		return errors.New("stopped while loading")
	}
	return nil
}

// waitRelease waits, before a claim, until HandoverBound has passed since the gain, or until
// the announcements read meanwhile list prev as released by its node (a leave whose close
// outlasted its own wait announces the release when the close ends), or until ctx ends.
func (pt *partition) waitRelease(ctx context.Context, prev record.Claim) error {
	d := pt.gained.Add(pt.c.cfg.HandoverBound).Sub(pt.c.clk.Now())
	if d <= 0 {
		return nil
	}
	t := pt.c.clk.NewTimer(d)
	defer t.Stop()
	for {
		pt.c.mu.Lock()
		if pt.c.ownersRead == nil {
			pt.c.ownersRead = make(chan struct{})
		}
		read, released := pt.c.ownersRead, prev.Number != 0 && prev.Node != pt.c.cfg.NodeID && pt.c.releasedLocked(pt.id, prev)
		pt.c.mu.Unlock()
		if released {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
			return nil
		case <-read:
		}
	}
}

// rebuild folds the partition into a new State: from the checkpoint the checkpoint consumer
// names when that is one, else from the start. A gap after the checkpoint fails the rebuild.
func (pt *partition) rebuild(ctx context.Context) error {
	from := uint64(0)
	st := record.NewState()
	if off, ok, err := pt.c.cfg.Client.GetOffset(ctx, checkpointConsumer, pt.c.meta, pt.c.topic, uint32(pt.id)); err != nil {
		return fmt.Errorf("reading the checkpoint offset: %w", err)
	} else if ok {
		if cp, ok := pt.readCheckpoint(ctx, off.StoredOffset); ok && st.Apply(off.StoredOffset, cp) {
			from = off.StoredOffset + 1
		} else {
			st = record.NewState()
		}
	}
	next, err := logio.Replay(ctx, pt.src, st, from, -1, pt.bad, nil)
	if err != nil {
		return err
	}
	pt.st, pt.next = st, next
	return nil
}

func (pt *partition) readCheckpoint(ctx context.Context, off uint64) (record.Record, bool) {
	msgs, err := pt.src.Read(ctx, off, 1)
	if err != nil || len(msgs) != 1 || msgs[0].Offset != off {
		return record.Record{}, false
	}
	r, err := record.Decode(msgs[0].Payload)
	if err != nil || r.Type != record.TypeCheckpoint {
		return record.Record{}, false
	}
	return r, true
}

func (pt *partition) bad(off uint64, err error) {
	pt.c.log.Warn("coordinator log: unreadable record skipped", "partition", pt.id, "offset", off, "err", err)
}

// fenced is the error of an append that found the partition taken over.
func (pt *partition) fenced(why string) error {
	// Stop serving now, in this request; the manager is closed outside its own call into Append.
	pt.fence.Store(true)
	pt.stop(why)
	pt.c.forget(pt)
	return fmt.Errorf("coordinator: log partition %d: %s: %w", pt.id, why, group.ErrNotCoordinator)
}

// appendLocked writes recs as one batch, reads the partition up to the batch's last record and
// returns nil only when every record of the batch was valid where it landed. claiming is the
// append of our claim (made while loading, before the partition serves).
func (pt *partition) appendLocked(ctx context.Context, recs []record.Record, claiming bool) error {
	if !claiming && !pt.serving() {
		return fmt.Errorf("coordinator: log partition %d is not served here: %w", pt.id, group.ErrNotCoordinator)
	}
	if !pt.c.leaseFresh() {
		return pt.fenced("lease not confirmed within the bound")
	}
	now := pt.c.clk.Now()
	msgs := make([]iggy.Message, len(recs))
	for i := range recs {
		if !claiming {
			recs[i].Claim = pt.claim.Load()
		}
		recs[i].Time = now
		b, err := record.Encode(recs[i])
		if err != nil {
			return err
		}
		msgs[i].Payload = b
	}
	base, err := pt.c.cfg.Client.SendMessages(ctx, pt.c.meta, pt.c.topic, uint32(pt.id), msgs)
	if err != nil {
		return fmt.Errorf("coordinator: appending to log partition %d: %w", pt.id, err)
	}
	last := base + uint64(len(msgs)) - 1
	ok := true
	next, err := logio.Replay(ctx, pt.src, pt.st, pt.next, int64(last), pt.bad, func(off uint64, r record.Record, valid bool) {
		if off >= base && off <= last && (!valid || r.Claim != recs[off-base].Claim) {
			ok = false
		}
	})
	pt.next = next
	if errors.Is(err, logio.ErrGap) {
		// Never apply across a gap: rebuild from the checkpoint and judge the batch on that.
		if rerr := pt.rebuild(ctx); rerr != nil {
			return pt.fenced("log unreadable after a gap: " + rerr.Error())
		}
		return pt.fenced("log resynced after a gap; the partition is reloaded")
	}
	if err != nil {
		return fmt.Errorf("coordinator: reading back log partition %d: %w", pt.id, err)
	}
	if !ok {
		return pt.fenced("a newer claim precedes the record")
	}
	if claiming {
		return nil
	}
	if pt.st.CheckpointDue(pt.c.cfg.CheckpointEvery, pt.c.cfg.CheckpointAge, pt.claimedAt, now) {
		pt.checkpointLocked(ctx)
	}
	return nil
}

// checkpointLocked appends the state through the last applied offset and stores the
// checkpoint's offset for the next owner. A failure is logged: the next append retries.
func (pt *partition) checkpointLocked(ctx context.Context) {
	through, _ := pt.st.Last()
	if pt.c.onSnapshot != nil {
		pt.c.onSnapshot()
	}
	cp := pt.st.Snapshot(through)
	rec := record.Record{Type: record.TypeCheckpoint, Claim: pt.claim.Load(), Time: pt.c.clk.Now(), Checkpoint: &cp}
	b, err := record.Encode(rec)
	if err != nil {
		pt.c.log.Error("checkpoint encode", "partition", pt.id, "err", err)
		return
	}
	base, err := pt.c.cfg.Client.SendMessages(ctx, pt.c.meta, pt.c.topic, uint32(pt.id), []iggy.Message{{Payload: b}})
	if err != nil {
		pt.c.log.Warn("checkpoint append failed", "partition", pt.id, "err", err)
		return
	}
	valid := false
	next, err := logio.Replay(ctx, pt.src, pt.st, pt.next, int64(base), pt.bad, func(off uint64, r record.Record, v bool) {
		if off == base {
			valid = v && r.Type == record.TypeCheckpoint
		}
	})
	pt.next = next
	if err != nil || !valid {
		pt.c.log.Warn("checkpoint not confirmed", "partition", pt.id, "valid", valid, "err", err)
		return
	}
	if err := pt.c.cfg.Client.StoreOffset(ctx, checkpointConsumer, pt.c.meta, pt.c.topic, uint32(pt.id), base); err != nil {
		pt.c.log.Warn("storing the checkpoint offset failed; the next owner replays further", "partition", pt.id, "err", err)
	}
}

// maybeCheckpoint writes a checkpoint of an idle partition when the age bound is reached.
func (pt *partition) maybeCheckpoint() {
	if !pt.serving() || !pt.mu.TryLock() {
		return
	}
	defer pt.mu.Unlock()
	if pt.st.CheckpointDue(pt.c.cfg.CheckpointEvery, pt.c.cfg.CheckpointAge, pt.claimedAt, pt.c.clk.Now()) && pt.c.leaseFresh() {
		pt.checkpointLocked(pt.ctx)
	}
}

// tail reads the partition from the last applied offset to its end; a newer claim than ours
// (another gateway gained the partition while our lease reads did not show it) stops the
// partition at once, and the next lease read that lists it loads it again from the log.
func (pt *partition) tail() {
	if st := pt.status.Load(); st != stWaiting && st != stServing {
		return
	}
	if !pt.mu.TryLock() {
		return // an append in flight reads the partition back itself
	}
	defer pt.mu.Unlock()
	if pt.st == nil {
		return
	}
	next, err := logio.Replay(pt.ctx, pt.src, pt.st, pt.next, -1, pt.bad, nil)
	pt.next = next
	switch {
	case errors.Is(err, logio.ErrGap):
		pt.stop("the log has a gap; reloaded at the next lease read")
	case err != nil:
		return
	case pt.st.Claim().Number != pt.claim.Load():
		pt.stop(fmt.Sprintf("newer claim %d by node %d", pt.st.Claim().Number, pt.st.Claim().Node))
	default:
		return
	}
	pt.c.forget(pt)
	pt.c.kickLease()
}

// journal is the group.Journal of one partition.
type journal struct{ pt *partition }

func (j journal) Append(ctx context.Context, recs ...record.Record) error {
	if len(recs) == 0 {
		return nil
	}
	j.pt.mu.Lock()
	defer j.pt.mu.Unlock()
	// A stop of the partition ends the append in flight, so that the stop's release (after the
	// lock is free) is not held up by a slow or unreachable Iggy.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(j.pt.ctx, cancel)()
	cp := make([]record.Record, len(recs))
	copy(cp, recs)
	return j.pt.appendLocked(ctx, cp, false)
}
