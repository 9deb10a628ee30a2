package group

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/consumergroup"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// The KIP-848 consumer groups of a partition live beside its classic groups, in the same group
// entries (a name is one kind of group at a time) with the same offsets. The protocol is
// consumergroup's; this file runs it: it orders a group's heartbeats (one at a time, through the
// group's journal turn, so each sees the state the previous one left in the log), journals
// every change as a record.ConsumerGroup before it answers, and runs the session and rebalance
// timeouts on the manager's clock.

// Kafka's defaults for consumer groups (group.consumer.heartbeat.interval.ms,
// group.consumer.session.timeout.ms).
const (
	defaultConsumerHeartbeat = 5 * time.Second
	defaultConsumerSession   = 45 * time.Second
	defaultTopicRefresh      = time.Second
)

// ctimers are one consumer member's session timeout and, while it revokes partitions, its
// rebalance timeout (armed at the member epoch it revokes at).
type ctimers struct {
	session    clock.Timer
	sessionSeq uint64
	rebalance  clock.Timer
	rebalEpoch int32
	rebalSeq   uint64
}

// topicCache is the manager's last read of every topic, shared by its consumer groups.
type topicCache struct {
	mu     sync.Mutex
	at     time.Time
	topics []record.TopicMeta
}

// topics returns every topic, read through the connection's storage at most once per
// TopicRefresh; nil when it cannot be read (the groups then keep the topics they resolved).
func (m *Manager) topics(ctx context.Context, id kafka.Identity) []record.TopicMeta {
	if id.Storage == nil {
		return nil
	}
	c := &m.topicCache
	c.mu.Lock()
	defer c.mu.Unlock()
	now := m.clk.Now()
	if c.topics != nil && now.Sub(c.at) < m.cfg.TopicRefresh {
		return c.topics
	}
	infos, err := id.Storage.ListTopics(ctx)
	if err != nil {
		m.log.Debug("listing topics for consumer groups", "err", err)
		return c.topics
	}
	ts := make([]record.TopicMeta, 0, len(infos))
	for _, t := range infos {
		ts = append(ts, record.TopicMeta{Name: t.Name, ID: t.ID, Partitions: t.Partitions})
	}
	c.topics, c.at = ts, now
	return ts
}

// newConsumerMemberID is a member id for a v0 join, which leaves choosing it to the coordinator:
// 16 random bytes, base64 as Kafka's Uuid prints them.
func newConsumerMemberID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// classicEmpty reports whether g holds no classic group a consumer group could not replace: no
// members, none pending, no rebalance under way.
func (g *group) classicEmpty() bool {
	return g.cg == nil && g.state == stEmpty && len(g.members) == 0 && len(g.pending) == 0
}

// ConsumerHeartbeat serves one ConsumerGroupHeartbeat. A group that does not exist, or an empty
// classic group, becomes a consumer group on a join (epoch 0), as in Kafka 4; a classic group with
// members is GROUP_ID_NOT_FOUND ("not a consumer group"), which is what Kafka answers when it does
// not upgrade a classic group online. A change is answered only once the log holds it.
func (m *Manager) ConsumerHeartbeat(ctx context.Context, id kafka.Identity, req *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.HeartbeatIntervalMillis = int32(m.cfg.ConsumerHeartbeatInterval.Milliseconds())
	failed := func(code int16, msg string) *kmsg.ConsumerGroupHeartbeatResponse {
		resp.ErrorCode = code
		if msg != "" {
			resp.ErrorMessage = kmsg.StringPtr(msg)
		}
		return resp
	}
	if e, msg := consumergroup.Validate(req); e != nil {
		return failed(e.Code, msg)
	}
	if req.MemberEpoch == consumergroup.JoinEpoch && req.MemberID == "" {
		req.MemberID = newConsumerMemberID()
	}
	joining := req.MemberEpoch == consumergroup.JoinEpoch
	topics := m.topics(ctx, id)

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return failed(kerr.NotCoordinator.Code, "")
	}
	g := m.groups[req.Group]
	if g == nil {
		if !joining {
			m.mu.Unlock()
			return failed(kerr.GroupIDNotFound.Code, "Consumer group "+req.Group+" not found.")
		}
		g = newGroup(req.Group)
		g.emptySince = m.clk.Now()
		m.groups[req.Group] = g
	}
	g.cgBusy++
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	defer func() {
		m.mu.Lock()
		g.cgBusy--
		m.dropIfUnused(g)
		m.mu.Unlock()
	}()
	<-wait

	m.mu.Lock()
	if code := m.consumerCode(g, joining); code != 0 {
		m.dropIfUnused(g)
		m.mu.Unlock()
		if code == kerr.GroupIDNotFound.Code {
			return failed(code, "Group "+req.Group+" is not a consumer group.")
		}
		return failed(code, "")
	}
	base := g.cg
	if base == nil {
		base = consumergroup.New(g.name)
	}
	out := base.Heartbeat(req, consumergroup.Client{ID: id.ClientID, Host: id.ClientHost}, topics)
	if out.Change == nil {
		if out.Resp.ErrorCode == 0 && g.cg != nil {
			m.consumerAlive(g, out.Alive)
		}
		m.dropIfUnused(g)
		m.mu.Unlock()
		out.Resp.HeartbeatIntervalMillis = resp.HeartbeatIntervalMillis
		return out.Resp
	}
	m.mu.Unlock()
	err := m.appendNow(consumerRecord(out.Change))
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		m.dropIfUnused(g)
		return failed(code, "")
	}
	if m.closed || m.groups[g.name] != g {
		return failed(kerr.NotCoordinator.Code, "")
	}
	m.keepConsumer(g, out.Next)
	m.consumerAlive(g, out.Alive)
	out.Resp.HeartbeatIntervalMillis = resp.HeartbeatIntervalMillis
	return out.Resp
}

// consumerCode is whether a consumer heartbeat may act on g now (its turn taken, m.mu held).
func (m *Manager) consumerCode(g *group, joining bool) int16 {
	switch {
	case m.closed || m.groups[g.name] != g:
		return kerr.NotCoordinator.Code
	case g.state == stDead:
		return kerr.CoordinatorNotAvailable.Code
	case g.cg != nil:
		return 0
	case !g.classicEmpty():
		return kerr.GroupIDNotFound.Code
	case !joining:
		return kerr.GroupIDNotFound.Code
	}
	return 0
}

func consumerRecord(c *record.ConsumerGroup) record.Record {
	return record.Record{Type: record.TypeConsumerGroup, ConsumerGroup: c}
}

// appendNow journals recs in the caller's turn, which it already waited for, under the
// manager's context (Close ends it).
func (m *Manager) appendNow(recs ...record.Record) error {
	ready := make(chan struct{})
	close(ready)
	return m.append(ready, recs)
}

// keepConsumer makes next the group's consumer group once the log holds it, and sets the
// timers of its members. Called with m.mu held.
func (m *Manager) keepConsumer(g *group, next *consumergroup.Group) {
	if g.cg == nil {
		// A new consumer group, or an empty classic one converted: the log's fold dropped the
		// classic snapshot with the first consumer-group record.
		g.lastSnap = nil
		g.protocol, g.leader, g.generation = "", "", 0
	}
	g.cg = next
	g.protocolType = "consumer"
	if next.Empty() && g.emptySince.IsZero() {
		g.emptySince = m.clk.Now()
	}
	if !next.Empty() {
		g.emptySince = time.Time{}
	}
	m.syncConsumerTimers(g)
}

// syncConsumerTimers stops the timers of members that are gone and arms the rebalance timeout of
// every member that revokes partitions, at the epoch it revokes at. Called with m.mu held.
func (m *Manager) syncConsumerTimers(g *group) {
	if g.ctimers == nil {
		g.ctimers = make(map[string]*ctimers)
	}
	for id, t := range g.ctimers {
		if _, ok := g.cg.Member(id); !ok {
			t.stop()
			delete(g.ctimers, id)
		}
	}
	for _, id := range g.cg.MemberIDs() {
		mem, _ := g.cg.Member(id)
		t := g.ctimers[id]
		if t == nil {
			t = &ctimers{}
			g.ctimers[id] = t
			m.armSession(g, id, t)
		}
		if mem.State != record.MemberUnrevokedPartitions {
			if t.rebalance != nil {
				t.rebalance.Stop()
				t.rebalance = nil
			}
			continue
		}
		if t.rebalance != nil && t.rebalEpoch == mem.Epoch {
			continue
		}
		if t.rebalance != nil {
			t.rebalance.Stop()
		}
		t.rebalSeq++
		seq, epoch := t.rebalSeq, mem.Epoch
		t.rebalEpoch = epoch
		t.rebalance = m.clk.AfterFunc(mem.RebalanceTimeout, func() {
			m.consumerExpire(g, id, func(t *ctimers) bool { return t.rebalSeq == seq }, &epoch, "it did not revoke its partitions within its rebalance timeout")
		})
	}
}

func (t *ctimers) stop() {
	if t.session != nil {
		t.session.Stop()
	}
	if t.rebalance != nil {
		t.rebalance.Stop()
	}
	t.sessionSeq++
	t.rebalSeq++
}

// consumerAlive restarts a member's session timeout: its heartbeat arrived. Called with m.mu
// held.
func (m *Manager) consumerAlive(g *group, id string) {
	if id == "" || g.ctimers[id] == nil {
		return
	}
	m.armSession(g, id, g.ctimers[id])
}

func (m *Manager) armSession(g *group, id string, t *ctimers) {
	if t.session != nil {
		t.session.Stop()
	}
	t.sessionSeq++
	seq := t.sessionSeq
	t.session = m.clk.AfterFunc(m.cfg.ConsumerSessionTimeout, func() {
		m.consumerExpire(g, id, func(t *ctimers) bool { return t.sessionSeq == seq }, nil, "its session timed out")
	})
}

// consumerExpire fences a member whose timeout passed, in the group's journal order, unless a
// heartbeat restarted the timeout meanwhile (current reports whether the timer that fired is
// still the member's). A failed append keeps the member and tries again after its session
// timeout.
func (m *Manager) consumerExpire(g *group, id string, current func(*ctimers) bool, epoch *int32, why string) {
	m.mu.Lock()
	if m.closed || m.groups[g.name] != g || g.cg == nil {
		m.mu.Unlock()
		return
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	<-wait
	m.mu.Lock()
	t := g.ctimers[id]
	if m.closed || m.groups[g.name] != g || g.cg == nil || t == nil || !current(t) {
		m.mu.Unlock()
		return
	}
	next, ch := g.cg.Fence(id, epoch)
	if next == nil {
		m.mu.Unlock()
		return
	}
	m.log.Info("consumer group member fenced", "group", g.name, "member", id, "why", why)
	m.mu.Unlock()
	err := m.appendNow(consumerRecord(ch))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.journalCode(err) != 0 {
		if !m.closed && g.ctimers[id] == t {
			m.armSession(g, id, t)
		}
		return
	}
	if m.closed || m.groups[g.name] != g {
		return
	}
	m.keepConsumer(g, next)
}

// dropConsumer turns an empty consumer group back into an empty classic one, keeping its
// offsets. Called with m.mu held.
func (m *Manager) dropConsumer(g *group) {
	for _, t := range g.ctimers {
		t.stop()
	}
	g.cg, g.ctimers = nil, nil
	g.protocolType = ""
}

// restoreConsumer loads a consumer group from the log; its members' session timeouts start now.
// Called with m.mu held.
func (m *Manager) restoreConsumer(rc record.ConsumerGroup) {
	g := m.groups[rc.Name]
	if g == nil {
		g = newGroup(rc.Name)
		m.groups[rc.Name] = g
	}
	g.cg = consumergroup.FromRecord(rc)
	g.protocolType = "consumer"
	g.state = stEmpty
	if g.cg.Empty() {
		g.emptySince = m.clk.Now()
	}
	m.syncConsumerTimers(g)
}

// ConsumerDescribe answers one group of a ConsumerGroupDescribe: GROUP_ID_NOT_FOUND for a group
// that is not a consumer group, as Kafka answers.
func (m *Manager) ConsumerDescribe(name string) kmsg.ConsumerGroupDescribeResponseGroup {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group, d.ErrorCode = name, kerr.NotCoordinator.Code
		return d
	}
	g := m.groups[name]
	if g == nil || g.cg == nil || g.state == stDead {
		d := kmsg.NewConsumerGroupDescribeResponseGroup()
		d.Group, d.ErrorCode = name, kerr.GroupIDNotFound.Code
		if g != nil && g.state != stDead {
			d.ErrorMessage = kmsg.StringPtr("Group " + name + " is not a consumer group.")
		}
		return d
	}
	return g.cg.Describe()
}

// ConsumerGroups returns what the log holds for every consumer group, by name.
func (m *Manager) ConsumerGroups() []record.ConsumerGroup {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []record.ConsumerGroup
	for _, name := range sortedNames(m.groups) {
		if g := m.groups[name]; g.cg != nil {
			out = append(out, g.cg.Record())
		}
	}
	return out
}
