package group

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/consumergroup"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// ErrNotCoordinator is wrapped by a Journal error when this gateway no longer owns the log
// partition; the manager then answers NOT_COORDINATOR and stops serving.
var ErrNotCoordinator = errors.New("group: not the coordinator of this log partition")

// Journal makes records durable. Append returns nil only once every record was read back from
// the log as valid; the journal stamps each record's Claim and Time.
type Journal interface {
	Append(ctx context.Context, recs ...record.Record) error
}

// Config configures a Manager.
type Config struct {
	// Clock runs every timeout (sessions, rebalances, the initial delay, offset expiry); nil is
	// the wall clock.
	Clock clock.Clock
	// Journal makes changes durable; nil keeps them in memory only.
	Journal Journal
	Logger  *slog.Logger
	// MinSessionTimeout and MaxSessionTimeout bound a member's session timeout (Kafka's
	// group.min/max.session.timeout.ms); zero means Kafka's defaults, 6 s and 30 min.
	MinSessionTimeout, MaxSessionTimeout time.Duration
	// InitialRebalanceDelay is how long the first rebalance of an empty group waits for more
	// members (Kafka's group.initial.rebalance.delay.ms, 3 s there); zero waits not at all.
	InitialRebalanceDelay time.Duration
	// FallbackOffset answers OffsetFetch for a partition the group has no committed offset
	// for (the offsets an Iggy consumer group of the same name stored); ok false means none.
	FallbackOffset func(ctx context.Context, id kafka.Identity, group, topic string, partition int32) (offset int64, ok bool, err error)
	// CommitTopic, when set, is called by OffsetCommit once for each topic of a commit that
	// exists, before the commit takes its group's turn in the journal; an error refuses that
	// topic's partitions with its *kerr.Error code, or else as a failed append would. The
	// coordinator drops there what a topic deleted and created again left of its former
	// incarnation, so that the first commit to the new one comes after that in the log.
	CommitTopic func(ctx context.Context, m *Manager, topic string) error
	// OffsetRetention is how long committed offsets of an empty group are kept (Kafka's
	// offsets.retention.minutes); zero means 7 days.
	OffsetRetention time.Duration
	// RetentionCheckInterval is how often expired offsets are looked for; zero means 10 min.
	RetentionCheckInterval time.Duration
	// ConsumerHeartbeatInterval is the heartbeat interval consumer-group members are told
	// (Kafka's group.consumer.heartbeat.interval.ms); zero means Kafka's 5 s.
	ConsumerHeartbeatInterval time.Duration
	// ConsumerSessionTimeout fences a consumer-group member that sent no heartbeat for this long
	// (group.consumer.session.timeout.ms); zero means Kafka's 45 s.
	ConsumerSessionTimeout time.Duration
	// TopicRefresh is how long consumer groups use one read of the topic list (to resolve
	// subscriptions and notice new partitions and topics); zero means 1 s.
	TopicRefresh time.Duration
	// Metrics receives the manager's counts, shared by a gateway's managers; nil keeps them in a
	// Metrics of the manager's own.
	Metrics *Metrics
}

// maxMetadata is Kafka's offset.metadata.max.bytes default.
const maxMetadata = 4096

// Manager serves the consumer groups of one coordinator log partition.
type Manager struct {
	cfg Config
	clk clock.Clock
	log *slog.Logger

	// ctx is what every journal append runs under, so that Close ends the appends in flight,
	// those of requests as well as the background ones (persistGroup, expireOffsets): a request's
	// own context does not end an append, whose answer must not depend on the client waiting.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	groups map[string]*group
	closed bool
	sweep  clock.Timer

	topicCache topicCache
	// pendingOrder holds every group's pending members (pendingRef), oldest first.
	pendingOrder *list.List

	// txn is what transactions committed to this manager's groups and have not ended
	// (txnoffsets.go).
	txn txnOffsets
}

// NewManager returns a manager with no groups; call Restore before it serves.
func NewManager(cfg Config) *Manager {
	if cfg.MinSessionTimeout == 0 {
		cfg.MinSessionTimeout = 6 * time.Second
	}
	if cfg.MaxSessionTimeout == 0 {
		cfg.MaxSessionTimeout = 30 * time.Minute
	}
	if cfg.OffsetRetention == 0 {
		cfg.OffsetRetention = 7 * 24 * time.Hour
	}
	if cfg.RetentionCheckInterval == 0 {
		cfg.RetentionCheckInterval = 10 * time.Minute
	}
	if cfg.ConsumerHeartbeatInterval == 0 {
		cfg.ConsumerHeartbeatInterval = defaultConsumerHeartbeat
	}
	if cfg.ConsumerSessionTimeout == 0 {
		cfg.ConsumerSessionTimeout = defaultConsumerSession
	}
	if cfg.TopicRefresh == 0 {
		cfg.TopicRefresh = defaultTopicRefresh
	}
	if cfg.Metrics == nil {
		cfg.Metrics = new(Metrics)
	}
	m := &Manager{cfg: cfg, clk: clock.Or(cfg.Clock), log: cfg.Logger, groups: make(map[string]*group), pendingOrder: list.New(),
		txn: newTxnOffsets()}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.sweep = m.clk.AfterFunc(cfg.RetentionCheckInterval, m.expireOffsets)
	return m
}

// state is a classic group's state, named as Kafka names it.
type state int8

const (
	stEmpty state = iota
	stPreparing
	stCompleting
	stStable
	stDead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

func (s state) String() string { return stateNames[s] }

func parseState(s string) (state, bool) {
	for i, n := range stateNames {
		if n == s {
			return state(i), true
		}
	}
	return stEmpty, false
}

type tp struct {
	topic     string
	partition int32
}

type group struct {
	name         string
	state        state
	generation   int32
	protocolType string
	protocol     string
	leader       string
	members      map[string]*member
	order        []string // member ids in join order: leader choice and answers are stable
	pending      map[string]*pendingMember
	static       map[string]string // group.instance.id -> member id
	offsets      map[tp]record.OffsetCommit
	emptySince   time.Time

	// lastSnap is the newest snapshot the log holds, for State while a rebalance is under way.
	lastSnap *record.Group

	// One timer at a time waits on the group's progress: the rebalance (or initial delay) timer
	// in PreparingRebalance, the pending-sync timer in CompletingRebalance. timerSeq voids a
	// timer that fired after it was replaced.
	timer    clock.Timer
	timerSeq uint64
	// initial is set while the initial rebalance delay runs; joined tells that a member came
	// meanwhile.
	initial bool
	joined  bool

	pendingSync map[string]bool
	storing     bool // the leader's assignment is being journaled

	// turn is closed when the group's last journal append before it finished: appends of one
	// group go to the log in the order their changes were made.
	turn chan struct{}

	// cg is set when the group is a KIP-848 consumer group (consumer.go); the classic fields
	// above then stay those of an empty group.
	cg      *consumergroup.Group
	ctimers map[string]*ctimers
	// cgBusy counts consumer heartbeats holding or awaiting the group's turn: while one may
	// turn the group into a consumer group (or add to an empty one), it does not become classic.
	cgBusy int
}

type member struct {
	rec record.Member

	joinResp *kmsg.JoinGroupResponse
	joinWait chan *kmsg.JoinGroupResponse
	syncResp *kmsg.SyncGroupResponse
	syncWait chan *kmsg.SyncGroupResponse

	timer clock.Timer
	seq   uint64
}

func (mem *member) waiting() bool { return mem.joinWait != nil || mem.syncWait != nil }

func newGroup(name string) *group {
	closed := make(chan struct{})
	close(closed)
	return &group{
		name:    name,
		members: make(map[string]*member),
		pending: make(map[string]*pendingMember),
		static:  make(map[string]string),
		offsets: make(map[tp]record.OffsetCommit),
		turn:    closed,
	}
}

// takeTurn reserves the group's next journal slot; the caller waits on wait, appends, applies
// and calls done. It is called with m.mu held, so slots follow the order of the changes.
func (g *group) takeTurn() (wait <-chan struct{}, done func()) {
	prev := g.turn
	next := make(chan struct{})
	g.turn = next
	var once sync.Once
	return prev, func() { once.Do(func() { close(next) }) }
}

// append journals recs in the group's order. The context is detached from the request so that
// the log's outcome, not a client's disconnect, decides what the group becomes.
func (m *Manager) append(wait <-chan struct{}, recs []record.Record) error {
	select {
	case <-wait:
	case <-m.ctx.Done():
		return fmt.Errorf("%w: the manager stopped", ErrNotCoordinator)
	}
	if m.cfg.Journal == nil || len(recs) == 0 {
		return nil
	}
	err := m.cfg.Journal.Append(m.ctx, recs...)
	if err != nil && m.ctx.Err() != nil {
		return fmt.Errorf("%w: the manager stopped during the append: %w", ErrNotCoordinator, err)
	}
	return err
}

// journalCode turns an Append error into the code the request is answered with; it stops the
// manager when the partition belongs to another gateway. Called with m.mu held.
func (m *Manager) journalCode(err error) int16 {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrNotCoordinator) {
		m.log.Warn("group coordinator lost its log partition", "err", err)
		m.closeLocked()
		return kerr.NotCoordinator.Code
	}
	m.log.Warn("group journal append failed", "err", err)
	return kerr.CoordinatorNotAvailable.Code
}

// Groups lists the names of the groups this manager holds.
func (m *Manager) Groups() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.groups))
	for n := range m.groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Serving reports whether the manager still answers as coordinator (not closed, and no append
// found the partition taken over).
func (m *Manager) Serving() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.closed
}

// Close stops serving: parked JoinGroup and SyncGroup calls answer NOT_COORDINATOR, timers stop,
// and every later call answers NOT_COORDINATOR.
func (m *Manager) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closeLocked()
}

func (m *Manager) closeLocked() {
	if m.closed {
		return
	}
	m.closed = true
	m.cancel()
	m.sweep.Stop()
	for _, g := range m.groups {
		g.stopTimer()
		for id := range g.pending {
			m.dropPending(g, id)
		}
		for _, mem := range g.members {
			if mem.timer != nil {
				mem.timer.Stop()
			}
			answerError(mem, kerr.NotCoordinator.Code)
		}
		for _, t := range g.ctimers {
			t.stop()
		}
	}
}

// answerError releases a member's parked JoinGroup or SyncGroup with code.
func answerError(mem *member, code int16) {
	if mem.joinWait != nil {
		r := mem.joinResp
		r.ErrorCode = code
		r.MemberID = mem.rec.MemberID
		r.Generation = -1
		mem.joinWait <- r
		mem.joinWait, mem.joinResp = nil, nil
	}
	if mem.syncWait != nil {
		r := mem.syncResp
		r.ErrorCode = code
		mem.syncWait <- r
		mem.syncWait, mem.syncResp = nil, nil
	}
}

func (g *group) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	g.timerSeq++
	g.initial = false
}

// groupTimer runs fn under the lock after d unless the group's timer was replaced meanwhile or
// the group is gone.
func (m *Manager) groupTimer(g *group, d time.Duration, fn func()) {
	g.stopTimer()
	seq := g.timerSeq
	g.timer = m.clk.AfterFunc(d, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed || m.groups[g.name] != g || g.timerSeq != seq {
			return
		}
		g.timer = nil
		fn()
	})
}

func newMemberID(clientID string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return clientID + "-" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// RestoreConsumerGroups loads KIP-848 consumer groups from the log (record.State.ConsumerGroup)
// before the manager serves, with every member's epoch and partitions; their session timeouts
// start now. Call it with Restore, before the manager serves.
func (m *Manager) RestoreConsumerGroups(groups []record.ConsumerGroup) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rc := range groups {
		m.restoreConsumer(rc)
	}
}

// Restore loads groups and offsets from the log before the manager serves. Members come back
// with everything that defines them, their session timers starting now.
func (m *Manager) Restore(groups []record.Group, offsets []record.OffsetCommit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clk.Now()
	for i := range groups {
		rg := cloneGroup(groups[i])
		g := newGroup(rg.Name)
		g.generation = rg.Generation
		g.protocolType = rg.ProtocolType
		g.protocol = rg.Protocol
		g.leader = rg.Leader
		st, _ := parseState(rg.State)
		for _, rm := range rg.Members {
			mem := &member{rec: cloneMember(rm)}
			g.members[rm.MemberID] = mem
			g.order = append(g.order, rm.MemberID)
			if rm.InstanceID != "" {
				g.static[rm.InstanceID] = rm.MemberID
			}
		}
		snap := rg
		g.lastSnap = &snap
		m.groups[g.name] = g
		switch {
		case len(g.members) == 0:
			g.state = stEmpty
			g.emptySince = now
		case st == stStable:
			g.state = stStable
		default:
			// A snapshot taken mid-rebalance: the members rejoin, as they would have.
			g.state = stStable
			m.prepareRebalance(g)
		}
		for _, mem := range g.members {
			m.heartbeat(g, mem)
		}
	}
	m.restoreOffsets(offsets, now, false)
}

// AddOffsets loads committed offsets read from elsewhere into a serving manager, keeping every
// offset it holds already for a partition: what the manager holds was committed through it and is
// at least as new as a copy read meanwhile.
func (m *Manager) AddOffsets(offsets []record.OffsetCommit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.restoreOffsets(offsets, m.clk.Now(), true)
}

func (m *Manager) restoreOffsets(offsets []record.OffsetCommit, now time.Time, keep bool) {
	for _, oc := range offsets {
		g := m.groups[oc.Group]
		if g == nil {
			g = newGroup(oc.Group)
			g.emptySince = now
			m.groups[oc.Group] = g
		}
		k := tp{oc.Topic, oc.Partition}
		if _, held := g.offsets[k]; held && keep {
			continue
		}
		g.offsets[k] = oc
	}
}

// Holds reports whether the manager holds anything of the group: members, pending members,
// committed offsets or a snapshot.
func (m *Manager) Holds(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.groups[name] != nil
}

// State returns what the log holds for every group: groups (as their last completed generation
// left them) and committed offsets, sorted, for a checkpoint.
func (m *Manager) State() (groups []record.Group, offsets []record.OffsetCommit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, g := range m.groups {
		if g.lastSnap != nil {
			switch g.state {
			case stStable, stEmpty:
				groups = append(groups, m.snapshot(g, nil))
			default:
				groups = append(groups, cloneGroup(*g.lastSnap))
			}
		}
		for _, oc := range g.offsets {
			offsets = append(offsets, oc)
		}
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Name < groups[j].Name })
	sort.Slice(offsets, func(i, j int) bool {
		a, b := offsets[i], offsets[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return groups, offsets
}

// snapshot is the group as a record; assign, when set, overrides the members' assignments
// (the leader's SyncGroup before it is applied).
func (m *Manager) snapshot(g *group, assign map[string][]byte) record.Group {
	rg := record.Group{
		Name:         g.name,
		Generation:   g.generation,
		ProtocolType: g.protocolType,
		Protocol:     g.protocol,
		Leader:       g.leader,
		State:        g.state.String(),
	}
	if assign != nil {
		rg.State = stStable.String()
	}
	for _, id := range g.order {
		mem := g.members[id]
		rm := cloneMember(mem.rec)
		if assign != nil {
			rm.Assignment = clone(assign[id])
		}
		rg.Members = append(rg.Members, rm)
	}
	return rg
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func cloneMember(rm record.Member) record.Member {
	out := rm
	out.Assignment = clone(rm.Assignment)
	if rm.Protocols != nil {
		out.Protocols = make([]record.Protocol, len(rm.Protocols))
		for i, p := range rm.Protocols {
			out.Protocols[i] = record.Protocol{Name: p.Name, Metadata: clone(p.Metadata)}
		}
	}
	return out
}

func cloneGroup(rg record.Group) record.Group {
	out := rg
	if rg.Members != nil {
		out.Members = make([]record.Member, len(rg.Members))
		for i, rm := range rg.Members {
			out.Members[i] = cloneMember(rm)
		}
	}
	return out
}

func groupRecord(rg record.Group) record.Record {
	return record.Record{Type: record.TypeGroup, Group: &rg}
}

// persistGroup journals the group as it is now, in the background: a state the clients do not
// wait on (a group left Empty). Called with m.mu held.
func (m *Manager) persistGroup(g *group) {
	snap := m.snapshot(g, nil)
	wait, done := g.takeTurn()
	go func() {
		defer done()
		err := m.append(wait, []record.Record{groupRecord(snap)})
		m.mu.Lock()
		defer m.mu.Unlock()
		if err != nil {
			m.journalCode(err)
			return
		}
		g.lastSnap = &snap
	}()
}

// expireOffsets drops the offsets of empty groups once their retention passed (KIP-211: a
// group's offsets do not expire while it has members), and empty groups left without offsets.
func (m *Manager) expireOffsets() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	defer func() { m.sweep = m.clk.AfterFunc(m.cfg.RetentionCheckInterval, m.expireOffsets) }()
	now := m.clk.Now()
	for _, g := range m.groups {
		if g.state != stEmpty || g.cg != nil && !g.cg.Empty() {
			continue
		}
		var recs []record.Record
		var gone []tp
		for k, oc := range g.offsets {
			expire := oc.Expire
			if expire.IsZero() {
				continue
			}
			if g.protocolType != "" && g.emptySince.Add(m.cfg.OffsetRetention).After(expire) {
				expire = g.emptySince.Add(m.cfg.OffsetRetention)
			}
			if now.Before(expire) {
				continue
			}
			gone = append(gone, k)
			recs = append(recs, record.Record{Type: record.TypeOffsetDeleted,
				OffsetDeleted: &record.OffsetDeleted{Group: g.name, Topic: k.topic, Partition: k.partition}})
		}
		dropGroup := len(gone) == len(g.offsets)
		if dropGroup && (g.lastSnap != nil || g.cg != nil) {
			recs = append(recs, record.Record{Type: record.TypeGroupDeleted, GroupDeleted: &record.GroupDeleted{Group: g.name}})
		}
		if len(recs) == 0 {
			if dropGroup {
				delete(m.groups, g.name)
			}
			continue
		}
		if dropGroup {
			g.state = stDead
		}
		wait, done := g.takeTurn()
		go func(g *group) {
			defer done()
			err := m.append(wait, recs)
			m.mu.Lock()
			defer m.mu.Unlock()
			if err != nil {
				m.journalCode(err)
				if dropGroup && g.state == stDead {
					g.state = stEmpty
				}
				return
			}
			for _, k := range gone {
				delete(g.offsets, k)
			}
			if dropGroup && m.groups[g.name] == g {
				delete(m.groups, g.name)
			}
		}(g)
	}
}

func sortStrings(s []string) { sort.Strings(s) }
