package txn

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// NoProducer is the producer id and epoch of a request that names none (InitProducerId before
// KIP-360, or a first one).
const NoProducer = -1

// InitProducerID gives the transactional id its producer id and next epoch, as Kafka's
// InitProducerId does with a transactional id: a new id gets a fresh producer id at epoch 0, a
// known one the next epoch (which fences every older incarnation). An open transaction of the
// previous incarnation is aborted first, and CONCURRENT_TRANSACTIONS answered until that is
// done; the client asks again. expectID and expectEpoch are the pair a KIP-360 client holds
// (NoProducer when it names none): the id's current pair is bumped, and the pair before the last
// bump a KIP-360 client asked for (Transaction.Last) is the retry of that bump, answered with the
// current pair unchanged; any other pair is PRODUCER_FENCED.
func (m *Manager) InitProducerID(id string, timeout time.Duration, expectID int64, expectEpoch int16) (int64, int16, error) {
	if len(id) == 0 || len(id) > MaxIDLength {
		return NoProducer, NoProducer, kerr.InvalidRequest
	}
	if timeout <= 0 || timeout > m.cfg.MaxTimeout {
		return NoProducer, NoProducer, kerr.InvalidTransactionTimeout
	}
	e, err := m.lock(id, true)
	if err != nil {
		return NoProducer, NoProducer, err
	}
	defer m.unlock(e)
	t := e.t
	expected := expectID != NoProducer
	retry := expected && isLast(&t, expectID, expectEpoch)
	if t.State != record.TxnDead && expected && !retry && (expectID != t.ProducerID || expectEpoch != t.Epoch) && !isNext(&t, expectID, expectEpoch) {
		return NoProducer, NoProducer, kerr.ProducerFenced
	}
	next := cloneTxn(t)
	switch t.State {
	case record.TxnDead:
		pid, err := m.newProducerID()
		if err != nil {
			m.log.Warn("InitProducerId: no producer id", "transactional_id", id, "err", err)
			return NoProducer, NoProducer, kerr.CoordinatorNotAvailable
		}
		next = record.Transaction{ID: id, ProducerID: pid, Epoch: 0}
	case record.TxnPrepareCommit, record.TxnPrepareAbort:
		return NoProducer, NoProducer, kerr.ConcurrentTransactions
	case record.TxnOngoing:
		// The previous incarnation's transaction is aborted at a bumped epoch; the client asks
		// again once it is complete.
		if err := m.commit(e, m.fence(t)); err != nil {
			return NoProducer, NoProducer, err
		}
		return NoProducer, NoProducer, kerr.ConcurrentTransactions
	default: // Empty, CompleteCommit, CompleteAbort
		if retry {
			// The bump this producer asked for is done and its answer was lost: the current
			// pair is the answer again (with the timeout it asks for, as Kafka's).
			break
		}
		if err := m.bump(&next); err != nil {
			return NoProducer, NoProducer, kerr.CoordinatorNotAvailable
		}
		// A KIP-360 producer may not see this answer and ask again with the pair it holds; a
		// new incarnation fences every older one, so no retry of theirs is taken.
		next.Last = nil
		if expected {
			next.Last = &record.ProducerEpoch{ProducerID: t.ProducerID, Epoch: t.Epoch}
		}
	}
	next.State, next.Timeout = record.TxnEmpty, timeout
	next.Partitions, next.Groups, next.Offsets, next.Started = nil, nil, nil, time.Time{}
	if err := m.commit(e, next); err != nil {
		return NoProducer, NoProducer, err
	}
	return next.ProducerID, next.Epoch, nil
}

// refused logs, at debug level, a request of the producer at producerID and epoch refused with
// err, beside the pair and state the id holds: what tells a fenced producer's stale epoch from a
// current producer that came while its previous end was written.
func (m *Manager) refused(t *record.Transaction, request string, producerID int64, epoch int16, err error) {
	m.log.Debug(request+" refused", "transactional_id", t.ID, "producer_id", producerID, "epoch", epoch, "err", err,
		"held_producer_id", t.ProducerID, "held_epoch", t.Epoch, "state", t.State.String())
}

// isLast reports whether producerID and epoch are t's pair before its last bump (Last).
func isLast(t *record.Transaction, producerID int64, epoch int16) bool {
	return t.Last != nil && t.Last.ProducerID == producerID && t.Last.Epoch == epoch
}

// isNext reports whether producerID and epoch are the new producer id a transactions-v2 end that
// spent the epochs answered (Next) while that end is written: the producer's own pair, which t
// takes with its Complete record.
func isNext(t *record.Transaction, producerID int64, epoch int16) bool {
	return t.Next != nil && t.Next.ProducerID == producerID && t.Next.Epoch == epoch
}

// ending reports whether t's end is being written (PrepareCommit, PrepareAbort): its markers are
// not all durable yet, and the id takes no change until they are.
func ending(t *record.Transaction) bool {
	return t.State == record.TxnPrepareCommit || t.State == record.TxnPrepareAbort
}

// producer checks that a request comes from the id's current producer, and that its transaction
// can take a change now. While an end is written that is CONCURRENT_TRANSACTIONS for the pair
// its EndTxn v5 answered too, a new producer id included (Next): the producer went on with it.
// Called with e locked.
func producer(t *record.Transaction, producerID int64, epoch int16) error {
	switch {
	case ending(t) && isNext(t, producerID, epoch):
		return kerr.ConcurrentTransactions
	case t.State == record.TxnDead || t.ProducerID != producerID:
		return kerr.InvalidProducerIDMapping
	case t.Epoch != epoch:
		return kerr.ProducerFenced
	case ending(t):
		return kerr.ConcurrentTransactions
	}
	return nil
}

// AddPartitions adds data partitions to the producer's transaction, beginning one when none is
// open. Adding only partitions the transaction has appends nothing.
func (m *Manager) AddPartitions(id string, producerID int64, epoch int16, parts []record.TxnTopic) error {
	return m.add(id, producerID, epoch, func(t *record.Transaction) bool {
		changed := false
		for _, tp := range parts {
			for _, p := range tp.Partitions {
				changed = addPartition(t, tp.Topic, p) || changed
			}
		}
		return changed
	})
}

// AddGroup adds a consumer group to the producer's transaction (AddOffsetsToTxn), beginning
// one when none is open: its offsets staged by TxnOffsetCommit commit with the transaction.
func (m *Manager) AddGroup(id string, producerID int64, epoch int16, group string) error {
	if group == "" {
		return kerr.InvalidGroupID
	}
	return m.add(id, producerID, epoch, func(t *record.Transaction) bool {
		i, found := slices.BinarySearch(t.Groups, group)
		if !found {
			t.Groups = slices.Insert(t.Groups, i, group)
		}
		return !found
	})
}

func (m *Manager) add(id string, producerID int64, epoch int16, change func(*record.Transaction) bool) error {
	e, err := m.lock(id, false)
	if err != nil {
		return err
	}
	defer m.unlock(e)
	if err := producer(&e.t, producerID, epoch); err != nil {
		return err
	}
	next := cloneTxn(e.t)
	if next.State != record.TxnOngoing {
		next.State, next.Partitions, next.Groups, next.Offsets, next.Started = record.TxnOngoing, nil, nil, nil, m.clk.Now()
		change(&next)
		return m.commit(e, next)
	}
	if !change(&next) {
		return nil
	}
	return m.commit(e, next)
}

// addPartition adds topic/p to t's partitions, kept sorted; false when t had it.
func addPartition(t *record.Transaction, topic string, p int32) bool {
	i, found := slices.BinarySearchFunc(t.Partitions, topic, func(tt record.TxnTopic, name string) int { return strings.Compare(tt.Topic, name) })
	if !found {
		t.Partitions = slices.Insert(t.Partitions, i, record.TxnTopic{Topic: topic, Partitions: []int32{p}})
		return true
	}
	ps := t.Partitions[i].Partitions
	j, had := slices.BinarySearch(ps, p)
	if had {
		return false
	}
	t.Partitions[i].Partitions = slices.Insert(ps, j, p)
	return true
}

// EndTxn commits or aborts the producer's open transaction: the answer comes once the Prepare
// record is read back, and the markers follow. The retry of an end that is already complete
// succeeds; an end while one is being written is CONCURRENT_TRANSACTIONS, one that contradicts
// it, or one with no transaction open, INVALID_TXN_STATE.
func (m *Manager) EndTxn(id string, producerID int64, epoch int16, commit bool) error {
	e, err := m.lock(id, false)
	if err != nil {
		return err
	}
	defer m.unlock(e)
	t := &e.t
	switch {
	case t.State == record.TxnDead || t.ProducerID != producerID:
		return kerr.InvalidProducerIDMapping
	case t.Epoch != epoch:
		return kerr.ProducerFenced
	}
	switch t.State {
	case record.TxnOngoing:
		next := cloneTxn(*t)
		next.State = record.TxnPrepareAbort
		if commit {
			next.State = record.TxnPrepareCommit
		}
		// A v1 end bumps nothing: no Last in a Prepare record but a v2 end's (StagedEpoch). A
		// producer that ends a transaction got its InitProducerId answer, so no retry of it
		// comes.
		next.Last = nil
		return m.commit(e, next)
	case record.TxnCompleteCommit:
		if commit {
			return nil
		}
	case record.TxnCompleteAbort:
		if !commit {
			return nil
		}
	case record.TxnPrepareCommit:
		if commit {
			return kerr.ConcurrentTransactions
		}
	case record.TxnPrepareAbort:
		if !commit {
			return kerr.ConcurrentTransactions
		}
	}
	return kerr.InvalidTxnState
}

// EndTxnV2 commits or aborts the producer's transaction as transactions v2 (KIP-890 part 2,
// EndTxn v5) does, and returns the producer id and epoch the producer goes on with: every end
// bumps the epoch (the markers are written at the bumped one, which fences the ended
// transaction's batches), and an end from the last epoch a producer id has (32766) takes a new
// producer id at epoch 0, its markers written at 32767. An abort with no transaction open
// succeeds and bumps the epoch too. The retry of an end whose answer was lost, at the epoch
// before the bump (or the producer id and epoch before a new producer id, Transaction.Last),
// is answered with the current pair; the opposite end then is INVALID_TXN_STATE, and an epoch
// that is neither the current one nor the one before the bump PRODUCER_FENCED. While an end is
// being written every end of the producer id (or of the new one it answered) is
// CONCURRENT_TRANSACTIONS, whatever its epoch, as Kafka's coordinator answers since KAFKA-18464:
// the producer's next end may come at the epoch the end answered before its markers are durable
// (on a fleet they travel to the gateways of the groups' log partitions), and the retry of the
// end itself, or of the opposite end, is told apart once the end is complete.
func (m *Manager) EndTxnV2(id string, producerID int64, epoch int16, commit bool) (int64, int16, error) {
	e, err := m.lock(id, false)
	if err != nil {
		return NoProducer, NoProducer, err
	}
	defer m.unlock(e)
	t := &e.t
	if t.State == record.TxnDead {
		return NoProducer, NoProducer, kerr.InvalidProducerIDMapping
	}
	if ending(t) && (t.ProducerID == producerID || t.Next != nil && t.Next.ProducerID == producerID) {
		m.refused(t, "EndTxn", producerID, epoch, kerr.ConcurrentTransactions)
		return NoProducer, NoProducer, kerr.ConcurrentTransactions
	}
	// As Kafka's: an epoch one below the current one is the retry of the end that bumped it;
	// the pair before a new producer id is the retry of the end that took it.
	retryBump := t.ProducerID == producerID && int32(epoch)+1 == int32(t.Epoch)
	retryNewID := t.ProducerID != producerID && t.Epoch == 0 && isLast(t, producerID, epoch)
	retry := retryBump || retryNewID
	if t.ProducerID != producerID && !retryNewID {
		m.refused(t, "EndTxn", producerID, epoch, kerr.InvalidProducerIDMapping)
		return NoProducer, NoProducer, kerr.InvalidProducerIDMapping
	}
	var valid bool
	switch t.State {
	case record.TxnCompleteCommit, record.TxnCompleteAbort:
		valid = retry || epoch == t.Epoch
	default: // Empty, Ongoing
		valid = epoch == t.Epoch
	}
	if !valid {
		m.refused(t, "EndTxn", producerID, epoch, kerr.ProducerFenced)
		return NoProducer, NoProducer, kerr.ProducerFenced
	}
	switch t.State {
	case record.TxnOngoing:
		return m.endV2(e, commit, false)
	case record.TxnCompleteCommit:
		switch {
		case commit && retry:
			return t.ProducerID, t.Epoch, nil
		case !commit && !retry:
			return m.endV2(e, false, true)
		}
	case record.TxnCompleteAbort:
		switch {
		case !commit && retry:
			return t.ProducerID, t.Epoch, nil
		case !commit:
			return m.endV2(e, false, true)
		}
	case record.TxnEmpty:
		if !commit {
			return m.endV2(e, false, true)
		}
	}
	return NoProducer, NoProducer, kerr.InvalidTxnState
}

// endV2 prepares the end of e's transaction at a bumped epoch (empty: an abort with nothing
// added, started now) and returns the pair its Complete record will hold. Called with e locked.
func (m *Manager) endV2(e *entry, commit, empty bool) (int64, int16, error) {
	next := cloneTxn(e.t)
	next.State = record.TxnPrepareAbort
	if commit {
		next.State = record.TxnPrepareCommit
	}
	next.Last = &record.ProducerEpoch{ProducerID: e.t.ProducerID, Epoch: e.t.Epoch}
	next.Next = nil
	if next.Epoch >= maxEpoch {
		pid, err := m.newProducerID()
		if err != nil {
			m.log.Warn("EndTxn: no producer id", "transactional_id", e.t.ID, "err", err)
			return NoProducer, NoProducer, kerr.CoordinatorNotAvailable
		}
		next.Next = &record.ProducerEpoch{ProducerID: pid, Epoch: 0}
	}
	if next.Epoch < math.MaxInt16 {
		next.Epoch++
	}
	if empty {
		next.Partitions, next.Groups, next.Offsets, next.Started = nil, nil, nil, m.clk.Now()
	}
	if err := m.commit(e, next); err != nil {
		return NoProducer, NoProducer, err
	}
	if next.Next != nil {
		return next.Next.ProducerID, next.Next.Epoch, nil
	}
	return next.ProducerID, next.Epoch, nil
}

// GroupsTopic is the topic name that stands for the coordinator log in the transaction APIs, as
// Kafka's __consumer_offsets does: its partition N is log partition N, which holds the groups
// that hash to N (record.Partition). AddOffsetsToTxn adds a group's partition to a transaction
// under this name, AddPartitionsToTxn's verify-only batches and WriteTxnMarkers name it.
const GroupsTopic = "__consumer_offsets"

// Check says whether a write of producerID at epoch to topic/partition belongs to the id's open
// transaction (KIP-890's verification): nil when it does; INVALID_PRODUCER_ID_MAPPING for another
// producer id, PRODUCER_FENCED for another epoch, INVALID_TXN_STATE when no transaction is open
// or the partition was not added to it. Partition N of GroupsTopic is added once a group of log
// partition N was (AddGroup), or the partition itself (AddPartitions, the implicit add of a
// TxnOffsetCommit v5): a TxnOffsetCommit of that group is then part of the transaction.
func (m *Manager) Check(id string, producerID int64, epoch int16, topic string, partition int32) error {
	e, err := m.lock(id, false)
	if err != nil {
		return err
	}
	defer m.unlock(e)
	t := &e.t
	switch {
	case t.State == record.TxnDead || t.ProducerID != producerID:
		return kerr.InvalidProducerIDMapping
	case t.Epoch != epoch:
		return kerr.ProducerFenced
	case t.State != record.TxnOngoing:
		return kerr.InvalidTxnState
	}
	if topic == GroupsTopic {
		// AddOffsetsToTxn added a group of the partition, or a TxnOffsetCommit v5 the
		// partition itself (transactions v2).
		for _, g := range t.Groups {
			if int32(record.Partition(g)) == partition {
				return nil
			}
		}
	}
	i, found := slices.BinarySearchFunc(t.Partitions, topic, func(tt record.TxnTopic, name string) int { return strings.Compare(tt.Topic, name) })
	if !found {
		return kerr.InvalidTxnState
	}
	if _, ok := slices.BinarySearch(t.Partitions[i].Partitions, partition); !ok {
		return kerr.InvalidTxnState
	}
	return nil
}
