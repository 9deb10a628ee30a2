package claims

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// Tenure is one claim of a partition and how long its owner held it.
type Tenure struct {
	Claim  uint64
	Node   int32
	Addr   string
	Offset uint64
	At     time.Time
	// Until is the time of the next valid claim; zero while this one is the newest.
	Until time.Time
	// Records counts the valid records written under this claim (the claim included).
	Records uint64
}

// Tracker follows one log partition: the fold, its claims, and what changed with each record.
type Tracker struct {
	Partition int
	State     *record.State
	Tenures   []Tenure
	// End is the next offset after the last record seen.
	End        uint64
	LastRecord time.Time
}

// NewTracker starts a partition at its first offset.
func NewTracker(p int) *Tracker { return &Tracker{Partition: p, State: record.NewState()} }

// Handover is a partition changing owner.
type Handover struct {
	Partition int       `json:"partition"`
	Claim     uint64    `json:"claim"`
	From      *int32    `json:"from_node"` // nil for a first claim
	To        int32     `json:"to_node"`
	Addr      string    `json:"to_addr"`
	At        time.Time `json:"at"`
	// HeldSeconds is how long the previous owner held the partition.
	HeldSeconds *float64 `json:"previous_held_seconds"`
	// GapSeconds is the time from the previous owner's last valid record to the new claim: how
	// long at least the partition's writes stood still.
	GapSeconds *float64 `json:"gap_seconds"`
}

// Apply folds one entry and returns the handover it makes, if it is a valid claim.
func (t *Tracker) Apply(e *logread.Entry) (*Handover, bool) {
	t.End = max(t.End, e.Offset+1)
	if e.Err != nil {
		return nil, false
	}
	valid := t.State.Apply(e.Offset, e.Record)
	if !valid {
		return nil, false
	}
	r := &e.Record
	var h *Handover
	if r.Type == record.TypeClaim {
		h = &Handover{Partition: t.Partition, Claim: r.Claim, To: r.ClaimInfo.Node, Addr: r.ClaimInfo.Addr, At: r.Time}
		if n := len(t.Tenures); n > 0 {
			prev := &t.Tenures[n-1]
			prev.Until = r.Time
			from := prev.Node
			held := r.Time.Sub(prev.At).Seconds()
			gap := r.Time.Sub(t.LastRecord).Seconds()
			h.From, h.HeldSeconds, h.GapSeconds = &from, &held, &gap
		}
		t.Tenures = append(t.Tenures, Tenure{Claim: r.Claim, Node: r.ClaimInfo.Node, Addr: r.ClaimInfo.Addr, Offset: e.Offset, At: r.Time})
	}
	if n := len(t.Tenures); n > 0 {
		t.Tenures[n-1].Records++
	}
	t.LastRecord = r.Time
	return h, true
}

// Model is everything `claims` knows: the 16 trackers (the log folded by record.State), the
// lease group's membership, and the fleet as coordinator_owners and coordinator_drains say it
// (fleet.View, the gateways' own fold).
type Model struct {
	Parts []*Tracker
	Ends  []uint64
	// Members are the Iggy member ids of the lease group (fleet.LeaseGroup) as last read.
	Members []uint32
	// View is the fleet as the announcements and drain requests say it.
	View *fleet.View
}

// NewModel returns a model with empty trackers and an empty view.
func NewModel() *Model {
	f := &Model{Ends: make([]uint64, record.Partitions), View: fleet.NewView(fleet.DefaultLive)}
	for p := range record.Partitions {
		f.Parts = append(f.Parts, NewTracker(p))
	}
	return f
}

// LoadModel reads the whole log, the lease group, the announcements and the drain requests.
func LoadModel(ctx context.Context, l *logread.Log) (*Model, error) {
	f := NewModel()
	ends, err := l.Ends(ctx)
	if err != nil {
		return nil, err
	}
	copy(f.Ends, ends)
	for p := range record.Partitions {
		if err := f.Parts[p].load(ctx, l, ends[p]); err != nil {
			return nil, err
		}
	}
	return f, f.Refresh(ctx, l)
}

// load reads a partition up to end. Records before the last valid checkpoint are decoded and
// judged by record.Validity alone (claims kept for the history), and the fold starts at the
// checkpoint, as a gateway's does: memory follows the live state, not the log's length.
func (t *Tracker) load(ctx context.Context, l *logread.Log, end uint64) error {
	var (
		v      record.Validity
		claims []Tenure // valid claims in log order; Records counts the valid records under each
		last   time.Time
		// At the last valid checkpoint: its offset, how many claims came before it, how many
		// records the then newest claim had, and the time of the record before it.
		cp, cpRecords uint64
		cpClaims      int
		cpLast        time.Time
		found         bool
	)
	err := l.Read(ctx, t.Partition, 0, end, func(e *logread.Entry) error {
		if e.Err != nil || !v.Apply(&e.Record) {
			return nil
		}
		r := &e.Record
		switch r.Type {
		case record.TypeClaim:
			claims = append(claims, Tenure{Claim: r.Claim, Node: r.ClaimInfo.Node, Addr: r.ClaimInfo.Addr, Offset: e.Offset, At: r.Time})
		case record.TypeCheckpoint:
			cp, cpClaims, cpLast, found = e.Offset, len(claims), last, true
			cpRecords = 0
			if n := len(claims); n > 0 {
				cpRecords = claims[n-1].Records
			}
		}
		if n := len(claims); n > 0 {
			claims[n-1].Records++
		}
		last = r.Time
		return nil
	})
	if err != nil {
		return err
	}
	from := uint64(0)
	if found {
		// The history before the checkpoint comes from the scan; the fold starts at it.
		t.Tenures = append(t.Tenures[:0], claims[:cpClaims]...)
		for i := range t.Tenures {
			if i+1 < len(claims) {
				t.Tenures[i].Until = claims[i+1].At
			}
		}
		if n := len(t.Tenures); n > 0 {
			t.Tenures[n-1].Records = cpRecords
			t.Tenures[n-1].Until = time.Time{}
		}
		t.LastRecord, from = cpLast, cp
	}
	t.End = max(t.End, from)
	return l.ReadBatches(ctx, t.Partition, from, end, func(batch []logread.Entry) error {
		for i := range batch {
			t.Apply(&batch[i])
			if found && batch[i].Offset == cp && cpClaims > 0 {
				// The checkpoint carries its claim's number only: the scan knows who made it.
				c := claims[cpClaims-1]
				t.State.KnowClaim(record.Claim{Number: c.Claim, Node: c.Node, Addr: c.Addr})
			}
		}
		return nil
	})
}

// Refresh re-reads what does not come through the log: the lease group's membership, the
// announcements and the drain requests, into a new View.
func (f *Model) Refresh(ctx context.Context, l *logread.Log) error {
	v, members, err := l.View(ctx, f.View.Live)
	if err != nil {
		return err
	}
	for _, t := range f.Parts {
		for _, te := range t.Tenures {
			v.KnowClaim(te.Node, te.Addr)
		}
	}
	f.Members, f.View = members, v
	return nil
}

// Flags of a PartitionRow: an interface, add, never rename.
const (
	FlagUnowned           = "unowned"              // no valid claim in the log
	FlagUnassigned        = "unassigned"           // the lease group has no member, so no lease holds it
	FlagAssignmentDiffers = "assignment-differs"   // the lease (fleet.Lease) names another node than the claim's
	FlagNotAnnounced      = "owner-not-announced"  // the claiming node has no announcement
	FlagOwnersDiffer      = "owners-topic-differs" // the announcements name another owner or claim
	FlagAddrDiffers       = "addr-differs"         // the claim's address differs from the announcement's
	FlagStale             = "owner-stale"          // the owner's last announcement is older than the live bound
	FlagLeaving           = "owner-leaving"        // the owner announced that it is leaving
	FlagDraining          = "owner-draining"       // an operator asked the owner to drain
)

// PartitionRow is one partition as `claims` shows it. JSON field names are an interface.
type PartitionRow struct {
	Partition    int        `json:"partition"`
	OwnerNode    *int32     `json:"owner_node"`
	OwnerAddr    string     `json:"owner_addr"`
	Claim        uint64     `json:"claim"`
	ClaimedAt    *time.Time `json:"claimed_at"`
	HeldSeconds  *float64   `json:"held_seconds"`
	Groups       int        `json:"groups"`
	LogEndOffset uint64     `json:"log_end_offset"`
	// Checkpoint fields are nil when the partition has no valid checkpoint yet.
	CheckpointOffset     *uint64  `json:"checkpoint_offset"`
	CheckpointAgeSeconds *float64 `json:"checkpoint_age_seconds"`
	SinceCheckpoint      int      `json:"records_since_checkpoint"`
	// OwnerLagSeconds is how long ago the owner last announced itself; nil when it never did.
	// A gateway that stalls (stopped, partitioned) shows here before Iggy moves its lease.
	OwnerLagSeconds *float64 `json:"owner_lag_seconds"`
	// AnnouncedNode is the node whose newest announcement lists the partition.
	AnnouncedNode *int32 `json:"announced_node"`
	// AssignedClient is the Iggy member id of kafka-gateways whose lease (fleet.Lease) holds the
	// partition, and AssignedNode the node that announces that member id.
	AssignedClient *uint32 `json:"assigned_client"`
	AssignedNode   *int32  `json:"assigned_node"`
	// Controller is set on partition 0's row, whose owner is the fleet's controller.
	Controller bool     `json:"controller"`
	Flags      []string `json:"flags"`
}

func (PartitionRow) Columns() []string {
	return []string{"PARTITION", "OWNER", "ADDRESS", "CLAIM", "CLAIMED-AT", "HELD", "GROUPS", "LOG-END-OFFSET", "CHECKPOINT", "CHECKPOINT-AGE", "SINCE-CHECKPOINT", "OWNER-LAG", "ASSIGNED", "FLAGS"}
}

func (r PartitionRow) Cells() []string {
	owner, claim, at, held, cp, age, lag, assigned := "", "", "", "", "", "", "", ""
	if r.OwnerNode != nil {
		owner = strconv.Itoa(int(*r.OwnerNode))
		if r.Controller {
			owner += "*"
		}
		claim = strconv.FormatUint(r.Claim, 10)
	}
	if r.ClaimedAt != nil {
		at = r.ClaimedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	if r.HeldSeconds != nil {
		held = output.Seconds(*r.HeldSeconds)
	}
	if r.CheckpointOffset != nil {
		cp = strconv.FormatUint(*r.CheckpointOffset, 10)
	}
	if r.CheckpointAgeSeconds != nil {
		age = output.Seconds(*r.CheckpointAgeSeconds)
	}
	if r.OwnerLagSeconds != nil {
		lag = output.Seconds(*r.OwnerLagSeconds)
	}
	switch {
	case r.AssignedNode != nil:
		assigned = strconv.Itoa(int(*r.AssignedNode))
	case r.AssignedClient != nil:
		assigned = "member " + strconv.FormatUint(uint64(*r.AssignedClient), 10)
	}
	flags := ""
	for i, f := range r.Flags {
		if i > 0 {
			flags += ","
		}
		flags += f
	}
	return []string{strconv.Itoa(r.Partition), owner, r.OwnerAddr, claim, at, held, strconv.Itoa(r.Groups), strconv.FormatUint(r.LogEndOffset, 10), cp, age, strconv.Itoa(r.SinceCheckpoint), lag, assigned, flags}
}

// Rows builds the 16 claim rows as of now.
func (f *Model) Rows(now time.Time) []PartitionRow {
	v := f.View
	anns := v.Announcements()
	rows := make([]PartitionRow, 0, len(f.Parts))
	for p, t := range f.Parts {
		row := PartitionRow{Partition: p, LogEndOffset: max(f.Ends[p], t.End), Controller: p == 0, Flags: []string{}}
		cl := t.State.Claim()
		counts := t.State.Counts()
		row.Groups = counts.Groups
		if off, at, ok := t.State.LastCheckpoint(); ok {
			row.CheckpointOffset = &off
			age := now.Sub(at).Seconds()
			row.CheckpointAgeSeconds = &age
		}
		row.SinceCheckpoint = counts.SinceCheckpoint
		an, aclaim, announced := v.Owner(p, now, -1)
		if announced {
			row.AnnouncedNode = &an
		}
		if cl.Number == 0 {
			row.Flags = append(row.Flags, FlagUnowned)
		} else {
			node := cl.Node
			row.OwnerNode, row.OwnerAddr, row.Claim = &node, cl.Addr, cl.Number
			if n := len(t.Tenures); n > 0 {
				at := t.Tenures[n-1].At
				held := now.Sub(at).Seconds()
				row.ClaimedAt, row.HeldSeconds = &at, &held
			}
			a, ok := v.Announcement(node)
			switch {
			case !ok && len(anns) > 0:
				row.Flags = append(row.Flags, FlagNotAnnounced)
			case ok:
				lag := now.Sub(a.Time).Seconds()
				row.OwnerLagSeconds = &lag
				if a.Addr != "" && a.Addr != cl.Addr {
					row.Flags = append(row.Flags, FlagAddrDiffers)
				}
				if now.Sub(a.Time) > v.Live {
					row.Flags = append(row.Flags, FlagStale)
				}
				if a.Leaving {
					row.Flags = append(row.Flags, FlagLeaving)
				}
			}
			if v.DrainStands(node) {
				row.Flags = append(row.Flags, FlagDraining)
			}
			// A stale or leaving owner is flagged as such; the live announcements name no owner
			// for its partitions then, which is no disagreement.
			if len(anns) > 0 && (!ok || v.Alive(node, now)) && (!announced || an != node || aclaim != cl.Number) {
				row.Flags = append(row.Flags, FlagOwnersDiffer)
			}
		}
		if m, ok := fleet.Lease(v.LiveMembers(f.Members, now), p); ok {
			row.AssignedClient = &m
			if n, ok := v.MemberNode(m, now); ok {
				row.AssignedNode = &n
				if row.OwnerNode != nil && n != *row.OwnerNode {
					row.Flags = append(row.Flags, FlagAssignmentDiffers)
				}
			}
		} else if f.Members != nil {
			row.Flags = append(row.Flags, FlagUnassigned)
		}
		rows = append(rows, row)
	}
	return rows
}

// TenureRow is one claim of `claims --history P`. JSON field names are an interface.
type TenureRow struct {
	Partition   int       `json:"partition"`
	Claim       uint64    `json:"claim"`
	Node        int32     `json:"node"`
	Addr        string    `json:"addr"`
	Offset      uint64    `json:"offset"`
	ClaimedAt   time.Time `json:"claimed_at"`
	HeldSeconds float64   `json:"held_seconds"`
	Current     bool      `json:"current"`
	Records     uint64    `json:"records"`
}

func (TenureRow) Columns() []string {
	return []string{"PARTITION", "CLAIM", "NODE", "ADDRESS", "OFFSET", "CLAIMED-AT", "HELD", "RECORDS", "CURRENT"}
}

func (r TenureRow) Cells() []string {
	cur := ""
	if r.Current {
		cur = "yes"
	}
	return []string{strconv.Itoa(r.Partition), strconv.FormatUint(r.Claim, 10), strconv.Itoa(int(r.Node)), r.Addr, strconv.FormatUint(r.Offset, 10), r.ClaimedAt.UTC().Format("2006-01-02T15:04:05.000Z"), output.Seconds(r.HeldSeconds), strconv.FormatUint(r.Records, 10), cur}
}

// History lists every valid claim of a tracker's partition, oldest first.
func (t *Tracker) History(now time.Time) []TenureRow {
	out := make([]TenureRow, 0, len(t.Tenures))
	for i, te := range t.Tenures {
		until := te.Until
		if until.IsZero() {
			until = now
		}
		out = append(out, TenureRow{Partition: t.Partition, Claim: te.Claim, Node: te.Node, Addr: te.Addr, Offset: te.Offset, ClaimedAt: te.At, HeldSeconds: until.Sub(te.At).Seconds(), Current: i == len(t.Tenures)-1, Records: te.Records})
	}
	return out
}

// GroupCoordinator is `claims --group G`: where the log puts a group and what the fleet says.
type GroupCoordinator struct {
	Group     string `json:"group"`
	Partition int    `json:"partition"`
	OwnerNode *int32 `json:"owner_node"`
	OwnerAddr string `json:"owner_addr"`
	Claim     uint64 `json:"claim"`
	// InLog says whether the partition's state holds the group.
	InLog bool `json:"in_log"`
	// FindCoordinator is what the fleet answered: node and address, or the error.
	FindCoordinatorNode  *int32 `json:"find_coordinator_node"`
	FindCoordinatorAddr  string `json:"find_coordinator_addr"`
	FindCoordinatorError string `json:"find_coordinator_error,omitempty"`
	Agrees               bool   `json:"agrees"`
}

func (GroupCoordinator) Columns() []string {
	return []string{"GROUP", "PARTITION", "OWNER", "ADDRESS", "CLAIM", "IN-LOG", "FIND-COORDINATOR", "AGREES"}
}

func (g GroupCoordinator) Cells() []string {
	owner, claim, fc := "", "", g.FindCoordinatorError
	if g.OwnerNode != nil {
		owner, claim = strconv.Itoa(int(*g.OwnerNode)), strconv.FormatUint(g.Claim, 10)
	}
	if g.FindCoordinatorNode != nil {
		fc = strconv.Itoa(int(*g.FindCoordinatorNode)) + " " + g.FindCoordinatorAddr
	}
	return []string{g.Group, strconv.Itoa(g.Partition), owner, g.OwnerAddr, claim, yesNo(g.InLog), fc, yesNo(g.Agrees)}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// CoordinatorOf builds the --group row from the fleet; node/addr/err are FindCoordinator's
// answer (err non-nil when it failed).
func (f *Model) CoordinatorOf(group string, node int32, addr string, fcErr error) GroupCoordinator {
	p := record.Partition(group)
	t := f.Parts[p]
	g := GroupCoordinator{Group: group, Partition: p}
	if cl := t.State.Claim(); cl.Number != 0 {
		n := cl.Node
		g.OwnerNode, g.OwnerAddr, g.Claim = &n, cl.Addr, cl.Number
	}
	g.InLog = slices.Contains(t.State.GroupNames(), group)
	if fcErr != nil {
		g.FindCoordinatorError = fcErr.Error()
	} else {
		g.FindCoordinatorNode, g.FindCoordinatorAddr = &node, addr
		g.Agrees = g.OwnerNode != nil && *g.OwnerNode == node
	}
	return g
}

// Claim is the newest valid claim of log partition p.
func (f *Model) Claim(p int) record.Claim { return f.Parts[p].State.Claim() }

// Snapshot is the model at this instant as a drain watch reads it: the fleet view and the claims.
func (f *Model) Snapshot() drainwatch.Snapshot {
	return drainwatch.Snapshot{View: f.View, Claim: f.Claim}
}

// GroupView is the group as the log holds it, nil when its partition holds no such group.
func (f *Model) GroupView(group string) *stateview.GroupView {
	for _, v := range stateview.GroupViews(f.Parts[record.Partition(group)].State) {
		if v.Group == group {
			return &v
		}
	}
	return nil
}
