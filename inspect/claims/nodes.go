package claims

import (
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// NodeRow is one gateway of the node table (`claims`, `claims --nodes`, the watch view). JSON
// field names are an interface: add, never rename.
type NodeRow struct {
	Node  int32  `json:"node"`
	State string `json:"state"`
	Addr  string `json:"addr"`
	// Partitions are the log partitions it announces, in order; Groups counts the groups the
	// log holds in the partitions whose newest claim is its.
	Partitions []int `json:"partitions"`
	Groups     int   `json:"groups"`
	// LastAnnounced is its newest announcement's time (its own clock) and AnnouncedAgoSeconds
	// how long before now that was; both nil for a node known only from a claim.
	LastAnnounced       *time.Time `json:"last_announced"`
	AnnouncedAgoSeconds *float64   `json:"announced_ago_seconds"`
	// DrainRequested says an operator's drain stands; DrainedSince is that request's time.
	DrainRequested bool       `json:"drain_requested"`
	DrainedSince   *time.Time `json:"drained_since"`
	// LeaseMember is its Iggy member id in kafka-gateways, nil when it is not a member.
	LeaseMember *uint32 `json:"lease_member"`
	Version     string  `json:"version"`
	// Controller is set on the owner of log partition 0.
	Controller bool `json:"controller"`
}

func (NodeRow) Columns() []string {
	return []string{"NODE", "STATE", "ADDRESS", "PARTITIONS", "GROUPS", "LAST-ANNOUNCED", "DRAINED-SINCE", "VERSION"}
}

func (r NodeRow) Cells() []string {
	node := strconv.Itoa(int(r.Node))
	if r.Controller {
		node += "*"
	}
	ago, since, version := "-", "-", r.Version
	if r.AnnouncedAgoSeconds != nil {
		ago = output.Seconds(*r.AnnouncedAgoSeconds) + " ago"
	}
	if r.DrainedSince != nil {
		since = r.DrainedSince.UTC().Format("2006-01-02T15:04:05Z")
	} else if r.DrainRequested {
		since = "yes"
	}
	if version == "" {
		version = "-"
	}
	return []string{node, r.State, r.Addr, strconv.Itoa(len(r.Partitions)), strconv.Itoa(r.Groups), ago, since, version}
}

// Nodes builds the node table as of now: every gateway the log and Iggy know, by node id.
func (f *Model) Nodes(now time.Time) []NodeRow {
	groups := map[int32]int{}
	for _, t := range f.Parts {
		if cl := t.State.Claim(); cl.Number != 0 {
			groups[cl.Node] += t.State.Counts().Groups
		}
	}
	controller := int32(-1)
	if cl := f.Parts[0].State.Claim(); cl.Number != 0 {
		controller = cl.Node
	}
	nodes := f.View.Nodes(now)
	out := make([]NodeRow, 0, len(nodes))
	for _, n := range nodes {
		row := NodeRow{Node: n.ID, State: string(n.State), Addr: n.Addr, Partitions: n.Partitions, Groups: groups[n.ID],
			DrainRequested: n.DrainRequested, Version: n.Version, Controller: n.ID == controller}
		if row.Partitions == nil {
			row.Partitions = []int{}
		}
		if !n.Announced.IsZero() {
			at := n.Announced
			ago := now.Sub(at).Seconds()
			row.LastAnnounced, row.AnnouncedAgoSeconds = &at, &ago
		}
		if !n.DrainedSince.IsZero() {
			at := n.DrainedSince
			row.DrainedSince = &at
		}
		if n.HasMember {
			m := n.Member
			row.LeaseMember = &m
		}
		out = append(out, row)
	}
	return out
}

// Tables are what `claims` prints: the node table above the partition table. JSON field names
// are an interface.
type Tables struct {
	Nodes      []NodeRow      `json:"nodes"`
	Partitions []PartitionRow `json:"partitions"`
}

// Tables builds the node and partition tables as of now.
func (f *Model) Tables(now time.Time) Tables {
	return Tables{Nodes: f.Nodes(now), Partitions: f.Rows(now)}
}
