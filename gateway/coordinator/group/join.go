package group

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// emptyConsumerAssignment is what a "consumer" member the leader assigned nothing gets, so that
// every member can decode its assignment.
var emptyConsumerAssignment = new(kmsg.ConsumerMemberAssignment).AppendTo(nil)

func ms(v int32) time.Duration { return time.Duration(v) * time.Millisecond }

func protocolsOf(req *kmsg.JoinGroupRequest) []record.Protocol {
	ps := make([]record.Protocol, len(req.Protocols))
	for i, p := range req.Protocols {
		ps[i] = record.Protocol{Name: p.Name, Metadata: clone(p.Metadata)}
	}
	return ps
}

func sameProtocols(a []record.Protocol, b []kmsg.JoinGroupRequestProtocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Metadata, b[i].Metadata) {
			return false
		}
	}
	return true
}

// Join serves one JoinGroup. It blocks until the group's rebalance completes, or ctx ends
// (then it returns ctx's error and the member stays joined, as a Kafka broker keeps it).
func (m *Manager) Join(ctx context.Context, id kafka.Identity, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.MemberID = req.MemberID
	resp.Generation = -1
	fail := func(code int16) (*kmsg.JoinGroupResponse, error) {
		resp.ErrorCode = code
		return resp, nil
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return fail(kerr.NotCoordinator.Code)
	}
	if req.Group == "" {
		m.mu.Unlock()
		return fail(kerr.InvalidGroupID.Code)
	}
	session := ms(req.SessionTimeoutMillis)
	if session < m.cfg.MinSessionTimeout || session > m.cfg.MaxSessionTimeout {
		m.mu.Unlock()
		return fail(kerr.InvalidSessionTimeout.Code)
	}
	rebalance := ms(req.RebalanceTimeoutMillis)
	if req.Version == 0 || rebalance <= 0 {
		rebalance = session
	}
	g := m.groups[req.Group]
	created := false
	if g == nil {
		if req.MemberID != "" {
			m.mu.Unlock()
			return fail(kerr.UnknownMemberID.Code)
		}
		g = newGroup(req.Group)
		g.emptySince = m.clk.Now()
		created = true
	}
	if g.state == stDead {
		m.mu.Unlock()
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	switch {
	case g.cg != nil && !g.cg.Empty():
		// A consumer group with members takes no classic member here (Kafka 4 would add one
		// with its online migration; see the package doc).
		m.mu.Unlock()
		return fail(kerr.InconsistentGroupProtocol.Code)
	case g.cgBusy > 0:
		// A consumer heartbeat is changing the group (it may be making it a consumer group):
		// the client retries once it is done.
		m.mu.Unlock()
		return fail(kerr.CoordinatorLoadInProgress.Code)
	case g.cg != nil:
		// An empty consumer group becomes classic again, as in Kafka, its first classic
		// snapshot replacing it in the log.
		m.dropConsumer(g)
	}
	if !m.supportsProtocols(g, req) {
		m.mu.Unlock()
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	if created {
		m.groups[g.name] = g
	}
	if len(g.members) == 0 {
		g.protocolType = req.ProtocolType
	}

	fill := func(mem *member) {
		mem.rec.ClientID = id.ClientID
		mem.rec.ClientHost = id.ClientHost
		mem.rec.SessionTimeout = session
		mem.rec.RebalanceTimeout = rebalance
		mem.rec.Protocols = protocolsOf(req)
	}
	instance := ""
	if req.InstanceID != nil {
		instance = *req.InstanceID
	}

	var wait chan *kmsg.JoinGroupResponse
	switch {
	case req.MemberID == "" && instance != "" && g.members[g.static[instance]] != nil:
		r, w := m.replaceStatic(ctx, g, g.static[instance], id, req, resp, fill)
		if w == nil {
			return r, nil // replaceStatic unlocked
		}
		wait = w
	case req.MemberID == "":
		newID := newMemberID(id.ClientID)
		if instance == "" && req.Version >= 4 {
			// KIP-394: the member learns its id first and joins with it, so a client that times
			// out its first join does not leave an unknown member behind.
			m.addPending(g, newID, session)
			m.mu.Unlock()
			resp.MemberID = newID
			return fail(kerr.MemberIDRequired.Code)
		}
		mem := &member{rec: record.Member{MemberID: newID, InstanceID: instance}}
		fill(mem)
		wait = m.addMember(g, mem, resp)
	default:
		if m.dropPending(g, req.MemberID) {
			mem := &member{rec: record.Member{MemberID: req.MemberID, InstanceID: instance}}
			fill(mem)
			wait = m.addMember(g, mem, resp)
			break
		}
		if code := g.checkMember(req.MemberID, req.InstanceID); code != 0 {
			m.mu.Unlock()
			return fail(code)
		}
		mem := g.members[req.MemberID]
		same := sameProtocols(mem.rec.Protocols, req.Protocols)
		switch g.state {
		case stCompleting:
			if same {
				m.fillJoin(g, mem.rec.MemberID, resp)
				m.mu.Unlock()
				return resp, nil
			}
		case stStable:
			if same && g.leader != mem.rec.MemberID {
				m.fillJoin(g, mem.rec.MemberID, resp)
				m.mu.Unlock()
				return resp, nil
			}
		case stPreparing:
		default:
			m.mu.Unlock()
			return fail(kerr.UnknownMemberID.Code)
		}
		fill(mem)
		wait = m.park(g, mem, resp)
		m.prepareRebalance(g)
	}
	m.mu.Unlock()

	select {
	case r := <-wait:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// supportsProtocols is Kafka's check of a join against the group: an empty group takes any
// non-empty protocol type with at least one protocol; otherwise the type must match and one of
// the member's protocols must be one every member supports.
func (m *Manager) supportsProtocols(g *group, req *kmsg.JoinGroupRequest) bool {
	if len(g.members) == 0 {
		return req.ProtocolType != "" && len(req.Protocols) > 0
	}
	if req.ProtocolType != g.protocolType {
		return false
	}
	for _, p := range req.Protocols {
		if g.supportedByAll(p.Name) {
			return true
		}
	}
	return false
}

// supportedByAll reports whether every member lists protocol name.
func (g *group) supportedByAll(name string) bool {
	for _, mem := range g.members {
		found := false
		for _, p := range mem.rec.Protocols {
			if p.Name == name {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// checkMember validates a member id (and group.instance.id) against the group: a static
// member's id that is not its instance's current one is fenced.
func (g *group) checkMember(memberID string, instance *string) int16 {
	if instance != nil && *instance != "" {
		cur, ok := g.static[*instance]
		if ok && cur != memberID {
			return kerr.FencedInstanceID.Code
		}
		if !ok {
			return kerr.UnknownMemberID.Code
		}
	}
	if g.members[memberID] == nil {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// maxPending bounds the KIP-394 pending members of a manager, across its groups: each JoinGroup
// without a member id makes one, kept until the client joins with it or its session timeout (up
// to 30 min) passes, so a client that never comes back with its ids could make them without
// bound. Past it the oldest is dropped; a client that comes back with a dropped id is answered
// UNKNOWN_MEMBER_ID and joins again without one, as after its session timeout. A real client
// comes back within a round trip, so only a flood of first joins in one log partition reaches it.
const maxPending = 1024

// pendingMember is a KIP-394 member id handed out by a JoinGroup, not yet joined with.
type pendingMember struct {
	timer clock.Timer
	elem  *list.Element // in Manager.pendingOrder: a pendingRef
}

// pendingRef names a pending member in Manager.pendingOrder.
type pendingRef struct {
	g  *group
	id string
}

// addPending records a pending member until its session timeout, dropping the manager's oldest
// past maxPending. Called with m.mu held.
func (m *Manager) addPending(g *group, memberID string, session time.Duration) {
	for m.pendingOrder.Len() >= maxPending {
		old := m.pendingOrder.Front().Value.(pendingRef)
		m.dropPending(old.g, old.id)
		m.cfg.Metrics.pendingDropped.Add(1)
		m.pendingGone(old.g)
	}
	pm := &pendingMember{elem: m.pendingOrder.PushBack(pendingRef{g, memberID})}
	g.pending[memberID] = pm
	m.cfg.Metrics.pendingNow.Add(1)
	pm.timer = m.clk.AfterFunc(session, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if g.pending[memberID] != pm {
			return
		}
		m.dropPending(g, memberID)
		m.pendingGone(g)
	})
}

// dropPending forgets a pending member and reports whether there was one. Called with m.mu held.
func (m *Manager) dropPending(g *group, memberID string) bool {
	pm, ok := g.pending[memberID]
	if !ok {
		return false
	}
	if pm.timer != nil {
		pm.timer.Stop()
	}
	m.pendingOrder.Remove(pm.elem)
	delete(g.pending, memberID)
	m.cfg.Metrics.pendingNow.Add(-1)
	return true
}

// pendingGone is what a pending member's going changes: a rebalance that waited only for it
// completes, and a group left with nothing is forgotten. Called with m.mu held.
func (m *Manager) pendingGone(g *group) {
	if g.state == stPreparing {
		m.tryCompleteJoin(g)
	}
	m.dropIfUnused(g)
}

// dropIfUnused forgets a group that a failed or abandoned first join left with nothing.
func (m *Manager) dropIfUnused(g *group) {
	if g.cg == nil && g.cgBusy == 0 && g.state == stEmpty && len(g.members) == 0 && len(g.pending) == 0 && len(g.offsets) == 0 && g.lastSnap == nil && m.groups[g.name] == g {
		delete(m.groups, g.name)
	}
}

func (m *Manager) addMember(g *group, mem *member, resp *kmsg.JoinGroupResponse) chan *kmsg.JoinGroupResponse {
	g.members[mem.rec.MemberID] = mem
	g.order = append(g.order, mem.rec.MemberID)
	if mem.rec.InstanceID != "" {
		g.static[mem.rec.InstanceID] = mem.rec.MemberID
	}
	g.joined = true
	w := m.park(g, mem, resp)
	m.prepareRebalance(g)
	return w
}

// park makes mem wait in JoinGroup; an older parked join of the same member is answered.
func (m *Manager) park(g *group, mem *member, resp *kmsg.JoinGroupResponse) chan *kmsg.JoinGroupResponse {
	if mem.joinWait != nil {
		old := mem.joinResp
		old.ErrorCode = kerr.RebalanceInProgress.Code
		mem.joinWait <- old
	}
	mem.joinResp = resp
	mem.joinWait = make(chan *kmsg.JoinGroupResponse, 1)
	return mem.joinWait
}

func (m *Manager) removeMember(g *group, id string) {
	mem := g.members[id]
	if mem == nil {
		return
	}
	if mem.timer != nil {
		mem.timer.Stop()
	}
	mem.seq++
	delete(g.members, id)
	for i, o := range g.order {
		if o == id {
			g.order = append(g.order[:i:i], g.order[i+1:]...)
			break
		}
	}
	if mem.rec.InstanceID != "" && g.static[mem.rec.InstanceID] == id {
		delete(g.static, mem.rec.InstanceID)
	}
	delete(g.pendingSync, id)
	if g.leader == id {
		g.leader = ""
	}
}

func (g *group) maxRebalanceTimeout() time.Duration {
	var d time.Duration
	for _, mem := range g.members {
		d = max(d, mem.rec.RebalanceTimeout)
	}
	return d
}

// prepareRebalance moves the group to PreparingRebalance (or keeps it there) and completes the
// join at once when every member is already waiting.
func (m *Manager) prepareRebalance(g *group) {
	switch g.state {
	case stCompleting:
		for _, mem := range g.members {
			mem.rec.Assignment = nil
			if mem.syncWait != nil {
				r := mem.syncResp
				r.ErrorCode = kerr.RebalanceInProgress.Code
				mem.syncWait <- r
				mem.syncWait, mem.syncResp = nil, nil
			}
		}
		g.pendingSync = nil
		g.storing = false
		g.stopTimer()
	case stStable:
		for _, mem := range g.members {
			mem.rec.Assignment = nil
		}
		g.pendingSync = nil
	}
	if g.state == stPreparing {
		if !g.initial {
			m.tryCompleteJoin(g)
		}
		return
	}
	wasEmpty := g.state == stEmpty
	g.state = stPreparing
	rebalance := g.maxRebalanceTimeout()
	if wasEmpty && m.cfg.InitialRebalanceDelay > 0 {
		// Kafka's initial delayed join: wait for more members of a starting group, extending
		// by the delay while members keep coming, never past the rebalance timeout.
		delay := min(m.cfg.InitialRebalanceDelay, rebalance)
		g.joined = false
		m.initialDelay(g, delay, rebalance-delay)
		return
	}
	m.groupTimer(g, rebalance, func() { m.completeJoin(g) })
	m.tryCompleteJoin(g)
}

func (m *Manager) initialDelay(g *group, delay, remaining time.Duration) {
	m.groupTimer(g, delay, func() {
		if g.joined && remaining > 0 {
			g.joined = false
			d := min(m.cfg.InitialRebalanceDelay, remaining)
			m.initialDelay(g, d, remaining-d)
			return
		}
		g.initial = false
		if g.allJoined() {
			m.completeJoin(g)
			return
		}
		m.groupTimer(g, remaining, func() { m.completeJoin(g) })
	})
	g.initial = true
}

func (g *group) allJoined() bool {
	if len(g.pending) > 0 {
		return false
	}
	for _, mem := range g.members {
		if mem.joinWait == nil {
			return false
		}
	}
	return true
}

func (m *Manager) tryCompleteJoin(g *group) {
	if g.state == stPreparing && !g.initial && g.allJoined() {
		m.completeJoin(g)
	}
}

// completeJoin ends PreparingRebalance: members that did not rejoin are removed, the generation
// moves on, a protocol and a leader are chosen and every member gets its JoinGroup answer.
func (m *Manager) completeJoin(g *group) {
	if g.state != stPreparing {
		return
	}
	g.stopTimer()
	for _, id := range append([]string(nil), g.order...) {
		if g.members[id].joinWait == nil {
			m.removeMember(g, id)
		}
	}
	g.generation++
	if g.generation < 0 {
		g.generation = 1
	}
	if len(g.members) == 0 {
		g.state = stEmpty
		g.protocol = ""
		g.leader = ""
		g.emptySince = m.clk.Now()
		m.persistGroup(g)
		return
	}
	g.state = stCompleting
	g.protocol = g.selectProtocol()
	if g.leader == "" {
		g.leader = g.order[0]
	}
	g.pendingSync = make(map[string]bool, len(g.members))
	for _, id := range g.order {
		mem := g.members[id]
		g.pendingSync[id] = true
		r := mem.joinResp
		m.fillJoin(g, id, r)
		mem.joinWait <- r
		mem.joinWait, mem.joinResp = nil, nil
		m.heartbeat(g, mem)
	}
	gen := g.generation
	m.groupTimer(g, g.maxRebalanceTimeout(), func() {
		// Members that never sent SyncGroup are gone, also when the leader's assignment made
		// the group Stable meanwhile; the others rebalance without them.
		if (g.state != stCompleting && g.state != stStable) || g.generation != gen || len(g.pendingSync) == 0 {
			return
		}
		for id := range g.pendingSync {
			m.removeMember(g, id)
		}
		m.prepareRebalance(g)
	})
}

// selectProtocol is Kafka's vote: of the protocols every member supports, each member votes for
// the first in its own list, and the most votes win (ties go to the earliest in join order).
func (g *group) selectProtocol() string {
	votes := make(map[string]int)
	var order []string
	for _, id := range g.order {
		for _, p := range g.members[id].rec.Protocols {
			if g.supportedByAll(p.Name) {
				if _, ok := votes[p.Name]; !ok {
					order = append(order, p.Name)
				}
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, name := range order {
		if best == "" || votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

func (m *Manager) fillJoin(g *group, memberID string, r *kmsg.JoinGroupResponse) {
	r.ErrorCode = 0
	r.Generation = g.generation
	r.ProtocolType = kmsg.StringPtr(g.protocolType)
	r.Protocol = kmsg.StringPtr(g.protocol)
	r.LeaderID = g.leader
	r.MemberID = memberID
	r.Members = nil
	if memberID != g.leader {
		return
	}
	for _, id := range g.order {
		mem := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		if mem.rec.InstanceID != "" {
			jm.InstanceID = kmsg.StringPtr(mem.rec.InstanceID)
		}
		for _, p := range mem.rec.Protocols {
			if p.Name == g.protocol {
				jm.ProtocolMetadata = p.Metadata
				break
			}
		}
		r.Members = append(r.Members, jm)
	}
}

// replaceStatic is a known group.instance.id joining with no member id: a restarted static
// member. It takes over the old member's place and assignment under a new member id, fencing
// the old id. In a Stable group whose selected protocol the new member keeps, there is no
// rebalance (KIP-345): the group is journaled with the new id and the member answered at once.
// Called with m.mu held; it returns with m.mu released when it answers (nil wait), held when
// the member must wait for a rebalance.
func (m *Manager) replaceStatic(ctx context.Context, g *group, oldID string, id kafka.Identity, req *kmsg.JoinGroupRequest, resp *kmsg.JoinGroupResponse, fill func(*member)) (*kmsg.JoinGroupResponse, chan *kmsg.JoinGroupResponse) {
	old := g.members[oldID]
	newID := newMemberID(id.ClientID)
	mem := &member{rec: record.Member{MemberID: newID, InstanceID: old.rec.InstanceID, Assignment: old.rec.Assignment}}
	fill(mem)
	answerError(old, kerr.FencedInstanceID.Code)
	if old.timer != nil {
		old.timer.Stop()
	}
	old.seq++
	delete(g.members, oldID)
	g.members[newID] = mem
	for i, o := range g.order {
		if o == oldID {
			g.order[i] = newID
		}
	}
	g.static[mem.rec.InstanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}

	if g.state == stStable && g.selectProtocol() == g.protocol {
		m.heartbeat(g, mem)
		m.fillJoin(g, newID, resp)
		resp.SkipAssignment = newID == g.leader
		snap := m.snapshot(g, nil)
		wait, done := g.takeTurn()
		m.mu.Unlock()
		defer done()
		err := m.append(wait, []record.Record{groupRecord(snap)})
		m.mu.Lock()
		defer m.mu.Unlock()
		if code := m.journalCode(err); code != 0 {
			r := req.ResponseKind().(*kmsg.JoinGroupResponse)
			r.MemberID = newID
			r.Generation = -1
			r.ErrorCode = code
			return r, nil
		}
		g.lastSnap = &snap
		return resp, nil
	}
	w := m.park(g, mem, resp)
	m.prepareRebalance(g)
	return nil, w
}

// heartbeat (re)starts mem's session timer. A member waiting in JoinGroup or SyncGroup is kept
// alive, as Kafka keeps it; the others are removed when the session times out.
func (m *Manager) heartbeat(g *group, mem *member) {
	if mem.timer != nil {
		mem.timer.Stop()
	}
	mem.seq++
	seq := mem.seq
	mem.timer = m.clk.AfterFunc(mem.rec.SessionTimeout, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed || m.groups[g.name] != g || g.members[mem.rec.MemberID] != mem || mem.seq != seq {
			return
		}
		if mem.waiting() {
			m.heartbeat(g, mem)
			return
		}
		m.log.Info("group member session expired", "group", g.name, "member", mem.rec.MemberID)
		m.removeMember(g, mem.rec.MemberID)
		m.prepareRebalance(g)
	})
}

// Sync serves one SyncGroup. A follower waits for the leader's assignment; the leader's
// assignment is journaled as a group snapshot before anyone gets it.
func (m *Manager) Sync(ctx context.Context, id kafka.Identity, req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, error) {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	fail := func(code int16) (*kmsg.SyncGroupResponse, error) {
		m.mu.Unlock()
		resp.ErrorCode = code
		return resp, nil
	}
	m.mu.Lock()
	if m.closed {
		return fail(kerr.NotCoordinator.Code)
	}
	g := m.groups[req.Group]
	if g == nil {
		return fail(kerr.UnknownMemberID.Code)
	}
	if g.state == stDead {
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	if code := g.checkMember(req.MemberID, req.InstanceID); code != 0 {
		return fail(code)
	}
	if req.Generation != g.generation {
		return fail(kerr.IllegalGeneration.Code)
	}
	if (req.ProtocolType != nil && *req.ProtocolType != g.protocolType) || (req.Protocol != nil && *req.Protocol != g.protocol) {
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	mem := g.members[req.MemberID]
	switch g.state {
	case stPreparing:
		return fail(kerr.RebalanceInProgress.Code)
	case stStable:
		delete(g.pendingSync, req.MemberID)
		if len(g.pendingSync) == 0 {
			g.stopTimer()
		}
		m.heartbeat(g, mem)
		m.fillSync(g, mem, resp)
		m.mu.Unlock()
		return resp, nil
	case stCompleting:
	default:
		return fail(kerr.UnknownMemberID.Code)
	}
	delete(g.pendingSync, req.MemberID)
	if mem.syncWait != nil {
		old := mem.syncResp
		old.ErrorCode = kerr.RebalanceInProgress.Code
		mem.syncWait <- old
	}
	mem.syncResp = resp
	mem.syncWait = make(chan *kmsg.SyncGroupResponse, 1)
	wait := mem.syncWait
	if req.MemberID == g.leader && !g.storing {
		m.storeAssignment(ctx, g, req)
	}
	m.mu.Unlock()
	select {
	case r := <-wait:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// storeAssignment journals the leader's assignment and, once the log holds it, makes the group
// Stable and releases every waiting SyncGroup. Called with m.mu held; returns with it held.
func (m *Manager) storeAssignment(ctx context.Context, g *group, req *kmsg.SyncGroupRequest) {
	assign := make(map[string][]byte, len(g.members))
	for _, a := range req.GroupAssignment {
		if g.members[a.MemberID] != nil {
			assign[a.MemberID] = clone(a.MemberAssignment) // the request buffer is reused
		}
	}
	for id := range g.members {
		if len(assign[id]) == 0 {
			if g.protocolType == "consumer" {
				assign[id] = emptyConsumerAssignment
			} else {
				assign[id] = []byte{}
			}
		}
	}
	g.storing = true
	gen := g.generation
	snap := m.snapshot(g, assign)
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer m.mu.Lock()
	defer done()
	err := m.append(wait, []record.Record{groupRecord(snap)})
	m.mu.Lock()
	defer m.mu.Unlock()
	if errors.Is(err, ErrNotCoordinator) {
		m.journalCode(err)
		return
	}
	if m.closed || m.groups[g.name] != g || g.generation != gen || g.state != stCompleting || !g.storing {
		// The group moved on (a member joined or left) while the log was written: the members
		// were answered by that change.
		return
	}
	g.storing = false
	if code := m.journalCode(err); code != 0 {
		for _, mem := range g.members {
			if mem.syncWait != nil {
				r := mem.syncResp
				r.ErrorCode = code
				mem.syncWait <- r
				mem.syncWait, mem.syncResp = nil, nil
			}
		}
		m.prepareRebalance(g)
		return
	}
	g.lastSnap = &snap
	if len(g.pendingSync) == 0 {
		g.stopTimer()
	}
	g.state = stStable
	for id, mem := range g.members {
		mem.rec.Assignment = assign[id]
		if mem.syncWait != nil {
			r := mem.syncResp
			m.fillSync(g, mem, r)
			mem.syncWait <- r
			mem.syncWait, mem.syncResp = nil, nil
		}
		m.heartbeat(g, mem)
	}
}

func (m *Manager) fillSync(g *group, mem *member, r *kmsg.SyncGroupResponse) {
	r.ErrorCode = 0
	r.ProtocolType = kmsg.StringPtr(g.protocolType)
	r.Protocol = kmsg.StringPtr(g.protocol)
	r.MemberAssignment = mem.rec.Assignment
}

// Heartbeat serves one Heartbeat: it keeps a member's session alive and tells it to rejoin
// while the group rebalances.
func (m *Manager) Heartbeat(ctx context.Context, id kafka.Identity, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	m.mu.Lock()
	defer m.mu.Unlock()
	resp.ErrorCode = m.heartbeatCode(req)
	return resp
}

func (m *Manager) heartbeatCode(req *kmsg.HeartbeatRequest) int16 {
	if m.closed {
		return kerr.NotCoordinator.Code
	}
	g := m.groups[req.Group]
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	switch g.state {
	case stDead:
		return kerr.CoordinatorNotAvailable.Code
	case stEmpty:
		return kerr.UnknownMemberID.Code
	}
	if code := g.checkMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration.Code
	}
	m.heartbeat(g, g.members[req.MemberID])
	if g.state == stPreparing {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// Leave serves one LeaveGroup: v0-2 one member by id, v3+ a batch by id or group.instance.id,
// each answered on its own.
func (m *Manager) Leave(ctx context.Context, id kafka.Identity, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		leaving = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	top := int16(0)
	g := m.groups[req.Group]
	switch {
	case m.closed:
		top = kerr.NotCoordinator.Code
	case g == nil:
		if req.Version < 3 {
			top = kerr.UnknownMemberID.Code
		}
	case g.state == stDead:
		top = kerr.CoordinatorNotAvailable.Code
	}
	if top != 0 {
		resp.ErrorCode = top
		return resp
	}
	removed := false
	for _, lm := range leaving {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID = lm.MemberID
		rm.InstanceID = lm.InstanceID
		rm.ErrorCode = m.leaveOne(g, lm, &removed)
		resp.Members = append(resp.Members, rm)
	}
	if removed {
		m.prepareRebalance(g)
	} else if g != nil && g.state == stPreparing {
		m.tryCompleteJoin(g)
	}
	if req.Version < 3 {
		resp.ErrorCode = resp.Members[0].ErrorCode
		resp.Members = nil
	}
	return resp
}

func (m *Manager) leaveOne(g *group, lm kmsg.LeaveGroupRequestMember, removed *bool) int16 {
	if g == nil {
		return kerr.UnknownMemberID.Code
	}
	memberID := lm.MemberID
	if lm.InstanceID != nil && *lm.InstanceID != "" {
		cur, ok := g.static[*lm.InstanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if memberID != "" && memberID != cur {
			return kerr.FencedInstanceID.Code
		}
		memberID = cur
	}
	if m.dropPending(g, memberID) {
		return 0
	}
	mem := g.members[memberID]
	if mem == nil {
		return kerr.UnknownMemberID.Code
	}
	answerError(mem, kerr.UnknownMemberID.Code)
	m.removeMember(g, memberID)
	*removed = true
	return 0
}
