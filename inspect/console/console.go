package console

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
)

// Snapshot is the fleet as the console shows it at one instant: the node table, the partition
// table, the recent handovers (newest first), what changed since the previous snapshot (typed
// fields, for the view to mark), the drain or undo started from the console, and the
// connection status. Rows are those of Status.StoreAnswered: when the store stops answering
// the console keeps sending the last rows it knows, and Status says they are stale.
type Snapshot struct {
	At          time.Time
	Nodes       []claims.NodeRow
	Rows        []claims.PartitionRow
	Handovers   []claims.HandoverRow
	Changes     []claims.Change
	NodeChanges []claims.NodeChange
	Drain       *DrainStatus
	Status      Status
}

// Status is what the console knows of its sources at At: when the store last answered, the
// last error, the retries, and whether a gateway answers.
type Status struct {
	At    time.Time
	Store string
	// StoreAnswered is when the store last answered a request of the console.
	StoreAnswered time.Time
	// StoreError is the last request's error, "" once a request succeeded again.
	StoreError string
	// Retry counts the reloads tried since the store stopped answering; NextRetry is when the
	// next one starts (zero while none is due).
	Retry     int
	NextRetry time.Time
	// Gateways names the gateways asked (DialGateways); Unreachable are those of them that did
	// not answer the last probe, each with why (none when all did, or no probe ran).
	Gateways    string
	Unreachable []dial.Reach
	// StaleAfter is how long the store may be silent before the console says so.
	StaleAfter time.Duration
}

// StoreOK reports whether the store answered within StaleAfter and its last request did not
// fail.
func (s Status) StoreOK() bool {
	return s.StoreError == "" && s.At.Sub(s.StoreAnswered) <= s.StaleAfter
}

// Healthy reports whether every source answers.
func (s Status) Healthy() bool { return s.StoreOK() && len(s.Unreachable) == 0 }

// DrainStatus is a drain or an undo started from the console, as it goes.
type DrainStatus struct {
	Nodes []int32
	Undo  bool
	// Plan is the drain's plan (empty for an undo).
	Plan drainwatch.Plan
	// Events are the phases reached so far, in order.
	Events []drainwatch.Event
	// Done: every partition of the plan is served elsewhere (an undo: every node serves again).
	Done bool
	// Undone: someone undid the drain while it was followed.
	Undone bool
	// Moves are the moves that happened, once Done (a drain only).
	Moves []drainwatch.Move
	// Error is why the request could not be written.
	Error string
}

// Sink receives what a console says: a snapshot after every round that read something, and a
// status on every beat. Both may be called from different goroutines.
type Sink interface {
	Snapshot(Snapshot)
	Status(Status)
}

// Console defaults.
const (
	// DefaultStaleAfter is how long the store may be silent before the console says so: a
	// following console hears from it every FollowEvery.
	DefaultStaleAfter = time.Second
	// beatEvery paces the status beats (the age of the last answer on screen).
	beatEvery = 250 * time.Millisecond
	// probeEvery and probeBudget pace and bound the gateway probe.
	probeEvery  = time.Second
	probeBudget = 1500 * time.Millisecond
	// retryMin and retryMax bound the backoff between reloads while the store is away.
	retryMin = 250 * time.Millisecond
	retryMax = 4 * time.Second
	// keepHandovers is how many handovers the console keeps.
	keepHandovers = 200
)

// Console is the engine of the live console (`claims --watch`): it follows the log into a Model
// on one goroutine (Run), sends a Snapshot after every round and a Status on every beat, notices
// within StaleAfter when the store stops answering, reloads with backoff until it answers again
// (taking in whatever changed meanwhile, a new controller included), and performs the
// operator's actions with the same calls and safety rules as `drain`: PlanDrain, Drain (which
// plans again and refuses a plan the fleet no longer matches), CheckUndo and Undo. The model is
// only touched by Run's goroutine; the actions are run there between two polls.
type Console struct {
	Log *logread.Log
	// Drainer writes drain requests; nil makes the console read-only.
	Drainer drainplan.Drainer
	// Store names the store's addresses in the banner.
	Store string
	// Dial, when set with Probe, picks the gateways to ask from the nodes the log knows (the
	// command's DialGateways), and Probe asks each of them every second (within 1.5 s); the
	// banner names every one that does not answer.
	Dial  func(nodes []fleet.Node) dial.Gateways
	Probe func(ctx context.Context, gws dial.Gateways) []dial.Reach
	// Live answers the group page (DescribeGroup); nil leaves it out.
	Live livegroups.GroupLive
	// StaleAfter, default DefaultStaleAfter.
	StaleAfter time.Duration

	once sync.Once
	reqs chan func(*session)

	mu        sync.Mutex
	answered  time.Time
	storeErr  error
	retry     int
	nextRetry time.Time
	nodes     []fleet.Node
	gateways  dial.Gateways
	reach     []dial.Reach
}

// session is Run's state: only its goroutine touches it.
type session struct {
	c         *Console
	m         *claims.Model
	trail     *claims.Trail
	prevRows  []claims.PartitionRow
	prevNodes []claims.NodeRow
	handovers []handover
	drain     *drainTrack
}

// handover is a row of the pane with what explains it again once the announcements of its
// moment are read.
type handover struct {
	row       claims.HandoverRow
	prevClaim uint64
	settled   bool
}

type drainTrack struct {
	DrainStatus
	watch *drainwatch.Watch
}

func (c *Console) init() {
	c.once.Do(func() {
		c.reqs = make(chan func(*session))
		if c.StaleAfter <= 0 {
			c.StaleAfter = DefaultStaleAfter
		}
	})
}

// ErrReadOnly is an action of a console without a Drainer.
var ErrReadOnly = errors.New("the console is read-only: drains and undos are off")

// Run follows the fleet from m (as LoadModel returned it) until ctx ends, and returns nil then.
// Failures of the store are not errors: Run says so in the Status and retries.
func (c *Console) Run(ctx context.Context, m *claims.Model, sink Sink) error {
	c.init()
	clk := c.Log.Clock()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	c.answer(clk.Now())
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.beat(ctx, sink)
	}()
	c.setNodes(m.View.Nodes(clk.Now()))
	if c.Dial != nil && c.Probe != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.probe(ctx)
		}()
	}
	s := &session{c: c, m: m, trail: claims.NewTrail()}
	if err := s.trail.Update(ctx, c.Log); err != nil {
		c.fail(err)
	}
	s.emit(sink)
	for {
		err := claims.FollowPolls(ctx, c.Log, s.m, func() error {
			c.answer(clk.Now())
			s.serve()
			return nil
		}, func(hs []claims.Handover, refreshed bool) error {
			if refreshed {
				if err := s.trail.Update(ctx, c.Log); err != nil {
					return err
				}
			}
			if refreshed {
				s.settle()
			}
			s.add(hs, refreshed)
			s.observe()
			s.emit(sink)
			return nil
		})
		if ctx.Err() != nil || err == nil {
			return nil
		}
		c.fail(err)
		sink.Status(c.status(clk.Now()))
		backoff := retryMin
		for attempt := 1; ; attempt++ {
			c.retrying(attempt, clk.Now().Add(backoff))
			sink.Status(c.status(clk.Now()))
			if !s.wait(ctx, backoff) {
				return nil
			}
			nm, err := claims.LoadModel(ctx, c.Log)
			if err == nil {
				err = s.trail.Update(ctx, c.Log)
			}
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				missed := claims.HandoversBetween(s.m, nm)
				s.m = nm
				s.add(missed, true)
				break
			}
			c.fail(err)
			backoff = min(2*backoff, retryMax)
		}
		c.answer(clk.Now())
		s.observe()
		s.emit(sink)
	}
}

// wait pauses d, serving actions meanwhile; false when ctx ended.
func (s *session) wait(ctx context.Context, d time.Duration) bool {
	t := s.c.Log.Clock().NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			return true
		case fn := <-s.c.reqs:
			fn(s)
		}
	}
}

// serve runs the actions waiting for the model.
func (s *session) serve() {
	for {
		select {
		case fn := <-s.c.reqs:
			fn(s)
		default:
			return
		}
	}
}

// add puts hs at the top of the pane; settled says the view and the trail were read after
// their claims, so their explanation stands.
func (s *session) add(hs []claims.Handover, settled bool) {
	now := s.c.Log.Clock().Now()
	for _, h := range hs {
		prev := claims.PreviousClaim(s.m, h.Partition, h.Claim)
		s.handovers = append([]handover{{row: claims.NewHandoverRow(s.m.View, s.trail, h, prev, now), prevClaim: prev, settled: settled}}, s.handovers...)
	}
	if len(s.handovers) > keepHandovers {
		s.handovers = s.handovers[:keepHandovers]
	}
}

// settle explains again, with the announcements just read, the handovers shown before them.
func (s *session) settle() {
	now := s.c.Log.Clock().Now()
	for i := range s.handovers {
		if h := &s.handovers[i]; !h.settled {
			h.row, h.settled = claims.NewHandoverRow(s.m.View, s.trail, h.row.Handover, h.prevClaim, now), true
		}
	}
}

// observe moves the followed drain on with the model, as `drain --wait` does: drainwatch.
func (s *session) observe() {
	d := s.drain
	if d == nil || d.Done || d.Undone || d.Error != "" {
		return
	}
	f := s.m.Snapshot()
	d.Events = append(d.Events, d.watch.Observe(f, s.c.Log.Clock().Now())...)
	d.Done, d.Undone = d.watch.Done(), d.watch.Undone()
	if d.Done && !d.Undo {
		d.Moves = d.Plan.Moves(f)
	}
}

func (s *session) emit(sink Sink) {
	now := s.c.Log.Clock().Now()
	rows, nodes := s.m.Rows(now), s.m.Nodes(now)
	hs := make([]claims.HandoverRow, len(s.handovers))
	for i, h := range s.handovers {
		hs[i] = h.row
	}
	snap := Snapshot{
		At: now, Nodes: nodes, Rows: rows, Handovers: hs,
		Changes: claims.Diff(s.prevRows, rows, now), NodeChanges: claims.DiffNodes(s.prevNodes, nodes, now),
		Status: s.c.status(now),
	}
	s.prevRows, s.prevNodes = rows, nodes
	s.c.setNodes(s.m.View.Nodes(now))
	if d := s.drain; d != nil {
		ds := d.DrainStatus
		ds.Events, ds.Moves = slices.Clone(d.Events), slices.Clone(d.Moves)
		snap.Drain = &ds
	}
	sink.Snapshot(snap)
}

func (c *Console) beat(ctx context.Context, sink Sink) {
	clk := c.Log.Clock()
	for {
		t := clk.NewTimer(beatEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		sink.Status(c.status(clk.Now()))
	}
}

func (c *Console) probe(ctx context.Context) {
	clk := c.Log.Clock()
	for {
		c.mu.Lock()
		gws := c.Dial(c.nodes)
		c.mu.Unlock()
		pctx, cancel := context.WithTimeout(ctx, probeBudget)
		reach := c.Probe(pctx, gws)
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.gateways, c.reach = gws, reach
		c.mu.Unlock()
		t := clk.NewTimer(probeEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// setNodes keeps the nodes of the newest model for the probe.
func (c *Console) setNodes(nodes []fleet.Node) {
	c.mu.Lock()
	c.nodes = nodes
	c.mu.Unlock()
}

func (c *Console) answer(at time.Time) {
	c.mu.Lock()
	c.answered, c.storeErr, c.retry, c.nextRetry = at, nil, 0, time.Time{}
	c.mu.Unlock()
}

func (c *Console) fail(err error) {
	c.mu.Lock()
	c.storeErr = err
	c.mu.Unlock()
}

func (c *Console) retrying(attempt int, next time.Time) {
	c.mu.Lock()
	c.retry, c.nextRetry = attempt, next
	c.mu.Unlock()
}

func (c *Console) status(now time.Time) Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Status{At: now, Store: c.Store, StoreAnswered: c.answered, Retry: c.retry, NextRetry: c.nextRetry, Gateways: c.gateways.String(), StaleAfter: c.StaleAfter}
	if c.storeErr != nil {
		s.StoreError = c.storeErr.Error()
	}
	s.Unreachable = dial.Unreachable(c.reach)
	return s
}

// Status is the console's status now.
func (c *Console) Status() Status {
	c.init()
	return c.status(c.Log.Clock().Now())
}

// do runs fn on Run's goroutine with the model, between two polls.
func (c *Console) do(ctx context.Context, fn func(*session) error) error {
	c.init()
	done := make(chan error, 1)
	select {
	case c.reqs <- func(s *session) { done <- fn(s) }:
	case <-ctx.Done():
		return fmt.Errorf("the console is busy reading the store at %s: %w", c.Store, ctx.Err())
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// usable refuses to act on a stale model.
func (c *Console) usable(now time.Time) error {
	if st := c.status(now); !st.StoreOK() {
		return drainplan.Refuse("the store at %s does not answer, so the view is stale: nothing is planned on it until it answers again", c.Store)
	}
	return nil
}

// PlanDrain is drainplan.Plan on the console's model.
func (c *Console) PlanDrain(ctx context.Context, nodes []int32) (drainwatch.Plan, error) {
	var plan drainwatch.Plan
	err := c.do(ctx, func(s *session) error {
		now := c.Log.Clock().Now()
		if err := c.usable(now); err != nil {
			return err
		}
		var err error
		plan, err = drainplan.Plan(s.m, nodes, now)
		return err
	})
	return plan, err
}

// Drain requests the drain of shown's nodes and follows it in the snapshots. It plans again
// first and refuses when the fleet no longer matches the plan the operator confirmed.
func (c *Console) Drain(ctx context.Context, shown drainwatch.Plan) error {
	if c.Drainer == nil {
		return ErrReadOnly
	}
	var track *drainTrack
	err := c.do(ctx, func(s *session) error {
		now := c.Log.Clock().Now()
		if err := c.usable(now); err != nil {
			return err
		}
		plan, err := drainplan.Plan(s.m, shown.Nodes, now)
		if err != nil {
			return err
		}
		if !sameMoves(plan, shown) {
			return drainplan.Refuse("the fleet changed since the plan was shown: press d again for the new plan")
		}
		s.drain = &drainTrack{DrainStatus: DrainStatus{Nodes: plan.Nodes, Plan: plan}, watch: drainwatch.Drain(plan)}
		track = s.drain
		return nil
	})
	if err != nil {
		return err
	}
	return c.request(ctx, track, false)
}

// CheckUndo is drainplan.CheckUndo on the console's model.
func (c *Console) CheckUndo(ctx context.Context, nodes []int32) error {
	return c.do(ctx, func(s *session) error {
		now := c.Log.Clock().Now()
		if err := c.usable(now); err != nil {
			return err
		}
		return drainplan.CheckUndo(s.m, nodes, now)
	})
}

// Undo requests the undo of nodes' drain and follows it until each serves again.
func (c *Console) Undo(ctx context.Context, nodes []int32) error {
	if c.Drainer == nil {
		return ErrReadOnly
	}
	var track *drainTrack
	err := c.do(ctx, func(s *session) error {
		now := c.Log.Clock().Now()
		if err := c.usable(now); err != nil {
			return err
		}
		if err := drainplan.CheckUndo(s.m, nodes, now); err != nil {
			return err
		}
		w := drainwatch.Undo(nodes)
		s.drain = &drainTrack{DrainStatus: DrainStatus{Nodes: w.Nodes(), Undo: true}, watch: w}
		track = s.drain
		return nil
	})
	if err != nil {
		return err
	}
	return c.request(ctx, track, true)
}

// request writes the requests of track and gives its watch their offsets.
func (c *Console) request(ctx context.Context, track *drainTrack, undo bool) error {
	at := map[int32]uint64{}
	var err error
	for _, n := range track.Nodes {
		var off uint64
		if off, err = c.Drainer.RequestDrain(ctx, n, undo); err != nil {
			break
		}
		at[n] = off
	}
	// track is only touched on Run's goroutine, even when another action replaced it meanwhile.
	derr := c.do(ctx, func(*session) error {
		for n, off := range at {
			track.watch.Requested(n, off)
		}
		if err != nil {
			track.Error = err.Error()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return derr
}

func sameMoves(a, b drainwatch.Plan) bool {
	return slices.EqualFunc(a.Steps, b.Steps, func(x, y drainwatch.Step) bool {
		return x.Partition == y.Partition && x.From == y.From && (x.To == nil) == (y.To == nil) && (x.To == nil || *x.To == *y.To)
	})
}

// Groups lists the groups the log holds in partition p, as `replay` shows them.
func (c *Console) Groups(ctx context.Context, p int) ([]stateview.GroupView, error) {
	if err := logread.CheckPartition(p); err != nil {
		return nil, err
	}
	var out []stateview.GroupView
	err := c.do(ctx, func(s *session) error {
		out = stateview.GroupViews(s.m.Parts[p].State)
		return nil
	})
	return out, err
}

// GroupLog is the model's side of DescribeGroup: where the log puts the group, given
// FindCoordinator's answer, and the group as the log holds it.
func (c *Console) GroupLog(ctx context.Context) livegroups.GroupLog {
	return func(group string, node int32, addr string, fcErr error) (claims.GroupCoordinator, *stateview.GroupView, error) {
		var gc claims.GroupCoordinator
		var gv *stateview.GroupView
		err := c.do(ctx, func(s *session) error {
			gc, gv = s.m.CoordinatorOf(group, node, addr, fcErr), s.m.GroupView(group)
			return nil
		})
		return gc, gv, err
	}
}

// Group is DescribeGroup on the console's model and Live.
func (c *Console) Group(ctx context.Context, group string) (livegroups.GroupDetail, error) {
	if c.Live == nil {
		return livegroups.GroupDetail{}, errors.New("the console has no connection to the gateways")
	}
	return livegroups.DescribeGroup(ctx, c.Live, c.GroupLog(ctx), group, c.Log.Clock().Now())
}
