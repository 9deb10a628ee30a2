package store

import (
	"slices"
	"sort"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// group is a consumer group of one topic. A member is a logged-in session,
// or, after a restart, what is left of one (sess nil): the membership is kept
// in the metadata document (written shortly after each change) and, as on
// the real server, a member whose session died with the previous run stays
// until the group is deleted. Server.mu guards every field.
type group struct {
	topic      *topic
	id         uint32
	name       string
	members    []*member // indexed by member id (slot); nil holes are reused
	generation uint64
}

type member struct {
	slot  uint32
	sess  *session
	owned []uint32
	// pending holds owned partitions being handed to another member: the
	// owner may no longer poll them but may still commit their offsets.
	pending map[uint32]revocation
	// polled is the last offset handed out per partition; a partition whose
	// group offset is below it holds work in flight and is not moved at once.
	polled map[uint32]uint64
}

type revocation struct {
	target   *member
	deadline time.Time
}

func (g *group) memberCount() int {
	n := 0
	for _, m := range g.members {
		if m != nil {
			n++
		}
	}
	return n
}

func (g *group) activeMembers() []*member {
	out := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (g *group) memberOf(sess *session) *member {
	if sess == nil {
		return nil
	}
	for _, m := range g.members {
		if m != nil && m.sess == sess {
			return m
		}
	}
	return nil
}

// committed reports whether the group's stored offset on partition pid has
// reached what m was last given there.
func (g *group) committed(m *member, pid uint32) bool {
	last, ok := m.polled[pid]
	if !ok {
		return true
	}
	p := g.topic.partition(pid)
	if p == nil {
		return true
	}
	off, ok := p.offsets[consumerKey{kind: wire.ConsumerKindGroup, id: g.id}]
	return ok && off >= last
}

// join adds sess as a member and hands it partitions cooperatively
// (protocol 10.4): unowned partitions go to members that own nothing, then
// members above their fair share give their excess to members that own
// nothing; a partition with uncommitted polled work moves only once that work
// is committed or revokeAfter has passed. Joining twice is a no-op.
func (g *group) join(sess *session, now time.Time, revokeAfter time.Duration) {
	if g.memberOf(sess) != nil {
		return
	}
	slot := freeSlot(g.members)
	m := &member{slot: uint32(slot), sess: sess}
	g.members = putSlot(g.members, slot, m)
	sess.groups = append(sess.groups, g)
	g.generation++

	members := g.activeMembers()
	nparts := len(g.topic.partitions)
	owned := make(map[uint32]bool, nparts)
	for _, x := range members {
		for _, p := range x.owned {
			owned[p] = true
		}
	}
	var empties []*member
	for _, x := range members {
		if len(x.owned) == 0 {
			empties = append(empties, x)
		}
	}
	i := 0
	for p := range uint32(nparts) {
		if !owned[p] {
			e := empties[i%len(empties)]
			e.owned = append(e.owned, p)
			i++
		}
	}

	targeted := make(map[*member]bool)
	for _, x := range members {
		for _, r := range x.pending {
			targeted[r.target] = true
		}
	}
	var targets []*member
	for _, x := range members {
		if len(x.owned) == 0 && !targeted[x] {
			targets = append(targets, x)
		}
	}
	if len(targets) == 0 {
		return
	}
	base, extra := nparts/len(members), nparts%len(members)
	byLoad := slices.Clone(members)
	sort.SliceStable(byLoad, func(a, b int) bool { return len(byLoad[a].owned) > len(byLoad[b].owned) })
	next := 0
	for rank, giver := range byLoad {
		allow := base
		if rank < extra {
			allow++
		}
		movable := len(giver.owned) - len(giver.pending)
		for movable > allow {
			p, ok := giver.lastMovable()
			if !ok {
				break
			}
			target := targets[next%len(targets)]
			next++
			movable--
			if g.committed(giver, p) {
				giver.drop(p)
				target.owned = append(target.owned, p)
				continue
			}
			if giver.pending == nil {
				giver.pending = make(map[uint32]revocation)
			}
			giver.pending[p] = revocation{target: target, deadline: now.Add(revokeAfter)}
		}
	}
}

// lastMovable is the last owned partition not already being handed off.
func (m *member) lastMovable() (uint32, bool) {
	for i := len(m.owned) - 1; i >= 0; i-- {
		if _, busy := m.pending[m.owned[i]]; !busy {
			return m.owned[i], true
		}
	}
	return 0, false
}

func (m *member) drop(p uint32) {
	if i := slices.Index(m.owned, p); i >= 0 {
		m.owned = slices.Delete(m.owned, i, i+1)
	}
	delete(m.pending, p)
	delete(m.polled, p)
}

func (m *member) owns(p uint32) bool { return slices.Contains(m.owned, p) }

func (m *member) canPoll(p uint32) bool {
	_, busy := m.pending[p]
	return !busy && m.owns(p)
}

// pollable is what sync reports: owned partitions minus pending hand-offs.
func (m *member) pollable() []uint32 {
	out := make([]uint32, 0, len(m.owned))
	for _, p := range m.owned {
		if _, busy := m.pending[p]; !busy {
			out = append(out, p)
		}
	}
	return out
}

// settle completes hand-offs whose work is committed or whose deadline has
// passed; each completed hand-off is a new generation. It returns the
// earliest deadline still pending, or the zero time if none is.
func (g *group) settle(now time.Time) time.Time {
	var next time.Time
	for _, m := range g.members {
		if m == nil {
			continue
		}
		for p, r := range m.pending {
			if !g.committed(m, p) && now.Before(r.deadline) {
				if next.IsZero() || r.deadline.Before(next) {
					next = r.deadline
				}
				continue
			}
			m.drop(p)
			if r.target != nil && g.memberOf(r.target.sess) == r.target {
				r.target.owned = append(r.target.owned, p)
			}
			g.generation++
		}
	}
	return next
}

// leave removes sess from the group and rebalances fully.
func (g *group) leave(sess *session) bool {
	m := g.memberOf(sess)
	if m == nil {
		return false
	}
	g.members[m.slot] = nil
	for len(g.members) > 0 && g.members[len(g.members)-1] == nil {
		g.members = g.members[:len(g.members)-1]
	}
	if i := slices.Index(sess.groups, g); i >= 0 {
		sess.groups = slices.Delete(sess.groups, i, i+1)
	}
	g.rebalance()
	return true
}

// rebalance assigns partition i to the (i mod M)-th member in member order
// and drops every pending hand-off (protocol 10.4).
func (g *group) rebalance() {
	g.generation++
	members := g.activeMembers()
	for _, m := range members {
		m.owned = m.owned[:0]
		m.pending = nil
		m.polled = nil
	}
	if len(members) == 0 {
		return
	}
	for p := range uint32(len(g.topic.partitions)) {
		m := members[int(p)%len(members)]
		m.owned = append(m.owned, p)
	}
}

// dissolve removes every member; used when the group or its topic goes away.
func (g *group) dissolve() {
	for _, m := range g.members {
		if m == nil || m.sess == nil {
			continue
		}
		if i := slices.Index(m.sess.groups, g); i >= 0 {
			m.sess.groups = slices.Delete(m.sess.groups, i, i+1)
		}
	}
	g.members = nil
}

func (m *member) notePolled(p uint32, last uint64) {
	if m.polled == nil {
		m.polled = make(map[uint32]uint64)
	}
	m.polled[p] = last
}

// settleRevocations runs the hand-off deadlines of every group and returns
// how long until the next one; a duration longer than a heartbeat if none.
func (s *Server) settleRevocations(now time.Time) time.Duration {
	wait := s.cfg.HeartbeatInterval + 1
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.state.streams {
		if st == nil {
			continue
		}
		for _, t := range st.topics {
			if t == nil {
				continue
			}
			for _, g := range t.groups {
				if g == nil {
					continue
				}
				if next := g.settle(now); !next.IsZero() {
					wait = min(wait, next.Sub(now))
				}
			}
		}
	}
	return wait
}
