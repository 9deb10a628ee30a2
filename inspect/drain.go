package inspect

import (
	"context"
	"fmt"
	"strconv"
)

// Drainer is what the coordinator offers `drain node N`. The request is durable (it survives a
// restart of N) and authorized by the Iggy credentials the operator connects with.
type Drainer interface {
	// Alive reports whether node announced itself recently; drain fails fast otherwise.
	Alive(ctx context.Context, node int32) (bool, error)
	// RequestDrain asks node to release its coordinator partitions and leave Metadata
	// leadership, keeping produce and fetch for its connected clients; undo reverses it.
	RequestDrain(ctx context.Context, node int32, undo bool) error
}

// DrainStep is one partition of a drain plan. JSON field names are an interface.
type DrainStep struct {
	Partition int      `json:"partition"`
	From      int32    `json:"from_node"`
	Groups    []string `json:"groups"`
	Members   int      `json:"members"`
}

func (DrainStep) Columns() []string { return []string{"PARTITION", "FROM-NODE", "GROUPS", "MEMBERS"} }

func (s DrainStep) Cells() []string {
	return []string{strconv.Itoa(s.Partition), strconv.Itoa(int(s.From)), strconv.Itoa(len(s.Groups)), strconv.Itoa(s.Members)}
}

// PlanDrain lists the partitions node owns in the fleet, with their groups and members. It
// refuses to drain the last owner of the log unless force.
func PlanDrain(f *Fleet, node int32, force bool) ([]DrainStep, error) {
	owners := map[int32]bool{}
	var plan []DrainStep
	for _, t := range f.Parts {
		cl := t.State.Claim()
		if cl.Number == 0 {
			continue
		}
		owners[cl.Node] = true
		if cl.Node != node {
			continue
		}
		step := DrainStep{Partition: t.Partition, From: node, Groups: t.State.GroupNames()}
		for _, g := range step.Groups {
			if gr, ok := t.State.Group(g); ok {
				step.Members += len(gr.Members)
			}
		}
		plan = append(plan, step)
	}
	for n := range f.Announcements {
		owners[n] = true
	}
	if len(plan) > 0 && len(owners) < 2 && !force {
		return nil, fmt.Errorf("node %d is the last live gateway: draining it leaves no coordinator (use --force)", node)
	}
	return plan, nil
}

// Drained reports whether every partition of a plan is now claimed by another node.
func Drained(f *Fleet, plan []DrainStep) bool {
	for _, s := range plan {
		if cl := f.Parts[s.Partition].State.Claim(); cl.Number == 0 || cl.Node == s.From {
			return false
		}
	}
	return true
}
