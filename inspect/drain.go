package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// DrainTopic holds operator drain requests in `<stream>.meta`, one JSON object per message. It
// is durable (a restarted node reads its latest request again) and authorized by Iggy: only a
// user allowed to send to the meta stream can write it.
const DrainTopic = "coordinator_drains"

// Drainer is what `drain node N` needs from the fleet.
type Drainer interface {
	// Alive reports whether node is live: it announced itself within LiveWindow and is not
	// leaving. A drain of a dead node fails fast instead of waiting for a handover that the
	// lease already does.
	Alive(ctx context.Context, node int32) (bool, error)
	// RequestDrain asks node to release its coordinator partitions and to leave Metadata
	// leadership while it keeps serving produce and fetch for the clients connected to it;
	// undo brings it back.
	RequestDrain(ctx context.Context, node int32, undo bool) error
}

// DrainRequest is one message of DrainTopic. JSON field names are an interface: the
// coordinator reads them.
type DrainRequest struct {
	Node int32     `json:"node"`
	Undo bool      `json:"undo"`
	Time time.Time `json:"time"`
}

// Writer is what a Drainer needs to write requests; *iggy.Client has it.
type Writer interface {
	CreateTopic(ctx context.Context, stream wire.Identifier, name string, partitions uint32, opts iggy.TopicOptions) (*wire.TopicDetails, error)
	SendMessages(ctx context.Context, stream, topic wire.Identifier, partition uint32, msgs []iggy.Message) (uint64, error)
}

// IggyDrainer is the Drainer over the coordinator log's stream: liveness from the owners'
// announcements, requests appended to DrainTopic.
type IggyDrainer struct {
	Log    *Log
	Writer Writer
}

func (d IggyDrainer) Alive(ctx context.Context, node int32) (bool, error) {
	ann, err := d.Log.Announcements(ctx)
	if err != nil {
		return false, err
	}
	a, ok := ann[node]
	return ok && !a.Leaving && d.Log.clock.Now().Sub(a.Time) <= LiveWindow, nil
}

func (d IggyDrainer) RequestDrain(ctx context.Context, node int32, undo bool) error {
	b, err := json.Marshal(DrainRequest{Node: node, Undo: undo, Time: d.Log.clock.Now().UTC()})
	if err != nil {
		return err
	}
	_, err = d.Writer.CreateTopic(ctx, d.Log.stream, DrainTopic, 1, iggy.TopicOptions{})
	if err != nil && !errors.Is(err, wire.TopicNameAlreadyExists) {
		return fmt.Errorf("drain topic %s: %w", DrainTopic, err)
	}
	if _, err := d.Writer.SendMessages(ctx, d.Log.stream, wire.NamedID(DrainTopic), 0, []iggy.Message{{Payload: b}}); err != nil {
		return fmt.Errorf("drain request for node %d: %w", node, err)
	}
	return nil
}

// DrainRequests reads DrainTopic and returns each node's latest request; a missing topic means
// none.
func (l *Log) DrainRequests(ctx context.Context) (map[int32]DrainRequest, error) {
	out := map[int32]DrainRequest{}
	td, err := l.c.GetTopic(ctx, l.stream, wire.NamedID(DrainTopic))
	if errors.Is(err, wire.TopicNameNotFound) || errors.Is(err, wire.TopicIDNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("drain topic %s: %w", DrainTopic, err)
	}
	for _, p := range td.Partitions {
		if p.MessagesCount == 0 {
			continue
		}
		err := l.readTopic(ctx, DrainTopic, int(p.ID), 0, p.CurrentOffset+1, false, func(e *Entry) error {
			var r DrainRequest
			if json.Unmarshal(e.Payload, &r) == nil && !r.Time.Before(out[r.Node].Time) {
				out[r.Node] = r
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Draining reports whether node's latest drain request stands.
func (f *Fleet) Draining(node int32) bool {
	r, ok := f.Drains[node]
	return ok && !r.Undo
}

// DrainStep is one partition of a drain plan. JSON field names are an interface.
type DrainStep struct {
	Partition int      `json:"partition"`
	From      int32    `json:"from_node"`
	Claim     uint64   `json:"claim"`
	Groups    []string `json:"groups"`
	Members   int      `json:"members"`
}

func (DrainStep) Columns() []string {
	return []string{"PARTITION", "FROM-NODE", "CLAIM", "GROUPS", "MEMBERS"}
}

func (s DrainStep) Cells() []string {
	return []string{strconv.Itoa(s.Partition), strconv.Itoa(int(s.From)), strconv.FormatUint(s.Claim, 10), strconv.Itoa(len(s.Groups)), strconv.Itoa(s.Members)}
}

// PlanDrain lists the partitions node owns in the fleet, with their groups and members. It
// refuses to drain the last live gateway unless force.
func PlanDrain(f *Fleet, node int32, force bool) ([]DrainStep, error) {
	others := map[int32]bool{}
	plan := []DrainStep{}
	for _, t := range f.Parts {
		cl := t.State.Claim()
		if cl.Number == 0 {
			continue
		}
		if cl.Node != node {
			others[cl.Node] = true
			continue
		}
		step := DrainStep{Partition: t.Partition, From: node, Claim: cl.Number, Groups: t.State.GroupNames()}
		for _, g := range step.Groups {
			if gr, ok := t.State.Group(g); ok {
				step.Members += len(gr.Members)
			}
		}
		plan = append(plan, step)
	}
	for n, a := range f.Announcements {
		if n != node && !a.Leaving {
			others[n] = true
		}
	}
	if len(plan) > 0 && len(others) == 0 && !force {
		return nil, fmt.Errorf("node %d is the last live gateway: draining it leaves no coordinator (use --force)", node)
	}
	return plan, nil
}

// Drain phases of one partition, in order.
const (
	PhaseReleased = "released" // the drained node no longer announces it
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

// DrainProgress follows a plan through the fleet's state: each partition goes released, claimed,
// served; the drain is done only when every partition is served elsewhere.
type DrainProgress struct {
	Node  int32
	plan  []DrainStep
	phase map[int]int // partition -> phases reached (0..3)
}

// NewDrainProgress starts following plan.
func NewDrainProgress(node int32, plan []DrainStep) *DrainProgress {
	return &DrainProgress{Node: node, plan: plan, phase: map[int]int{}}
}

// Observe compares the fleet with the plan and returns the phases newly reached, in order.
func (d *DrainProgress) Observe(f *Fleet, now time.Time) []DrainEvent {
	var out []DrainEvent
	for _, s := range d.plan {
		p := s.Partition
		cl := f.Parts[p].State.Claim()
		claimedElsewhere := cl.Number > s.Claim && cl.Node != d.Node
		a, announced := f.Announcements[d.Node]
		_, stillListed := a.Claims[p]
		released := claimedElsewhere || !announced || a.Leaving || !stillListed
		served := false
		if claimedElsewhere {
			if na, ok := f.Announcements[cl.Node]; ok {
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
				e.Phase, e.Node = PhaseReleased, d.Node
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
	for _, s := range d.plan {
		if d.phase[s.Partition] < 3 {
			return false
		}
	}
	return true
}
