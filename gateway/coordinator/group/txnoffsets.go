package group

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// TxnCommit is what a TxnOffsetCommit says about the committing member (KIP-447): its member id,
// group instance id and generation (a KIP-848 group's member epoch); Generation -1 and no member
// id is a producer that does not use the group's membership (TxnOffsetCommit v0-2).
type TxnCommit struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
}

// TxnCommitCheck is Kafka's check of a TxnOffsetCommit against the group, made before the offsets
// are staged in the transaction: the group's code (0 when the commit may go on) and, for a
// KIP-848 group's member at an older epoch, the code of each partition. It journals nothing.
//
// Classic group: a commit without member, instance and generation is taken (even while the group
// has members, as Kafka takes a pre-KIP-447 producer's); otherwise the member must be the group's
// (UNKNOWN_MEMBER_ID; FENCED_INSTANCE_ID for a stale static instance) at the group's generation
// (ILLEGAL_GENERATION). A rebalance in progress does not refuse it, as in Kafka.
// KIP-848 group: the member epoch is checked as OffsetCommit v9 checks it (UNKNOWN_MEMBER_ID,
// STALE_MEMBER_EPOCH). A group it does not know is an empty one: a commit naming a member or a
// generation is UNKNOWN_MEMBER_ID there, as in Kafka.
func (m *Manager) TxnCommitCheck(c TxnCommit) (code int16, partition func(topic string, p int32) int16) {
	if c.Group == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return kerr.NotCoordinator.Code, nil
	}
	simple := c.Generation < 0 && c.MemberID == "" && (c.InstanceID == nil || *c.InstanceID == "")
	g := m.groups[c.Group]
	if g == nil {
		// An empty group: only a commit naming no member can be taken.
		if simple {
			return 0, nil
		}
		return kerr.UnknownMemberID.Code, nil
	}
	if g.state == stDead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	if g.cg != nil {
		return g.cg.CommitCode(c.MemberID, c.Generation, 9)
	}
	if simple {
		return 0, nil
	}
	if code := g.checkMember(c.MemberID, c.InstanceID); code != 0 {
		return code, nil
	}
	if c.Generation != g.generation {
		return kerr.IllegalGeneration.Code, nil
	}
	return 0, nil
}

// TxnCommitTopics checks the topics of a TxnOffsetCommit as OffsetCommit does: the code of each
// topic the identity cannot see, and the partition count of the others (nil without storage).
func TxnCommitTopics(ctx context.Context, id kafka.Identity, topics []string) (codes map[string]int16, parts map[string]int32) {
	return topicCodes(ctx, id, topics)
}

// CommitStaged commits the offsets a committed transaction staged for this manager's groups, as
// an OffsetCommit would (one record each, kept once the log holds them), without a member check:
// the check was made when they were staged. A group it does not have is created. Committing the
// same offsets again (the end of a transaction written a second time) changes nothing a reader
// could tell.
func (m *Manager) CommitStaged(offsets []record.TxnOffset) error {
	if len(offsets) == 0 {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	now := m.clk.Now()
	byGroup := map[string][]record.Record{}
	var order []string
	for _, o := range offsets {
		oc := record.OffsetCommit{Group: o.Group, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset,
			LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, Expire: now.Add(m.cfg.OffsetRetention)}
		if byGroup[o.Group] == nil {
			order = append(order, o.Group)
		}
		byGroup[o.Group] = append(byGroup[o.Group], record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &oc})
	}
	m.mu.Unlock()
	for _, name := range order {
		if err := m.commitRecords(name, byGroup[name]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) commitRecords(name string, recs []record.Record) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	g := m.groupOrNew(name)
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		m.dropIfUnused(g)
		return kerr.ErrorForCode(code)
	}
	for _, r := range recs {
		oc := *r.OffsetCommit
		g.offsets[tp{oc.Topic, oc.Partition}] = oc
	}
	return nil
}

// txnOffsets is what transactions committed to a manager's groups (TxnOffsetCommit) and have not
// ended: the pending txn-offsets records of its log partition, by group and producer id, and an
// index of how many producers hold an offset of each group partition, so OffsetFetch's
// RequireStable is one map lookup per partition. Guarded by Manager.mu; mu orders the stages and
// ends, each of which reads the pending set, appends, and applies what it read back.
type txnOffsets struct {
	mu      sync.Mutex
	pending map[string]map[int64]*record.TxnOffsets
	held    map[txnKey]int
	// ends counts the markers each producer id got here (EndTxnOffsets), the guard of a
	// TxnOffsetCommit checked at the transaction's coordinator (TxnGuard): a stage whose
	// transaction a marker ended after the check is refused, as KIP-890 guards an append
	// with its verification. Kept for the last maxGuards producers; a producer dropped reads
	// as 0, so at worst a stage racing the drop is refused and retried.
	ends  map[int64]producerEnds
	order []int64 // producer ids of ends, oldest first
}

// producerEnds is what the markers of one producer id did here: how many came, and the highest
// epoch one named. A marker names the epoch its transaction staged offsets at, so a stage at a
// newer epoch is of a later transaction than every marker below it: the marker of a
// transactions-v2 producer's previous transaction, which may reach the group while the
// TxnOffsetCommit of the next one is being checked (it adds the group's partition, and waits for
// that end), does not refuse it.
type producerEnds struct {
	n   uint64
	top int16
}

// maxGuards bounds the producers whose marker counts a manager keeps.
const maxGuards = 4096

type txnKey struct {
	group string
	tp
}

func newTxnOffsets() txnOffsets {
	return txnOffsets{pending: map[string]map[int64]*record.TxnOffsets{}, held: map[txnKey]int{}, ends: map[int64]producerEnds{}}
}

// set makes o the pending offsets of its producer in its group (nil o: none), keeping the index.
// Called with Manager.mu held.
func (x *txnOffsets) set(group string, pid int64, o *record.TxnOffsets) {
	if old := x.pending[group][pid]; old != nil {
		for _, off := range old.Offsets {
			k := txnKey{group, tp{off.Topic, off.Partition}}
			if x.held[k]--; x.held[k] <= 0 {
				delete(x.held, k)
			}
		}
		delete(x.pending[group], pid)
		if len(x.pending[group]) == 0 {
			delete(x.pending, group)
		}
	}
	if o == nil {
		return
	}
	if x.pending[group] == nil {
		x.pending[group] = map[int64]*record.TxnOffsets{}
	}
	x.pending[group][pid] = o
	for _, off := range o.Offsets {
		x.held[txnKey{group, tp{off.Topic, off.Partition}}]++
	}
}

// ended counts a marker of producerID at epoch. Called with Manager.mu held.
func (x *txnOffsets) ended(producerID int64, epoch int16) {
	e, ok := x.ends[producerID]
	if !ok {
		x.order = append(x.order, producerID)
		if len(x.order) > maxGuards {
			delete(x.ends, x.order[0])
			x.order = x.order[1:]
		}
		e.top = epoch
	}
	e.n++
	e.top = max(e.top, epoch)
	x.ends[producerID] = e
}

// TxnGuard is the guard a TxnOffsetCommit of producerID takes before its transaction is checked
// at the transaction's coordinator, and hands to StageTxnOffsets.
func (m *Manager) TxnGuard(producerID int64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.txn.ends[producerID].n
}

// RestoreTxnOffsets loads the pending txn-offsets the log holds (record.State.TxnOffsets) before
// the manager serves.
func (m *Manager) RestoreTxnOffsets(pending []record.TxnOffsets) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range pending {
		o := cloneTxnOffsets(pending[i])
		m.txn.set(o.Group, o.ProducerID, &o)
	}
}

// TxnOffsets returns the pending txn-offsets the manager holds, sorted by group and producer id.
func (m *Manager) TxnOffsets() []record.TxnOffsets {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.TxnOffsets
	for _, byPID := range m.txn.pending {
		for _, o := range byPID {
			out = append(out, cloneTxnOffsets(*o))
		}
	}
	slices.SortFunc(out, func(a, b record.TxnOffsets) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return cmp.Compare(a.ProducerID, b.ProducerID)
	})
	return out
}

// Unstable says whether a transaction that has not ended holds an offset of the group's
// partition (OffsetFetch with RequireStable answers it UNSTABLE_OFFSET_COMMIT).
func (m *Manager) Unstable(group, topic string, partition int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.txn.held[txnKey{group, tp{topic, partition}}] > 0
}

// StageTxnOffsets keeps offsets (of one group, sorted by topic and partition, each with Group
// set) as what the transaction of producerID at epoch committed to the group, once the member
// and the transaction were checked: a txn-offsets record holding every offset the producer
// staged for the group so far is appended and read back before it returns. A later offset of a
// partition replaces the staged one; staging what is staged appends nothing. Offsets staged at an
// older epoch of the producer are replaced whole (the coordinator ended that transaction before
// it gave the producer its new epoch); an epoch older than the staged one is PRODUCER_FENCED.
// guard is TxnGuard's answer from before the transaction was checked: when a marker of the
// producer came here since, the transaction that was checked has ended, and the offsets are
// refused with INVALID_TXN_STATE instead of staying pending with no marker to come; markers all
// older than epoch (a previous transaction's) do not refuse it.
func (m *Manager) StageTxnOffsets(transactionalID string, producerID int64, epoch int16, group string, offsets []record.TxnOffset, guard uint64) error {
	if len(offsets) == 0 {
		return nil
	}
	m.txn.mu.Lock()
	defer m.txn.mu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return kerr.NotCoordinator
	}
	if e := m.txn.ends[producerID]; e.n != guard && e.top >= epoch {
		m.mu.Unlock()
		return kerr.InvalidTxnState
	}
	next := record.TxnOffsets{Group: group, TransactionalID: transactionalID, ProducerID: producerID, Epoch: epoch}
	if old := m.txn.pending[group][producerID]; old != nil {
		if epoch < old.Epoch {
			m.mu.Unlock()
			return kerr.ProducerFenced
		}
		if epoch == old.Epoch {
			next.Offsets = slices.Clone(old.Offsets)
		}
	}
	changed := false
	for _, o := range offsets {
		o.Group = group
		i, found := slices.BinarySearchFunc(next.Offsets, o, func(a, b record.TxnOffset) int { return record.CompareTxnOffset(&a, &b) })
		switch {
		case !found:
			next.Offsets = slices.Insert(next.Offsets, i, o)
			changed = true
		case next.Offsets[i] != o:
			next.Offsets[i] = o
			changed = true
		}
	}
	if old := m.txn.pending[group][producerID]; !changed && old != nil && old.Epoch == epoch && old.TransactionalID == transactionalID {
		m.mu.Unlock()
		return nil
	}
	g := m.groups[group]
	if g == nil {
		g = newGroup(group)
		g.emptySince = m.clk.Now()
		m.groups[group] = g
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	rec := next
	err := m.append(wait, []record.Record{{Type: record.TypeTxnOffsets, TxnOffsets: &rec}})
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		m.dropIfUnused(g)
		return kerr.ErrorForCode(code)
	}
	m.txn.set(group, producerID, &next)
	return nil
}

// EndTxnOffsets ends what the transaction of producerID committed to this manager's groups, as
// the marker of a transaction on the groups' log partition (WriteTxnMarkers): on commit the
// offsets are committed (the OffsetCommit records of a group and its txn-offsets end record, one
// batch, read back before they count), on abort they are dropped (the end record alone); offsets
// staged at an older epoch than a commit marker's are dropped too. A producer with nothing
// pending here ends nothing: one end record naming no group is appended and read back, so the
// answer comes from the partition's current coordinator only, and a marker written again (a
// retry, or the next transaction coordinator after a handover) is harmless. A marker at an
// epoch older than the offsets staged is INVALID_PRODUCER_EPOCH, and nothing is ended. The
// groups are ended one at a time: an error leaves the ones not yet ended pending, and the
// marker's retry ends them.
func (m *Manager) EndTxnOffsets(producerID int64, epoch int16, commit bool) error {
	m.txn.mu.Lock()
	defer m.txn.mu.Unlock()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return kerr.NotCoordinator
	}
	var groups []string
	for name, byPID := range m.txn.pending {
		if o := byPID[producerID]; o != nil {
			if epoch < o.Epoch {
				m.mu.Unlock()
				return kerr.InvalidProducerEpoch
			}
			groups = append(groups, name)
		}
	}
	// From here on a TxnOffsetCommit checked before this marker is refused (TxnGuard).
	m.txn.ended(producerID, epoch)
	m.mu.Unlock()
	if len(groups) == 0 {
		// Nothing pending here, as this manager knows it. It may have lost the partition to
		// a gateway that has offsets of the producer pending: only the log's read-back tells,
		// so the marker appends an end record naming no group, which the next owner's claim
		// fences, and the transaction's coordinator then asks that one.
		end := record.TxnOffsets{ProducerID: producerID, Epoch: epoch, End: record.TxnOffsetsAbort}
		if commit {
			end.End = record.TxnOffsetsCommit
		}
		now := make(chan struct{})
		close(now)
		err := m.append(now, []record.Record{{Type: record.TypeTxnOffsets, TxnOffsets: &end}})
		m.mu.Lock()
		defer m.mu.Unlock()
		if code := m.journalCode(err); code != 0 {
			return kerr.ErrorForCode(code)
		}
		return nil
	}
	slices.Sort(groups)
	for _, name := range groups {
		if err := m.endTxnGroup(name, producerID, epoch, commit); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) endTxnGroup(name string, producerID int64, epoch int16, commit bool) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return kerr.NotCoordinator
	}
	o := m.txn.pending[name][producerID]
	end := record.TxnOffsets{Group: name, TransactionalID: o.TransactionalID, ProducerID: producerID, Epoch: epoch, End: record.TxnOffsetsAbort}
	var recs []record.Record
	// Offsets staged at an older epoch belong to a transaction that ended without them (a
	// stage that landed after its abort): a commit marker of a later epoch drops them.
	if commit && o.Epoch == epoch {
		end.End = record.TxnOffsetsCommit
		now := m.clk.Now()
		for _, x := range o.Offsets {
			oc := record.OffsetCommit{Group: name, Topic: x.Topic, Partition: x.Partition, Offset: x.Offset,
				LeaderEpoch: x.LeaderEpoch, Metadata: x.Metadata, Expire: now.Add(m.cfg.OffsetRetention)}
			recs = append(recs, record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &oc})
		}
	}
	recs = append(recs, record.Record{Type: record.TypeTxnOffsets, TxnOffsets: &end})
	g := m.groupOrNew(name)
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		m.dropIfUnused(g)
		return kerr.ErrorForCode(code)
	}
	for _, r := range recs {
		if oc := r.OffsetCommit; oc != nil {
			g.offsets[tp{oc.Topic, oc.Partition}] = *oc
		}
	}
	m.txn.set(name, producerID, nil)
	m.dropIfUnused(g)
	return nil
}

func cloneTxnOffsets(o record.TxnOffsets) record.TxnOffsets {
	o.Offsets = slices.Clone(o.Offsets)
	return o
}
