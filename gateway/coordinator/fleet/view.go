package fleet

import (
	"maps"
	"slices"
	"time"
)

// NodeState is what a gateway is doing for the fleet, as the log says. The values are an
// interface (JSON output, golden files): add, never rename.
type NodeState string

const (
	// Serving: live, not drained, takes its share of the coordinator partitions.
	Serving NodeState = "serving"
	// Draining: an operator's drain stands, or the node says it is drained, but it still
	// announces coordinator partitions (or has not yet said it is drained).
	Draining NodeState = "draining"
	// Drained: the node announces itself drained and holds no coordinator partition; it still
	// serves produce and fetch.
	Drained NodeState = "drained"
	// Gone: no announcement within the live bound, a leaving announcement, or its lease
	// membership ended.
	Gone NodeState = "gone"
)

// Node is one gateway as the fleet model knows it.
type Node struct {
	ID    int32
	State NodeState
	// Addr is the Kafka address from its newest announcement, else from its newest claim.
	Addr string
	// Partitions are the log partitions its newest announcement lists, in order.
	Partitions []int
	// Announced is the time of its newest announcement (the writer's clock); zero when the log
	// knows the node only from a claim.
	Announced time.Time
	// DrainRequested says the node's latest drain request stands; DrainedSince is that
	// request's time (zero when it carries none).
	DrainRequested bool
	DrainedSince   time.Time
	Leaving        bool
	// Member is its lease membership (HasMember false when none).
	Member    uint32
	HasMember bool
	Version   string
}

// View is the fold that turns OwnersTopic and DrainsTopic into the fleet: each node's newest
// announcement and latest drain request, both in log order (the writers' clocks do not decide
// which statement is newer), skipping malformed messages. Gateways and operator tools feed it
// the same messages and so see the same owners, the same drained set and the same nodes.
// Liveness compares an announcement's time (the writer's clock) with the reader's now, so the
// fleet's clocks must agree to well within Live. Not safe for concurrent use.
type View struct {
	// Live is how long an announcement keeps a node live.
	Live   time.Duration
	ann    map[int32]Announcement
	drains map[int32]DrainRequest
	// drainAt is the DrainsTopic offset of each node's latest request.
	drainAt map[int32]uint64
	claims  map[int32]string // node -> address, for nodes the log knows from claims
	// members is the lease group's membership as last read, when known.
	members    []uint32
	hasMembers bool
}

// NewView returns an empty view with the given live bound (DefaultLive when 0).
func NewView(live time.Duration) *View {
	if live <= 0 {
		live = DefaultLive
	}
	return &View{Live: live, ann: map[int32]Announcement{}, drains: map[int32]DrainRequest{}, drainAt: map[int32]uint64{}, claims: map[int32]string{}}
}

// ApplyOwners folds the next OwnersTopic message; a malformed one changes nothing and is
// ErrAnnouncement.
func (v *View) ApplyOwners(payload []byte) error {
	a, err := DecodeAnnouncement(payload)
	if err != nil {
		return err
	}
	v.Announce(a)
	return nil
}

// Announce folds a decoded announcement: it replaces the node's previous one.
func (v *View) Announce(a Announcement) { v.ann[a.Node] = a }

// ApplyDrains folds the next DrainsTopic message, at offset in that topic; a malformed one
// changes nothing and is ErrDrainRequest. The offset is what says which of two requests is the
// later one (DrainRequestAt): never the requests' times, which are their writers' clocks.
func (v *View) ApplyDrains(offset uint64, payload []byte) error {
	r, err := DecodeDrainRequest(payload)
	if err != nil {
		return err
	}
	v.drains[r.Node], v.drainAt[r.Node] = r, offset
	return nil
}

// KnowClaim records that the log holds a claim by node at addr, so a node that stopped long ago
// is still listed (as gone).
func (v *View) KnowClaim(node int32, addr string) { v.claims[node] = addr }

// SetMembers records the lease group's membership as read at one instant. A node whose newest
// announcement names a member id that is no longer a member has lost its lease (it crashed, or
// its session ended) and is gone, without waiting for Live to pass; another node announcing
// the same id later (Iggy reuses ids) takes it over.
func (v *View) SetMembers(members []uint32) {
	v.members, v.hasMembers = slices.Clone(members), true
}

// Announcement is node's newest announcement.
func (v *View) Announcement(node int32) (Announcement, bool) {
	a, ok := v.ann[node]
	return a, ok
}

// Announcements returns a copy of every node's newest announcement.
func (v *View) Announcements() map[int32]Announcement { return maps.Clone(v.ann) }

// DrainRequest is node's latest drain request.
func (v *View) DrainRequest(node int32) (DrainRequest, bool) {
	r, ok := v.drains[node]
	return r, ok
}

// DrainRequestAt is node's latest drain request with its DrainsTopic offset.
func (v *View) DrainRequestAt(node int32) (DrainRequest, uint64, bool) {
	r, ok := v.drains[node]
	return r, v.drainAt[node], ok
}

// DrainStands reports whether node's latest drain request is a drain, not an undo.
func (v *View) DrainStands(node int32) bool {
	r, ok := v.drains[node]
	return ok && !r.Undo
}

// DrainedSet lists, in order, the nodes whose drain stands.
func (v *View) DrainedSet() []int32 {
	var out []int32
	for n, r := range v.drains {
		if !r.Undo {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Alive reports whether node announced within Live before now, is not leaving, and has not
// lost its lease membership.
func (v *View) Alive(node int32, now time.Time) bool {
	a, ok := v.ann[node]
	return ok && v.alive(a, now)
}

func (v *View) alive(a Announcement, now time.Time) bool {
	if a.Leaving || now.Sub(a.Time) > v.Live {
		return false
	}
	return !v.lostMember(a)
}

// lostMember: a's member id is not in the last membership read, or a newer announcement of
// another node names the same id.
func (v *View) lostMember(a Announcement) bool {
	if !a.HasMember || !v.hasMembers {
		return false
	}
	if !slices.Contains(v.members, a.Member) {
		return true
	}
	for n, o := range v.ann {
		if n != a.Node && o.HasMember && o.Member == a.Member && o.Time.After(a.Time) {
			return true
		}
	}
	return false
}

// Owner is the owner of log partition p that the announcements name: among live nodes other
// than except, the one listing p under the highest claim. ok is false when none does.
func (v *View) Owner(p int, now time.Time, except int32) (node int32, claim uint64, ok bool) {
	for n, a := range v.ann {
		if n == except || !v.alive(a, now) {
			continue
		}
		if cl, has := a.Claims[p]; has && (!ok || cl > claim || cl == claim && n < node) {
			node, claim, ok = n, cl, true
		}
	}
	return node, claim, ok
}

// LeaseMember is the member the lease rule (Lease) gives log partition p among the live members
// (LiveMembers) of the membership last read (SetMembers). ok is false when no membership was
// read or none of its members is live. MemberNode names the node that holds it.
func (v *View) LeaseMember(p int, now time.Time) (member uint32, ok bool) {
	if !v.hasMembers {
		return 0, false
	}
	return Lease(v.LiveMembers(v.members, now), p)
}

// MemberNode maps a lease member id to the live node that announces it.
func (v *View) MemberNode(member uint32, now time.Time) (int32, bool) {
	var node int32
	var at time.Time
	found := false
	for n, a := range v.ann {
		if a.HasMember && a.Member == member && v.alive(a, now) && (!found || a.Time.After(at)) {
			node, at, found = n, a.Time, true
		}
	}
	return node, found
}

// LiveMembers lists, in members' order, the lease group's members that a gateway announces as
// its own, within LeaseLiveFactor x Live of now and not leaving: the lease (Assign) is computed over them
// alone. Iggy keeps a member
// until its session leaves, logs out, or is seen to close or go stale by the server node holding
// its connection; after an Iggy restart, or the loss of the node that held it, no node does, so
// the member of a gateway that is gone stays in the group for good. Counted, it would hold log
// partitions that nobody serves. A gateway that has just joined counts from the moment its own
// announcement is read back, for every gateway alike. A gateway that joins again (a new
// session after an Iggy restart) names its new member at once, and its old one is no longer
// named by anyone; so the bound only decides how long the member of a gateway that never came
// back counts, and it is LeaseLiveFactor x Live, longer than Live: a gateway whose announcements are late
// under load must not lose its partitions for it, nor take them back a moment later.
func (v *View) LiveMembers(members []uint32, now time.Time) []uint32 {
	out := make([]uint32, 0, len(members))
	for _, m := range members {
		for _, a := range v.ann {
			if a.HasMember && a.Member == m && !a.Leaving && now.Sub(a.Time) <= LeaseLiveFactor*v.Live && !v.lostMember(a) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

// State is node's state now (Gone for a node the view does not know).
func (v *View) State(node int32, now time.Time) NodeState {
	a, ok := v.ann[node]
	if !ok || !v.alive(a, now) {
		return Gone
	}
	stands := v.DrainStands(node)
	switch {
	case a.Draining && len(a.Claims) == 0:
		return Drained
	case stands || a.Draining:
		return Draining
	}
	return Serving
}

// ServesShare reports whether node serves its share of the log now: with the lease group's
// membership read (SetMembers), it is a live member and announces a claim on every log partition
// the lease gives its member among the live members; without it, it announces at least one
// claim. An undone drain ends here, once the node has taken its partitions back.
func (v *View) ServesShare(node int32, now time.Time) bool {
	a, ok := v.ann[node]
	if !ok || !v.alive(a, now) {
		return false
	}
	if !v.hasMembers {
		return len(a.Claims) > 0
	}
	live := v.LiveMembers(v.members, now)
	if !a.HasMember || !slices.Contains(live, a.Member) {
		return false
	}
	for _, p := range Held(live, a.Member) {
		if _, ok := a.Claims[p]; !ok {
			return false
		}
	}
	return true
}

// Serving lists, in order, the nodes that serve now and whose drain does not stand: the
// gateways that would take over partitions.
func (v *View) Serving(now time.Time) []int32 {
	var out []int32
	for n := range v.ann {
		if v.State(n, now) == Serving && !v.DrainStands(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Nodes lists every node the log knows (announced, claimed or named by a standing drain of a
// node it knows), by id.
func (v *View) Nodes(now time.Time) []Node {
	ids := map[int32]bool{}
	for n := range v.ann {
		ids[n] = true
	}
	for n := range v.claims {
		ids[n] = true
	}
	out := make([]Node, 0, len(ids))
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		nd := Node{ID: id, State: v.State(id, now), Addr: v.claims[id]}
		if a, ok := v.ann[id]; ok {
			if a.Addr != "" {
				nd.Addr = a.Addr
			}
			nd.Partitions = slices.Sorted(maps.Keys(a.Claims))
			nd.Announced, nd.Leaving = a.Time, a.Leaving
			nd.Member, nd.HasMember, nd.Version = a.Member, a.HasMember, a.Version
		}
		if r, ok := v.drains[id]; ok && !r.Undo {
			nd.DrainRequested, nd.DrainedSince = true, r.Time
		}
		out = append(out, nd)
	}
	return out
}
