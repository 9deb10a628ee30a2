package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// MaxIDLength is the longest transactional id taken, in bytes.
const MaxIDLength = 1024

// maxEpoch is the highest epoch a producer id is given; a bump past it takes a new producer id
// (Kafka keeps Short.MaxValue for the bump a fencing abort makes).
const maxEpoch = math.MaxInt16 - 1

// Markers ends transactions outside the coordinator log: the control records on the data
// partitions and the staged offsets of the groups.
type Markers interface {
	// End makes t's end (t.State is PrepareCommit or PrepareAbort) visible: a commit or abort
	// control record of t.ProducerID at t.Epoch on every partition of t.Partitions, and the
	// offsets t's producer staged for t.Groups committed or dropped. It is called again for the
	// same end after a failure and after a handover, so a second call must not end anything a
	// reader could tell from the first.
	End(ctx context.Context, t record.Transaction) error
}

// Config configures a Manager.
type Config struct {
	// Clock runs every transaction timeout and the retries of an end; nil is the wall clock.
	Clock clock.Clock
	// Journal makes every change durable (package group's: the coordinator's journal of the
	// partition); a Journal error wrapping group.ErrNotCoordinator stops the manager.
	Journal group.Journal
	// Markers writes the ends of transactions; nil ends them without markers (tests of the state
	// machine alone).
	Markers Markers
	// ProducerID allocates a producer id unique across the fleet.
	ProducerID func(ctx context.Context) (int64, error)
	// MaxTimeout is Kafka's transaction.max.timeout.ms; zero means 15 min.
	MaxTimeout time.Duration
	// RetryBackoff is how long a failed end waits before it is tried again; zero means 100 ms.
	RetryBackoff time.Duration
	Logger       *slog.Logger
}

// Manager serves the transactional ids of one coordinator log partition. Its methods answer
// Kafka's error codes as *kerr.Error values (errors.As), nil on success.
type Manager struct {
	cfg Config
	clk clock.Clock
	log *slog.Logger

	// ctx is what every append and end runs under: Close ends them; a request's own context
	// does not, so an answer never depends on the client still waiting.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	ids     map[string]*entry
	closed  bool
	started bool // Start was called: timeouts and ends run
}

// entry is one transactional id. Its mutex orders the id's requests, its timeout and its end;
// t is the state as last read back from the log.
type entry struct {
	mu     sync.Mutex
	t      record.Transaction
	timer  clock.Timer // the timeout of an Ongoing transaction
	ending bool        // an end goroutine runs for the prepared state
}

// NewManager returns a manager with no ids; call Restore before it serves.
func NewManager(cfg Config) *Manager {
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = 15 * time.Minute
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	m := &Manager{cfg: cfg, clk: clock.Or(cfg.Clock), log: cfg.Logger, ids: make(map[string]*entry)}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// Restore loads the ids the log holds (record.State.Transactions) into a manager that has not
// started; it starts nothing.
func (m *Manager) Restore(txns []record.Transaction) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range txns {
		m.ids[t.ID] = &entry{t: cloneTxn(t)}
	}
}

// Start runs what the restored states ask for, once the partition serves (its appends are
// refused before): a transaction found PrepareCommit or PrepareAbort is ended (markers, then its
// Complete record), an Ongoing one gets its timeout back, counted from its Started. Requests
// answered before Start have their timeouts and ends started by it.
func (m *Manager) Start() {
	m.mu.Lock()
	if m.closed || m.started {
		m.mu.Unlock()
		return
	}
	m.started = true
	es := make([]*entry, 0, len(m.ids))
	for _, e := range m.ids {
		es = append(es, e)
	}
	m.mu.Unlock()
	for _, e := range es {
		e.mu.Lock()
		m.afterLocked(e)
		e.mu.Unlock()
	}
}

// Close stops the manager: its answers become NOT_COORDINATOR, its timeouts and ends stop, and
// it returns once none is running.
func (m *Manager) Close() {
	m.stop()
	m.mu.Lock()
	ids := make([]*entry, 0, len(m.ids))
	for _, e := range m.ids {
		ids = append(ids, e)
	}
	m.mu.Unlock()
	for _, e := range ids {
		e.mu.Lock()
		if e.timer != nil {
			e.timer.Stop()
		}
		e.mu.Unlock()
	}
	m.wg.Wait()
}

// Describe returns the state of a transactional id, as last read back.
func (m *Manager) Describe(id string) (record.Transaction, bool) {
	m.mu.Lock()
	e := m.ids[id]
	m.mu.Unlock()
	if e == nil {
		return record.Transaction{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return cloneTxn(e.t), true
}

// List returns every id's state, sorted by id.
func (m *Manager) List() []record.Transaction {
	m.mu.Lock()
	es := make([]*entry, 0, len(m.ids))
	for _, e := range m.ids {
		es = append(es, e)
	}
	m.mu.Unlock()
	out := make([]record.Transaction, 0, len(es))
	for _, e := range es {
		e.mu.Lock()
		out = append(out, cloneTxn(e.t))
		e.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b record.Transaction) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// lock returns the id's entry locked, creating an empty one (State Dead, which no record holds)
// when create is set; nil with the error to answer otherwise.
func (m *Manager) lock(id string, create bool) (*entry, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, kerr.NotCoordinator
		}
		e := m.ids[id]
		if e == nil {
			if !create {
				m.mu.Unlock()
				return nil, kerr.InvalidProducerIDMapping
			}
			e = &entry{t: record.Transaction{ID: id, State: record.TxnDead}}
			m.ids[id] = e
		}
		m.mu.Unlock()
		e.mu.Lock()
		// The entry may have been dropped while this request waited for it (unlock).
		m.mu.Lock()
		current, closed := m.ids[id] == e, m.closed
		m.mu.Unlock()
		switch {
		case closed:
			e.mu.Unlock()
			return nil, kerr.NotCoordinator
		case current:
			return e, nil
		}
		e.mu.Unlock()
	}
}

func (m *Manager) stopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// unlock releases e, dropping it when no record ever held it (a refused first request).
func (m *Manager) unlock(e *entry) {
	if e.t.State == record.TxnDead {
		m.mu.Lock()
		if m.ids[e.t.ID] == e {
			delete(m.ids, e.t.ID)
		}
		m.mu.Unlock()
	}
	e.mu.Unlock()
}

// stop makes the manager answer NOT_COORDINATOR and ends its appends and ends in flight; Close
// still waits for them.
func (m *Manager) stop() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
}

// commit appends next as e's new state and keeps it only once it is read back. Called with e
// locked.
func (m *Manager) commit(e *entry, next record.Transaction) error {
	next.Updated = m.clk.Now()
	if m.cfg.Journal != nil {
		t := next
		if err := m.cfg.Journal.Append(m.ctx, record.Record{Type: record.TypeTransaction, Transaction: &t}); err != nil {
			if errors.Is(err, group.ErrNotCoordinator) {
				m.log.Info("transaction coordinator fenced; stopping", "transactional_id", next.ID, "err", err)
				m.stop()
				return kerr.NotCoordinator
			}
			m.log.Warn("transaction record not appended", "transactional_id", next.ID, "err", err)
			return kerr.CoordinatorNotAvailable
		}
	}
	e.t = next
	m.afterLocked(e)
	return nil
}

// afterLocked starts what e's state asks for once the manager started: the timeout of an Ongoing
// transaction, the end of a prepared one. Called with e locked.
func (m *Manager) afterLocked(e *entry) {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started || m.closed {
		return
	}
	switch e.t.State {
	case record.TxnOngoing:
		started, epoch := e.t.Started, e.t.Epoch
		e.timer = m.clk.AfterFunc(started.Add(e.t.Timeout).Sub(m.clk.Now()), func() { m.timeout(e, started, epoch) })
	case record.TxnPrepareCommit, record.TxnPrepareAbort:
		if !e.ending {
			e.ending = true
			m.wg.Add(1)
			go m.end(e, e.t.Epoch, e.t.State)
		}
	}
}

// timeout aborts the transaction that started at started, if it is still open, bumping the
// epoch so the producer that let it time out is fenced.
func (m *Manager) timeout(e *entry, started time.Time, epoch int16) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m.stopped() || e.t.State != record.TxnOngoing || !e.t.Started.Equal(started) || e.t.Epoch != epoch {
		return
	}
	next := m.fence(e.t)
	m.log.Info("transaction timed out; aborting", "transactional_id", e.t.ID, "producer_id", e.t.ProducerID,
		"epoch", e.t.Epoch, "timeout", e.t.Timeout)
	if err := m.commit(e, next); err != nil && !m.stopped() {
		e.timer = m.clk.AfterFunc(m.cfg.RetryBackoff, func() { m.timeout(e, started, epoch) })
	}
}

// fence is t moved to PrepareAbort at a bumped epoch (a new incarnation or a timeout ends it),
// the producer id kept so that the abort markers end the fenced producer's batches: from an
// epoch that is spent (maxEpoch) the fence takes 32767, which no producer is given, and the next
// InitProducerId takes a new producer id. The fenced producer's pair is no retry of anything.
func (m *Manager) fence(t record.Transaction) record.Transaction {
	next := cloneTxn(t)
	next.State, next.Last, next.Next = record.TxnPrepareAbort, nil, nil
	if next.Epoch < math.MaxInt16 {
		next.Epoch++
	}
	return next
}

// bump moves t to its next epoch, or to a new producer id at epoch 0 when the epoch is spent
// (maxEpoch, or 32767 after a fence).
func (m *Manager) bump(t *record.Transaction) error {
	if t.Epoch < maxEpoch && t.ProducerID >= 0 {
		t.Epoch++
		return nil
	}
	id, err := m.newProducerID()
	if err != nil {
		return err
	}
	t.ProducerID, t.Epoch = id, 0
	return nil
}

func (m *Manager) newProducerID() (int64, error) {
	if m.cfg.ProducerID == nil {
		return 0, errors.New("txn: no producer id allocator")
	}
	id, err := m.cfg.ProducerID(m.ctx)
	if err != nil {
		return 0, fmt.Errorf("txn: allocating a producer id: %w", err)
	}
	return id, nil
}

// end writes the markers of the transaction prepared at epoch in state st, then appends its
// Complete record; a failure of either is retried after RetryBackoff until it succeeds, the
// manager stops, or the state moved on. e.ending is set while it runs.
func (m *Manager) end(e *entry, epoch int16, st record.TxnState) {
	defer m.wg.Done()
	for attempt := 0; ; attempt++ {
		if attempt > 0 && !m.wait(m.cfg.RetryBackoff) {
			e.mu.Lock()
			e.ending = false
			e.mu.Unlock()
			return
		}
		e.mu.Lock()
		if m.stopped() || e.t.State != st || e.t.Epoch != epoch {
			e.ending = false
			e.mu.Unlock()
			return
		}
		t := cloneTxn(e.t)
		e.mu.Unlock()
		if m.cfg.Markers != nil {
			if err := m.cfg.Markers.End(m.ctx, t); err != nil {
				if m.ctx.Err() == nil {
					m.log.Warn("writing transaction markers; retrying", "transactional_id", t.ID, "err", err)
				}
				continue
			}
		}
		e.mu.Lock()
		if m.stopped() || e.t.State != st || e.t.Epoch != epoch {
			e.ending = false
			e.mu.Unlock()
			return
		}
		next := cloneTxn(e.t)
		next.State = record.TxnCompleteCommit
		if st == record.TxnPrepareAbort {
			next.State = record.TxnCompleteAbort
		}
		next.Partitions, next.Groups, next.Offsets, next.Started = nil, nil, nil, time.Time{}
		if next.Next != nil {
			// A transactions-v2 end that spent the epochs: the producer goes on with the new
			// producer id its EndTxn was answered.
			next.ProducerID, next.Epoch, next.Next = next.Next.ProducerID, next.Next.Epoch, nil
		}
		e.ending = false
		if err := m.commit(e, next); err != nil && !m.stopped() {
			e.ending = true
			e.mu.Unlock()
			continue
		}
		e.mu.Unlock()
		return
	}
}

// wait waits d on the manager's clock; false when the manager stopped meanwhile.
func (m *Manager) wait(d time.Duration) bool {
	t := m.clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-m.ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

func cloneTxn(t record.Transaction) record.Transaction {
	t.Partitions = slices.Clone(t.Partitions)
	for i := range t.Partitions {
		t.Partitions[i].Partitions = slices.Clone(t.Partitions[i].Partitions)
	}
	t.Groups = slices.Clone(t.Groups)
	t.Offsets = slices.Clone(t.Offsets)
	return t
}
