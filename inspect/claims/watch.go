package claims

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// Update is what a claims watcher learns in one round: the 16 rows as they stand, the
// handovers whose claim records just arrived, and the changes between the rows before and now.
type Update struct {
	Rows      []PartitionRow
	Handovers []Handover
	Changes   []Change
}

// Fields of a Change, in the order Diff compares them: an interface (the NDJSON lines of
// `claims --watch`), add, never rename.
const (
	FieldOwner      = "owner"
	FieldClaim      = "claim"
	FieldGroups     = "groups"
	FieldLogEnd     = "log_end"
	FieldCheckpoint = "checkpoint"
	FieldAssigned   = "assigned"
	FieldFlags      = "flags"
)

// Change is one difference between two claim rows of a partition: one line of `claims --watch`
// without a terminal. JSON field names are an interface.
type Change struct {
	Time      time.Time `json:"time"`
	Partition int       `json:"partition"`
	// Field is one of the Field constants: owner, claim, groups, log_end, checkpoint, assigned,
	// flags.
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

func (Change) Columns() []string { return []string{"TIME", "PARTITION", "FIELD", "OLD", "NEW"} }

func (c Change) Cells() []string {
	return []string{c.Time.UTC().Format("15:04:05.000"), strconv.Itoa(c.Partition), c.Field, c.Old, c.New}
}

// Diff lists what changed between two row sets, partition by partition, comparing the rows'
// typed fields (an age that grows with the clock is no change). Old and New are the values as
// text, "" where none applies.
func Diff(before, after []PartitionRow, now time.Time) []Change {
	old := make(map[int]PartitionRow, len(before))
	for _, r := range before {
		old[r.Partition] = r
	}
	var out []Change
	for _, a := range after {
		b, ok := old[a.Partition]
		if !ok {
			continue
		}
		add := func(field, o, n string) {
			out = append(out, Change{Time: now, Partition: a.Partition, Field: field, Old: o, New: n})
		}
		if !samePtr(b.OwnerNode, a.OwnerNode) {
			add(FieldOwner, output.IntText(b.OwnerNode), output.IntText(a.OwnerNode))
		}
		if claimOf(b) != claimOf(a) {
			add(FieldClaim, claimText(b), claimText(a))
		}
		if b.Groups != a.Groups {
			add(FieldGroups, strconv.Itoa(b.Groups), strconv.Itoa(a.Groups))
		}
		if b.LogEndOffset != a.LogEndOffset {
			add(FieldLogEnd, strconv.FormatUint(b.LogEndOffset, 10), strconv.FormatUint(a.LogEndOffset, 10))
		}
		if !samePtr(b.CheckpointOffset, a.CheckpointOffset) {
			add(FieldCheckpoint, output.IntText(b.CheckpointOffset), output.IntText(a.CheckpointOffset))
		}
		if !samePtr(b.AssignedNode, a.AssignedNode) || !samePtr(b.AssignedClient, a.AssignedClient) {
			add(FieldAssigned, AssignedText(b), AssignedText(a))
		}
		if !slices.Equal(b.Flags, a.Flags) {
			add(FieldFlags, strings.Join(b.Flags, ","), strings.Join(a.Flags, ","))
		}
	}
	return out
}

func claimOf(r PartitionRow) uint64 {
	if r.OwnerNode == nil {
		return 0
	}
	return r.Claim
}

func claimText(r PartitionRow) string {
	if r.OwnerNode == nil {
		return ""
	}
	return strconv.FormatUint(r.Claim, 10)
}

// AssignedText is the ASSIGNED value of a row: the node whose lease holds the partition, else
// the lease member that no node announces ("member 7"), else "".
func AssignedText(r PartitionRow) string {
	switch {
	case r.AssignedNode != nil:
		return strconv.Itoa(int(*r.AssignedNode))
	case r.AssignedClient != nil:
		return "member " + strconv.FormatUint(uint64(*r.AssignedClient), 10)
	}
	return ""
}

func samePtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Node fields of a NodeChange: an interface, add, never rename.
const (
	NodeFieldState      = "state"
	NodeFieldAddr       = "addr"
	NodeFieldPartitions = "partitions"
	NodeFieldGroups     = "groups"
	NodeFieldDrain      = "drain"
	NodeFieldVersion    = "version"
	NodeFieldController = "controller"
)

// NodeChange is one difference between two rows of a node. JSON field names are an interface.
type NodeChange struct {
	Time  time.Time `json:"time"`
	Node  int32     `json:"node"`
	Field string    `json:"field"`
	Old   string    `json:"old"`
	New   string    `json:"new"`
}

// DiffNodes lists what changed between two node tables, comparing typed fields; a node that
// appears has no change (it is new), one that disappears is not listed.
func DiffNodes(before, after []NodeRow, now time.Time) []NodeChange {
	old := make(map[int32]NodeRow, len(before))
	for _, r := range before {
		old[r.Node] = r
	}
	var out []NodeChange
	for _, a := range after {
		b, ok := old[a.Node]
		if !ok {
			continue
		}
		add := func(field, o, n string) {
			out = append(out, NodeChange{Time: now, Node: a.Node, Field: field, Old: o, New: n})
		}
		if b.State != a.State {
			add(NodeFieldState, b.State, a.State)
		}
		if b.Addr != a.Addr {
			add(NodeFieldAddr, b.Addr, a.Addr)
		}
		if !slices.Equal(b.Partitions, a.Partitions) {
			add(NodeFieldPartitions, intsText(b.Partitions), intsText(a.Partitions))
		}
		if b.Groups != a.Groups {
			add(NodeFieldGroups, strconv.Itoa(b.Groups), strconv.Itoa(a.Groups))
		}
		if b.DrainRequested != a.DrainRequested {
			add(NodeFieldDrain, strconv.FormatBool(b.DrainRequested), strconv.FormatBool(a.DrainRequested))
		}
		if b.Version != a.Version {
			add(NodeFieldVersion, b.Version, a.Version)
		}
		if b.Controller != a.Controller {
			add(NodeFieldController, strconv.FormatBool(b.Controller), strconv.FormatBool(a.Controller))
		}
	}
	return out
}

func intsText(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// ChangedPartitions lists the partitions a set of changes touches, sorted.
func ChangedPartitions(cs []Change) []int {
	var out []int
	for _, c := range cs {
		if !slices.Contains(out, c.Partition) {
			out = append(out, c.Partition)
		}
	}
	slices.Sort(out)
	return out
}

// RefreshEvery is how often a watcher re-reads what does not come through the log (Iggy's
// assignment and the announcements).
var RefreshEvery = time.Second

// FollowModel keeps f current: it follows the log from where f was loaded, re-reads the
// assignment, announcements and drain requests every RefreshEvery, and calls round with the
// handovers read since the last call after each round that applied a record or refreshed. It
// returns when ctx ends or round fails (ErrStop ends it without an error).
func FollowModel(ctx context.Context, l *logread.Log, f *Model, round func(handovers []Handover) error) error {
	return FollowPolls(ctx, l, f, nil, func(handovers []Handover, _ bool) error { return round(handovers) })
}

// FollowPolls is FollowModel with a hook called after every poll that answered (caught, before
// round) and the round told whether it refreshed. A round that brings handovers without a
// refresh is followed by one that refreshes, one poll later.
func FollowPolls(ctx context.Context, l *logread.Log, f *Model, caught func() error, round func(handovers []Handover, refreshed bool) error) error {
	var handovers []Handover
	dirty, explain := false, false
	lastRefresh := l.Clock().Now()
	return l.Follow(ctx, logread.AllPartitions(), f.Ends, func(e *logread.Entry) error {
		if h, ok := f.Parts[e.Partition].Apply(e); ok {
			dirty = true
			if h != nil {
				handovers = append(handovers, *h)
			}
		}
		f.Ends[e.Partition] = max(f.Ends[e.Partition], e.Offset+1)
		return nil
	}, func() error {
		if caught != nil {
			if err := caught(); err != nil {
				return err
			}
		}
		refreshed := false
		if now := l.Clock().Now(); now.Sub(lastRefresh) >= RefreshEvery || explain {
			lastRefresh = now
			if err := f.Refresh(ctx, l); err != nil {
				return err
			}
			dirty, refreshed, explain = true, true, false
		}
		if !dirty {
			return nil
		}
		h := handovers
		handovers, dirty = nil, false
		// A handover is shown at once; the announcements that explain it (who left, who
		// drained) are read in the next round rather than at the next periodic refresh.
		explain = explain || len(h) > 0 && !refreshed
		return round(h, refreshed)
	})
}

// Watch follows the fleet and calls emit after each round that changed a row or brought a
// handover: as soon as the records that change a row are read, not on a redraw timer.
func Watch(ctx context.Context, l *logread.Log, f *Model, emit func(Update) error) error {
	prev := f.Rows(l.Clock().Now())
	return FollowModel(ctx, l, f, func(handovers []Handover) error {
		rows := f.Rows(l.Clock().Now())
		changes := Diff(prev, rows, l.Clock().Now())
		prev = rows
		if len(changes) == 0 && len(handovers) == 0 {
			return nil
		}
		return emit(Update{Rows: rows, Handovers: handovers, Changes: changes})
	})
}

// Reasons of a handover: an interface (JSON, the console), add, never rename.
const (
	ReasonFirst = "first" // the partition's first claim
	ReasonDrain = "drain" // an operator drained the previous owner
	ReasonStop  = "stop"  // the previous owner stopped (SIGTERM): it announced that it leaves
	ReasonCrash = "crash" // the previous owner went silent or lost its lease membership
	ReasonLease = "lease" // the previous owner is serving: the lease moved (a gateway joined)
)

// HandoverRow is a handover as the console lists it: why it happened and how long the
// partition went unserved. JSON field names are an interface.
type HandoverRow struct {
	Handover
	Reason string `json:"reason"`
	// UnservedSeconds is the time from the moment the previous owner stopped serving the
	// partition (its announcement of the release; for a crash, its last announcement as owner)
	// to the new claim, after which the new owner serves within a lease read. nil when the
	// previous owner's stop is not in the announcements read.
	UnservedSeconds *float64 `json:"unserved_seconds"`
}

// stamp is one announcement's word on a partition: under which claim, at what time.
type stamp struct {
	claim uint64
	at    time.Time
}

type nodePart struct {
	p    int
	node int32
}

// Trail follows coordinator_owners message by message, remembering per (partition, node) the
// newest announcement that listed the partition and the first that released it under its
// claim: the fold of View keeps only each node's newest announcement, which is not enough to
// say when a partition stopped being served.
type Trail struct {
	feed     *logio.Feed // nil until the first update
	listed   map[nodePart]stamp
	released map[nodePart]stamp
}

func NewTrail() *Trail {
	return &Trail{listed: map[nodePart]stamp{}, released: map[nodePart]stamp{}}
}

// update reads the announcements appended since the last update (logio.OwnersFeed: the newest
// ones the first time, and again when the topic was recreated).
func (t *Trail) Update(ctx context.Context, l *logread.Log) error {
	if t.feed != nil {
		td, err := l.Client().GetTopic(ctx, l.MetaStream(), wire.NamedID(fleet.OwnersTopic))
		if err != nil && !errors.Is(err, wire.TopicNameNotFound) && !errors.Is(err, wire.TopicIDNotFound) {
			return err
		}
		end := uint64(0)
		if err == nil && len(td.Partitions) > 0 && td.Partitions[0].MessagesCount > 0 {
			end = td.Partitions[0].CurrentOffset + 1
		}
		if t.feed.Next() > end {
			t.feed = nil // the topic was recreated
		}
	}
	if t.feed == nil {
		t.feed = logio.OwnersFeed(l.Stream())
	}
	return t.feed.Read(ctx, l.Client(), func(_ uint64, b []byte) {
		if a, err := fleet.DecodeAnnouncement(b); err == nil {
			t.apply(a)
		}
	})
}

func (t *Trail) apply(a fleet.Announcement) {
	for p, cl := range a.Claims {
		t.listed[nodePart{p, a.Node}] = stamp{cl, a.Time}
	}
	for p, cl := range a.Released {
		k := nodePart{p, a.Node}
		if s, ok := t.released[k]; !ok || s.claim != cl {
			t.released[k] = stamp{cl, a.Time}
		}
	}
}

// stoppedAt is when node stopped serving p under claim: its release, else its last word as
// owner.
func (t *Trail) stoppedAt(p int, node int32, claim uint64) (time.Time, bool) {
	if s, ok := t.released[nodePart{p, node}]; ok && s.claim >= claim {
		return s.at, true
	}
	if s, ok := t.listed[nodePart{p, node}]; ok && s.claim == claim {
		return s.at, true
	}
	return time.Time{}, false
}

// ClassifyHandover says why a partition changed owner, from the fleet as the view has it now
// (read right after the claim): the previous owner drained, stopped, crashed, or is still
// serving and the lease moved.
func ClassifyHandover(v *fleet.View, h Handover, now time.Time) string {
	if h.From == nil {
		return ReasonFirst
	}
	from := *h.From
	a, ok := v.Announcement(from)
	switch {
	case v.DrainStands(from) || ok && a.Draining:
		return ReasonDrain
	case ok && a.Leaving:
		return ReasonStop
	case !v.Alive(from, now):
		return ReasonCrash
	}
	return ReasonLease
}

// NewHandoverRow explains h with the view and the trail.
func NewHandoverRow(v *fleet.View, t *Trail, h Handover, prevClaim uint64, now time.Time) HandoverRow {
	r := HandoverRow{Handover: h, Reason: ClassifyHandover(v, h, now)}
	if h.From != nil {
		if at, ok := t.stoppedAt(h.Partition, *h.From, prevClaim); ok {
			s := max(0, h.At.Sub(at).Seconds())
			r.UnservedSeconds = &s
		}
	}
	return r
}

// HandoversBetween lists the handovers a reload found: the claims of after newer than the
// newest claim before knew, per partition, oldest first.
func HandoversBetween(before, after *Model) []Handover {
	var out []Handover
	for p, t := range after.Parts {
		known := uint64(0)
		if p < len(before.Parts) {
			if n := len(before.Parts[p].Tenures); n > 0 {
				known = before.Parts[p].Tenures[n-1].Claim
			}
		}
		for i, te := range t.Tenures {
			if te.Claim <= known {
				continue
			}
			h := Handover{Partition: p, Claim: te.Claim, To: te.Node, Addr: te.Addr, At: te.At}
			if i > 0 {
				prev := t.Tenures[i-1]
				from := prev.Node
				held := te.At.Sub(prev.At).Seconds()
				h.From, h.HeldSeconds = &from, &held
			}
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(a, b Handover) int { return a.At.Compare(b.At) })
	return out
}

// PreviousClaim is the claim before claim in partition p's history, 0 for none.
func PreviousClaim(m *Model, p int, claim uint64) uint64 {
	prev := uint64(0)
	for _, te := range m.Parts[p].Tenures {
		if te.Claim >= claim {
			break
		}
		prev = te.Claim
	}
	return prev
}
