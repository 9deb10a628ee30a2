package drainwatch

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// Step is one partition a drain moves. JSON field names are an interface.
type Step struct {
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

func (Step) Columns() []string {
	return []string{"PARTITION", "FROM-NODE", "TO-NODE", "CLAIM", "GROUPS", "MEMBERS", "COLLATERAL"}
}

func (s Step) Cells() []string {
	to, coll := "-", "-"
	if s.To != nil {
		to = strconv.Itoa(int(*s.To))
	}
	if s.Collateral {
		coll = "yes"
	}
	return []string{strconv.Itoa(s.Partition), strconv.Itoa(int(s.From)), to, strconv.FormatUint(s.Claim, 10), strconv.Itoa(len(s.Groups)), strconv.Itoa(s.Members), coll}
}

// Plan is what draining Nodes together does: every partition that moves, with its source and
// destination, and the gateways left serving.
type Plan struct {
	Nodes        []int32 `json:"nodes"`
	Steps        []Step  `json:"moves"`
	ServingAfter []int32 `json:"serving_after"`
	// Owners is each partition's claim node when the plan was made (-1 none), for Moves.
	Owners [fleet.Partitions]int32 `json:"-"`
}

// Summary is the plan in one sentence, as `drain` prints it before asking.
func (p Plan) Summary() string {
	groups, members, collateral := 0, 0, 0
	for _, s := range p.Steps {
		groups += len(s.Groups)
		members += s.Members
		if s.Collateral {
			collateral++
		}
	}
	return fmt.Sprintf("drain %s: %d partition(s) move (%d collateral), %d group(s), %d member(s), without a rebalance; %d gateway(s) keep serving",
		Who(p.Nodes), len(p.Steps), collateral, groups, members, len(p.ServingAfter))
}

// Who names nodes as a sentence does: "node 2", "nodes 2, 3".
func Who(nodes []int32) string {
	if len(nodes) == 1 {
		return "node " + strconv.Itoa(int(nodes[0]))
	}
	return "nodes " + JoinNodes(nodes)
}

// JoinNodes lists node ids: "2, 3".
func JoinNodes(nodes []int32) string {
	s := make([]string, len(nodes))
	for i, n := range nodes {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ", ")
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

// Moves lists every partition whose owner in f differs from when the plan was made, and the
// planned moves that did not happen (To -1); Planned is false for any move the plan did not
// list with that destination.
func (p Plan) Moves(f Snapshot) []Move {
	var out []Move
	for part := range fleet.Partitions {
		cl := f.Claim(part)
		now := int32(-1)
		if cl.Number != 0 {
			now = cl.Node
		}
		var step *Step
		for i := range p.Steps {
			if p.Steps[i].Partition == part {
				step = &p.Steps[i]
			}
		}
		switch {
		case step != nil && step.To == nil:
			// No destination was known (the lease group's members were not): any node that
			// was not drained is the plan.
			out = append(out, Move{Partition: part, From: p.Owners[part], To: now, Planned: now >= 0 && !slices.Contains(p.Nodes, now)})
		case step != nil && *step.To != now:
			out = append(out, Move{Partition: part, From: p.Owners[part], To: now})
		case step != nil:
			out = append(out, Move{Partition: part, From: p.Owners[part], To: now, Planned: true})
		case now != p.Owners[part]:
			out = append(out, Move{Partition: part, From: p.Owners[part], To: now})
		}
	}
	return out
}

// Snapshot is the fleet as a reader folded it at one instant: the announcements and drain requests
// (View) and the newest valid claim of each log partition (Claim, record.State's).
type Snapshot struct {
	View  *fleet.View
	Claim func(partition int) record.Claim
}
