package drainplan

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
)

// Drainer is what `drain node N` needs to change the fleet.
type Drainer interface {
	// RequestDrain asks node to release its coordinator partitions and to leave Metadata
	// leadership while it keeps serving produce and fetch for the clients connected to it;
	// undo brings it back.
	// It returns the request's offset in fleet.DrainsTopic: log order, not the requests'
	// times, says which of two requests is the later one (drainwatch).
	RequestDrain(ctx context.Context, node int32, undo bool) (uint64, error)
}

// Writer is what a Drainer needs to write requests; *iggy.Client has it.
type Writer interface {
	SendMessages(ctx context.Context, stream, topic wire.Identifier, partition uint32, msgs []iggy.Message) (uint64, error)
}

// IggyDrainer is the Drainer over the coordinator log's stream: requests appended to
// fleet.DrainsTopic in fleet's encoding. The topic is durable (a restarted node reads its latest
// request again) and authorized by Iggy: only a user allowed to send to the meta stream can
// write it. The gateways create it (coordinator.EnsureShape) with the rest of the log; a drain
// only ever names a node that announced itself, so the topic exists by then.
type IggyDrainer struct {
	Log    *logread.Log
	Writer Writer
}

func (d IggyDrainer) RequestDrain(ctx context.Context, node int32, undo bool) (uint64, error) {
	b := fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node, Undo: undo, Time: d.Log.Clock().Now().UTC()})
	off, err := d.Writer.SendMessages(ctx, d.Log.MetaStream(), wire.NamedID(fleet.DrainsTopic), 0, []iggy.Message{{Payload: b}})
	if err != nil {
		return 0, fmt.Errorf("drain request for node %d: %w", node, err)
	}
	return off, nil
}

// Refused is a drain or an undo that the safety rules refuse; Reason is one sentence that says
// why. A drain refused because a node is already drained names it in Drained, so that the
// renderer can say how to undo that drain in its own terms (a command line, a key).
type Refused struct {
	Reason  string
	Drained []int32
}

func (e *Refused) Error() string { return e.Reason }

// Refuse is a Refused with a formatted reason.
func Refuse(format string, args ...any) error {
	return &Refused{Reason: fmt.Sprintf(format, args...)}
}

// Plan plans draining nodes together. It refuses, whatever the caller's flags, a drain
// that would leave no serving gateway, and a drain of a node that is unknown, gone or already
// drained. Moves come from fleet.Lease over the lease group's live members without the drained
// nodes' members, so collateral moves (a few, as the bounded lease evens the shares, or a
// handover under way) are listed too.
func Plan(m *claims.Model, nodes []int32, now time.Time) (drainwatch.Plan, error) {
	v := m.View
	if err := checkKnown(m, nodes, now); err != nil {
		return drainwatch.Plan{}, err
	}
	for _, n := range nodes {
		if r, ok := v.DrainRequest(n); ok && !r.Undo {
			return drainwatch.Plan{}, &Refused{Reason: fmt.Sprintf("node %d is already drained%s", n, since(r.Time)), Drained: []int32{n}}
		}
		if v.State(n, now) == fleet.Gone {
			return drainwatch.Plan{}, Refuse("node %d is gone (no announcement within %v, or it left the lease group): its partitions move when its lease ends; there is nothing to drain", n, v.Live)
		}
	}
	serving := v.Serving(now)
	after := slices.DeleteFunc(slices.Clone(serving), func(n int32) bool { return slices.Contains(nodes, n) })
	if len(after) == 0 {
		return drainwatch.Plan{}, Refuse("refusing to drain %s: no gateway would be left serving the coordinator log (%s)", drainwatch.Who(nodes), servingNow(serving))
	}
	plan := drainwatch.Plan{Nodes: slices.Clone(nodes), ServingAfter: after, Steps: []drainwatch.Step{}}
	slices.Sort(plan.Nodes)
	drainedMembers := map[uint32]bool{}
	for _, n := range nodes {
		if a, ok := v.Announcement(n); ok && a.HasMember {
			drainedMembers[a.Member] = true
		}
	}
	membersAfter := slices.DeleteFunc(v.LiveMembers(m.Members, now), func(id uint32) bool { return drainedMembers[id] })
	for p, t := range m.Parts {
		plan.Owners[p] = -1
		cl := t.State.Claim()
		if cl.Number == 0 {
			continue
		}
		plan.Owners[p] = cl.Node
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
		step := drainwatch.Step{Partition: p, From: cl.Node, To: to, Claim: cl.Number, Collateral: !drained, Groups: t.State.GroupNames()}
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
func CheckUndo(m *claims.Model, nodes []int32, now time.Time) error {
	if err := checkKnown(m, nodes, now); err != nil {
		return err
	}
	for _, n := range nodes {
		if !m.View.DrainStands(n) {
			return Refuse("node %d is not drained: there is nothing to undo", n)
		}
	}
	return nil
}

func checkKnown(m *claims.Model, nodes []int32, now time.Time) error {
	var known []int32
	for _, nd := range m.View.Nodes(now) {
		known = append(known, nd.ID)
	}
	for _, n := range nodes {
		if !slices.Contains(known, n) {
			if len(known) == 0 {
				return Refuse("node %d is not a gateway of this fleet: no gateway has announced itself or claimed a partition", n)
			}
			return Refuse("node %d is not a gateway of this fleet (known: %s)", n, drainwatch.JoinNodes(known))
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

func servingNow(serving []int32) string {
	switch len(serving) {
	case 0:
		return "no gateway serves now"
	case 1:
		return "1 gateway serves now: node " + strconv.Itoa(int(serving[0]))
	}
	return strconv.Itoa(len(serving)) + " gateways serve now: nodes " + drainwatch.JoinNodes(serving)
}
