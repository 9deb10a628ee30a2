package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Drainer is what `drain node N` needs to change the fleet.
type Drainer interface {
	// RequestDrain asks node to release its coordinator partitions and to leave Metadata
	// leadership while it keeps serving produce and fetch for the clients connected to it;
	// undo brings it back.
	RequestDrain(ctx context.Context, node int32, undo bool) error
}

// Writer is what a Drainer needs to write requests; *iggy.Client has it.
type Writer interface {
	CreateTopic(ctx context.Context, stream wire.Identifier, name string, partitions uint32, opts iggy.TopicOptions) (*wire.TopicDetails, error)
	SendMessages(ctx context.Context, stream, topic wire.Identifier, partition uint32, msgs []iggy.Message) (uint64, error)
}

// IggyDrainer is the Drainer over the coordinator log's stream: requests appended to
// fleet.DrainsTopic in fleet's encoding. The topic is durable (a restarted node reads its latest
// request again) and authorized by Iggy: only a user allowed to send to the meta stream can
// write it.
type IggyDrainer struct {
	Log    *Log
	Writer Writer
}

func (d IggyDrainer) RequestDrain(ctx context.Context, node int32, undo bool) error {
	b := fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node, Undo: undo, Time: d.Log.clock.Now().UTC()})
	_, err := d.Writer.CreateTopic(ctx, d.Log.stream, fleet.DrainsTopic, 1, iggy.TopicOptions{})
	if err != nil && !errors.Is(err, wire.TopicNameAlreadyExists) {
		return fmt.Errorf("drain topic %s: %w", fleet.DrainsTopic, err)
	}
	if _, err := d.Writer.SendMessages(ctx, d.Log.stream, wire.NamedID(fleet.DrainsTopic), 0, []iggy.Message{{Payload: b}}); err != nil {
		return fmt.Errorf("drain request for node %d: %w", node, err)
	}
	return nil
}

// DrainStep is one partition a drain moves. JSON field names are an interface.
type DrainStep struct {
	Partition int    `json:"partition"`
	From      int32  `json:"from_node"`
	To        *int32 `json:"to_node"` // nil when no serving node would hold the lease
	Claim     uint64 `json:"claim"`
	// Collateral is a move of a partition whose owner is not drained: the lease of the fleet
	// after the drain gives it to another node than the one holding it now.
	Collateral bool     `json:"collateral"`
	Groups     []string `json:"groups"`
	Members    int      `json:"members"`
}

func (DrainStep) Columns() []string {
	return []string{"PARTITION", "FROM-NODE", "TO-NODE", "CLAIM", "GROUPS", "MEMBERS", "COLLATERAL"}
}

func (s DrainStep) Cells() []string {
	to, coll := "-", "-"
	if s.To != nil {
		to = strconv.Itoa(int(*s.To))
	}
	if s.Collateral {
		coll = "yes"
	}
	return []string{strconv.Itoa(s.Partition), strconv.Itoa(int(s.From)), to, strconv.FormatUint(s.Claim, 10), strconv.Itoa(len(s.Groups)), strconv.Itoa(s.Members), coll}
}

// DrainPlan is what draining Nodes together does: every partition that moves, with its source
// and destination, and the gateways left serving.
type DrainPlan struct {
	Nodes        []int32     `json:"nodes"`
	Steps        []DrainStep `json:"moves"`
	ServingAfter []int32     `json:"serving_after"`
	// owners is each partition's claim node when the plan was made (-1 none), for Compare.
	owners [fleet.Partitions]int32
}

// DrainRefused is a drain or an undo that the safety rules refuse; its message is one sentence
// that says why and what to do.
type DrainRefused struct{ Reason string }

func (e *DrainRefused) Error() string { return e.Reason }

func refuse(format string, args ...any) error {
	return &DrainRefused{Reason: fmt.Sprintf(format, args...)}
}

// PlanDrain plans draining nodes together. It refuses, whatever the caller's flags, a drain
// that would leave no serving gateway, and a drain of a node that is unknown, gone or already
// drained. Moves come from fleet.Lease over the lease group's live members without the drained
// nodes' members, so collateral moves (a few, as the bounded lease evens the shares, or a
// handover under way) are listed too.
func PlanDrain(m *Model, nodes []int32, now time.Time) (DrainPlan, error) {
	v := m.View
	if err := checkKnown(m, nodes, now); err != nil {
		return DrainPlan{}, err
	}
	for _, n := range nodes {
		if r, ok := v.DrainRequest(n); ok && !r.Undo {
			return DrainPlan{}, refuse("node %d is already drained%s; undo it with '%s drain node %d --undo'", n, since(r.Time), program, n)
		}
		if v.State(n, now) == fleet.Gone {
			return DrainPlan{}, refuse("node %d is gone (no announcement within %v, or it left the lease group): its partitions move when its lease ends; there is nothing to drain", n, v.Live)
		}
	}
	serving := v.Serving(now)
	after := slices.DeleteFunc(slices.Clone(serving), func(n int32) bool { return slices.Contains(nodes, n) })
	if len(after) == 0 {
		return DrainPlan{}, refuse("refusing to drain %s: no gateway would be left serving the coordinator log (%s)", nodeList(nodes), servingNow(serving))
	}
	plan := DrainPlan{Nodes: slices.Clone(nodes), ServingAfter: after, Steps: []DrainStep{}}
	slices.Sort(plan.Nodes)
	drainedMembers := map[uint32]bool{}
	for _, n := range nodes {
		if a, ok := v.Announcement(n); ok && a.HasMember {
			drainedMembers[a.Member] = true
		}
	}
	membersAfter := slices.DeleteFunc(v.LiveMembers(m.Members, now), func(id uint32) bool { return drainedMembers[id] })
	for p, t := range m.Parts {
		plan.owners[p] = -1
		cl := t.State.Claim()
		if cl.Number == 0 {
			continue
		}
		plan.owners[p] = cl.Node
		var to *int32
		if id, ok := fleet.Lease(membersAfter, p); ok {
			if n, ok := v.MemberNode(id, now); ok {
				to = &n
			}
		}
		drained := slices.Contains(nodes, cl.Node)
		if !drained && (to == nil || *to == cl.Node) {
			continue
		}
		step := DrainStep{Partition: p, From: cl.Node, To: to, Claim: cl.Number, Collateral: !drained, Groups: t.State.GroupNames()}
		for _, g := range step.Groups {
			if gr, ok := t.State.Group(g); ok {
				step.Members += len(gr.Members)
			}
		}
		plan.Steps = append(plan.Steps, step)
	}
	return plan, nil
}

// CheckUndo refuses an undo of a node that is unknown or not drained.
func CheckUndo(m *Model, nodes []int32, now time.Time) error {
	if err := checkKnown(m, nodes, now); err != nil {
		return err
	}
	for _, n := range nodes {
		if !m.View.DrainStands(n) {
			return refuse("node %d is not drained: there is nothing to undo", n)
		}
	}
	return nil
}

func checkKnown(m *Model, nodes []int32, now time.Time) error {
	var known []int32
	for _, nd := range m.View.Nodes(now) {
		known = append(known, nd.ID)
	}
	for _, n := range nodes {
		if !slices.Contains(known, n) {
			if len(known) == 0 {
				return refuse("node %d is not a gateway of this fleet: no gateway has announced itself or claimed a partition", n)
			}
			return refuse("node %d is not a gateway of this fleet (known: %s)", n, joinNodes(known))
		}
	}
	return nil
}

func since(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " (since " + t.UTC().Format(time.RFC3339) + ")"
}

func nodeList(nodes []int32) string {
	if len(nodes) == 1 {
		return "node " + strconv.Itoa(int(nodes[0]))
	}
	return "nodes " + joinNodes(nodes)
}

func joinNodes(nodes []int32) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ", ")
}

func servingNow(serving []int32) string {
	switch len(serving) {
	case 0:
		return "no gateway serves now"
	case 1:
		return "1 gateway serves now: node " + strconv.Itoa(int(serving[0]))
	}
	return strconv.Itoa(len(serving)) + " gateways serve now: nodes " + joinNodes(serving)
}

// Drain phases of one partition, in order.
const (
	PhaseReleased = "released" // the node that held it no longer announces it
	PhaseClaimed  = "claimed"  // another node's claim is the newest in the log
	PhaseServed   = "served"   // that node announces it under that claim
)

// DrainEvent is one step of a drain's progress. JSON field names are an interface.
type DrainEvent struct {
	Time      time.Time `json:"time"`
	Partition int       `json:"partition"`
	Phase     string    `json:"phase"`
	Node      int32     `json:"node"`
	Claim     uint64    `json:"claim,omitempty"`
}

func (DrainEvent) Columns() []string { return []string{"TIME", "PARTITION", "PHASE", "NODE", "CLAIM"} }

func (e DrainEvent) Cells() []string {
	claim := ""
	if e.Claim != 0 {
		claim = strconv.FormatUint(e.Claim, 10)
	}
	return []string{e.Time.UTC().Format("15:04:05.000"), strconv.Itoa(e.Partition), e.Phase, strconv.Itoa(int(e.Node)), claim}
}

// Sentence is the event as operators read it: "partition 3: claimed by node 1 (claim 7)".
func (e DrainEvent) Sentence() string {
	s := "partition " + strconv.Itoa(e.Partition) + ": " + e.Phase + " by node " + strconv.Itoa(int(e.Node))
	if e.Claim != 0 {
		s += " (claim " + strconv.FormatUint(e.Claim, 10) + ")"
	}
	return s
}

// DrainProgress follows a plan through the model: each partition goes released, claimed,
// served; the drain is done only when every partition of the plan is served elsewhere.
type DrainProgress struct {
	plan  DrainPlan
	phase map[int]int // partition -> phases reached (0..3)
}

// NewDrainProgress starts following plan.
func NewDrainProgress(plan DrainPlan) *DrainProgress {
	return &DrainProgress{plan: plan, phase: map[int]int{}}
}

// Observe compares the model with the plan and returns the phases newly reached, in order.
func (d *DrainProgress) Observe(m *Model, now time.Time) []DrainEvent {
	var out []DrainEvent
	for _, s := range d.plan.Steps {
		p := s.Partition
		cl := m.Parts[p].State.Claim()
		claimedElsewhere := cl.Number > s.Claim && cl.Node != s.From
		a, announced := m.View.Announcement(s.From)
		_, stillListed := a.Claims[p]
		released := claimedElsewhere || !announced || a.Leaving || !stillListed
		served := false
		if claimedElsewhere {
			if na, ok := m.View.Announcement(cl.Node); ok {
				served = na.Claims[p] == cl.Number
			}
		}
		reached := 0
		switch {
		case served:
			reached = 3
		case claimedElsewhere:
			reached = 2
		case released:
			reached = 1
		}
		for ph := d.phase[p] + 1; ph <= reached; ph++ {
			e := DrainEvent{Time: now, Partition: p}
			switch ph {
			case 1:
				e.Phase, e.Node = PhaseReleased, s.From
			case 2:
				e.Phase, e.Node, e.Claim = PhaseClaimed, cl.Node, cl.Number
			case 3:
				e.Phase, e.Node, e.Claim = PhaseServed, cl.Node, cl.Number
			}
			out = append(out, e)
		}
		d.phase[p] = max(d.phase[p], reached)
	}
	slices.SortStableFunc(out, func(a, b DrainEvent) int { return a.Partition - b.Partition })
	return out
}

// Done reports whether every partition of the plan is served by another node.
func (d *DrainProgress) Done() bool {
	for _, s := range d.plan.Steps {
		if d.phase[s.Partition] < 3 {
			return false
		}
	}
	return true
}

// Move is a partition that changed owner since a plan was made. JSON field names are an
// interface.
type Move struct {
	Partition int   `json:"partition"`
	From      int32 `json:"from_node"`
	To        int32 `json:"to_node"`
	// Planned says the plan listed this move with this destination.
	Planned bool `json:"planned"`
}

// Sentence is the move as operators read it.
func (m Move) Sentence() string {
	s := fmt.Sprintf("partition %d moved from node %d to node %d", m.Partition, m.From, m.To)
	if !m.Planned {
		s += ", which the plan did not list"
	}
	return s
}

// Moves lists every partition whose owner in m differs from when the plan was made, and the
// planned moves that did not happen (To -1); Planned is false for any move the plan did not
// list with that destination.
func (p DrainPlan) Moves(m *Model) []Move {
	var out []Move
	for part, t := range m.Parts {
		cl := t.State.Claim()
		now := int32(-1)
		if cl.Number != 0 {
			now = cl.Node
		}
		var step *DrainStep
		for i := range p.Steps {
			if p.Steps[i].Partition == part {
				step = &p.Steps[i]
			}
		}
		switch {
		case step != nil && step.To == nil:
			// No destination was known (the lease group's members were not): any node that
			// was not drained is the plan.
			out = append(out, Move{Partition: part, From: p.owners[part], To: now, Planned: now >= 0 && !slices.Contains(p.Nodes, now)})
		case step != nil && *step.To != now:
			out = append(out, Move{Partition: part, From: p.owners[part], To: now})
		case step != nil:
			out = append(out, Move{Partition: part, From: p.owners[part], To: now, Planned: true})
		case now != p.owners[part]:
			out = append(out, Move{Partition: part, From: p.owners[part], To: now})
		}
	}
	return out
}
