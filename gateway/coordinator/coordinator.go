package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Config configures a Coordinator.
type Config struct {
	// Client reaches Iggy for appends, reads and offsets.
	Client *iggy.Client
	// Dial opens the dedicated session that holds the lease; nil uses Client.Session.
	Dial func(ctx context.Context) (*iggy.Session, error)
	// Stream is the Kafka stream; the log lives in Stream + ".meta".
	Stream string
	// NodeID, Host and Port are this gateway's broker identity and advertised address.
	NodeID int32
	Host   string
	Port   int32
	// Brokers is the configured fleet (addresses of the other gateways by node id).
	Brokers []kafka.Broker
	Clock   clock.Clock
	Logger  *slog.Logger
	// Log turns the coordinator log on; off, the lowest node id coordinates every group and
	// offsets are Iggy consumer offsets.
	Log bool
	// HeartbeatInterval is the Iggy server's heartbeat interval H: the server evicts a silent
	// group member after 1.2 H. Default 30 s, Iggy's and the embedded store's default.
	HeartbeatInterval time.Duration
	// LeasePoll is how often the lease is read (sync 606). Default 100 ms.
	LeasePoll time.Duration
	// LeaseBound is the age of the last lease confirmation past which the gateway stops
	// answering as coordinator. Default 1.2 H - 2 LeasePoll - 100 ms; must be below 1.2 H.
	LeaseBound time.Duration
	// HandoverBound is the age of the last lease confirmation past which an owner stops
	// answering, and how long a gaining gateway waits after the sync answer that showed the
	// gain before it serves (unless the previous owner announced its release). Default
	// 3 x LeasePoll; never above LeaseBound.
	HandoverBound time.Duration
	// TailPoll is how often every owned partition is read from its last applied offset, so an
	// owner that finds a newer claim by another gateway stops at once. Default LeasePoll / 2.
	TailPoll time.Duration
	// AnnounceInterval is how often an owner announces itself; Live is how long an
	// announcement keeps a gateway live in the fleet view. Defaults 1 s and 5 s.
	AnnounceInterval, Live time.Duration
	// FollowInterval is how often `coordinator_owners` is read. Default 100 ms.
	FollowInterval time.Duration
	// CheckpointEvery and CheckpointAge: a checkpoint after this many records, and at least
	// this often. Defaults 10,000 and 24 h.
	CheckpointEvery int
	CheckpointAge   time.Duration
	// TopicResync is how often the Kafka stream's topic list is read, so the offsets of deleted
	// topics are dropped (topics.go). Default 10 s.
	TopicResync time.Duration
	// Groups is the template of every group.Manager's configuration; Clock, Journal and Logger
	// are set per manager. A nil FallbackOffset reads the offsets of an Iggy consumer group of
	// the same name (IggyOffsets).
	Groups group.Config
}

func (c *Config) defaults() error {
	if c.Client == nil {
		return errors.New("coordinator: Config.Client is required")
	}
	if c.Stream == "" {
		c.Stream = "kafka"
	}
	if c.Dial == nil {
		cl := c.Client
		c.Dial = cl.Session
	}
	c.Clock = clock.Or(c.Clock)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 30 * time.Second
	}
	if c.LeasePoll <= 0 {
		c.LeasePoll = 100 * time.Millisecond
	}
	evict := c.HeartbeatInterval * 6 / 5
	if c.LeaseBound <= 0 {
		c.LeaseBound = evict - 2*c.LeasePoll - 100*time.Millisecond
	}
	if c.LeaseBound <= 0 || c.LeaseBound >= evict {
		return fmt.Errorf("coordinator: lease bound %v must be above 0 and below 1.2 x heartbeat interval %v = %v, "+
			"when Iggy may hand a silent gateway's partitions to another", c.LeaseBound, c.HeartbeatInterval, evict)
	}
	if c.HandoverBound <= 0 {
		c.HandoverBound = min(3*c.LeasePoll, c.LeaseBound)
	}
	if c.HandoverBound > c.LeaseBound {
		return fmt.Errorf("coordinator: handover bound %v must not be above the lease bound %v", c.HandoverBound, c.LeaseBound)
	}
	if c.TailPoll <= 0 {
		c.TailPoll = c.LeasePoll / 2
	}
	if c.AnnounceInterval <= 0 {
		c.AnnounceInterval = time.Second
	}
	if c.Live <= 0 {
		c.Live = 5 * c.AnnounceInterval
	}
	if c.FollowInterval <= 0 {
		c.FollowInterval = 100 * time.Millisecond
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = 10000
	}
	if c.CheckpointAge <= 0 {
		c.CheckpointAge = 24 * time.Hour
	}
	if c.TopicResync <= 0 {
		c.TopicResync = 10 * time.Second
	}
	if c.Groups.FallbackOffset == nil {
		c.Groups.FallbackOffset = IggyOffsets(c.Client, c.Stream)
	}
	return nil
}

// Coordinator is one gateway's part of the coordinator log: its leases, the managers of the
// partitions it owns, and its view of the fleet.
type Coordinator struct {
	cfg  Config
	clk  clock.Clock
	log  *slog.Logger
	addr string

	meta                  wire.Identifier
	topic, owners, drains wire.Identifier

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sess      atomic.Pointer[iggy.Session]
	confirmed atomic.Int64 // Unix ns of the send time of the last sync that succeeded
	leaving   atomic.Bool
	// stops counts the goroutines of partition.stop, which Close waits for after it stopped
	// every partition: no stop can start one after that, since nothing loads a partition once
	// the lease loop ended.
	stops sync.WaitGroup

	mu    sync.Mutex
	parts [record.Partitions]*partition
	view  map[int32]Announcement // latest announcement per node, from coordinator_owners
	// released is, per log partition, the highest claim under which this process stopped
	// serving it for good (0: none); every announcement carries it.
	released [record.Partitions]uint64
	// forgotAt is, per log partition, when a failed load or a newer claim removed it; a lease
	// answer to a sync sent before then does not load it again.
	forgotAt [record.Partitions]time.Time

	// ownersMu orders the reads of coordinator_owners (the follower and every loading
	// partition read from ownersNext on).
	ownersMu      sync.Mutex
	ownersNext    uint64
	ownersStarted bool

	// nologMu guards nologLoads: without the log, a group's Iggy offsets are loaded into the
	// manager before its first request.
	nologMu    sync.Mutex
	nologLoads map[string]*nologLoad

	// dr is what the gateway knows of coordinator_drains (drain.go).
	dr drainState
	// topics is what the topic resync knows (topics.go).
	topics topicState

	announceNow chan struct{}
	leaseNow    chan struct{}
	router      kafka.GroupCoordinator
	fleet       *Fleet
	nolog       *group.Manager
	// onSnapshot, when set, is called for every checkpoint snapshot taken (tests count them).
	onSnapshot func()
}

// Start validates or creates the log's shape, joins `kafka-gateways` and starts the lease loop.
// It returns once the shape is right and the session joined; partitions are gained in the
// background (Owners shows them).
func Start(ctx context.Context, cfg Config) (*Coordinator, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	c := &Coordinator{
		cfg: cfg, clk: cfg.Clock, log: cfg.Logger.With("component", "coordinator", "node", cfg.NodeID),
		addr: fmt.Sprintf("%s:%d", cfg.Host, cfg.Port),
		meta: wire.NamedID(cfg.Stream + ".meta"), topic: wire.NamedID(logTopic), owners: wire.NamedID(ownersTopic),
		view: make(map[int32]Announcement), announceNow: make(chan struct{}, 1), leaseNow: make(chan struct{}, 1),
		nologLoads: make(map[string]*nologLoad), drains: wire.NamedID(drainsTopic),
	}
	c.dr.nodes = make(map[int32]bool)
	c.topics.now = make(chan struct{}, 1)
	c.topics.seen = make(map[*partition]map[string]topicKey)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.fleet = &Fleet{c: c}
	c.router = group.NewRouter(directory{c})
	if !cfg.Log {
		c.startNoLog()
		return c, nil
	}
	if err := ensureShape(ctx, cfg.Client, cfg.Stream+".meta"); err != nil {
		c.cancel()
		return nil, err
	}
	drained, err := c.startDrained(ctx)
	if err != nil {
		c.cancel()
		return nil, err
	}
	var sess *iggy.Session
	if drained {
		c.log.Info("drained by an operator: not joining " + leaseGroup + " until the drain is undone")
	} else if sess, err = c.join(ctx); err != nil {
		c.cancel()
		return nil, err
	}
	c.wg.Add(6)
	go c.leaseLoop(sess)
	go c.topicLoop()
	go c.followOwners()
	go c.followDrains()
	go c.announceLoop()
	go c.tailLoop()
	return c, nil
}

// Groups is the gateway's kafka.GroupCoordinator.
func (c *Coordinator) Groups() kafka.GroupCoordinator { return c.router }

// Leave stops serving and leaves `kafka-gateways`, so Iggy hands this gateway's partitions to
// the others at once (SIGTERM, before the drain).
func (c *Coordinator) Leave(ctx context.Context) error {
	if !c.cfg.Log || c.leaving.Swap(true) {
		return nil
	}
	// Release and announce before leaving (releaseAll); a drained gateway has left already.
	c.dr.leaveMu.Lock()
	defer c.dr.leaveMu.Unlock()
	c.releaseAll(ctx, "leaving")
	sess := c.sess.Load()
	var err error
	if sess != nil {
		err = sess.LeaveConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(leaseGroup))
	}
	return err
}

// Close stops everything and ends the lease session.
func (c *Coordinator) Close() error {
	c.leaving.Store(true)
	c.cancel()
	if s := c.sess.Load(); s != nil {
		_ = s.Close()
	}
	c.wg.Wait()
	c.dropAll("closing")
	c.stops.Wait()
	if c.nolog != nil {
		c.nolog.Close()
	}
	return nil
}

// Owner is who coordinates a log partition, as this gateway knows it.
type Owner struct {
	Node  int32
	Claim uint64
	// Serving is true for a partition this gateway serves now (replayed, claimed, lease fresh).
	Serving bool
}

// Owners maps each log partition with a known owner to it: this gateway's own partitions from
// its leases, the others from the announcements.
func (c *Coordinator) Owners() map[int]Owner {
	out := make(map[int]Owner)
	for p := range record.Partitions {
		if o, ok := c.owner(p); ok {
			out[p] = o
		}
	}
	return out
}

func (c *Coordinator) owner(p int) (Owner, bool) {
	if !c.cfg.Log {
		return Owner{Node: c.lowestNode(), Serving: c.lowestNode() == c.cfg.NodeID}, true
	}
	c.mu.Lock()
	pt := c.parts[p]
	c.mu.Unlock()
	if pt != nil {
		pt.promote()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if pt := c.parts[p]; pt != nil {
		return Owner{Node: c.cfg.NodeID, Claim: pt.claim.Load(), Serving: pt.serving() && c.leaseFresh()}, true
	}
	now := c.clk.Now()
	var best Owner
	found := false
	for node, a := range c.view {
		if node == c.cfg.NodeID || a.Leaving || now.Sub(a.Time) > c.cfg.Live {
			continue
		}
		if cl, ok := a.Claims[p]; ok && (!found || cl > best.Claim) {
			best, found = Owner{Node: node, Claim: cl}, true
		}
	}
	return best, found
}

// leaseFresh reports whether the lease session is unbroken and its last confirmation was sent
// less than HandoverBound ago (the split-brain bound of the package doc).
func (c *Coordinator) leaseFresh() bool {
	s := c.sess.Load()
	if s == nil || s.Err() != nil || c.leaving.Load() {
		return false
	}
	return c.clk.Now().Sub(time.Unix(0, c.confirmed.Load())) < c.cfg.HandoverBound
}

func (c *Coordinator) join(ctx context.Context) (*iggy.Session, error) {
	sess, err := c.cfg.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("coordinator: opening the lease session: %w", err)
	}
	gid := wire.NamedID(leaseGroup)
	if _, err := sess.CreateConsumerGroup(ctx, c.meta, c.topic, leaseGroup); err != nil && !errors.Is(err, wire.ConsumerGroupNameAlreadyExists) {
		_ = sess.Close()
		return nil, fmt.Errorf("coordinator: creating Iggy group %s: %w", leaseGroup, err)
	}
	if err := sess.JoinConsumerGroup(ctx, c.meta, c.topic, gid); err != nil {
		_ = sess.Close()
		return nil, fmt.Errorf("coordinator: joining Iggy group %s: %w", leaseGroup, err)
	}
	c.sess.Store(sess)
	return sess, nil
}

// leaseLoop reads the assignment every LeasePoll; a broken session drops every partition at
// once and a new session joins again.
func (c *Coordinator) leaseLoop(sess *iggy.Session) {
	defer c.wg.Done()
	t := c.clk.NewTimer(0)
	defer t.Stop()
	backoff := c.cfg.LeasePoll
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C():
		case <-c.leaseNow:
		}
		if c.leaving.Load() {
			return
		}
		if c.dr.self.Load() {
			if sess != nil {
				c.drainSelf(sess)
				sess = nil
			}
			t.Reset(c.cfg.LeasePoll)
			continue
		}
		if sess == nil {
			var err error
			if sess, err = c.join(c.ctx); err != nil {
				c.log.Warn("lease: rejoin failed", "err", err)
				t.Reset(backoff)
				backoff = min(2*backoff, 2*time.Second)
				continue
			}
			backoff = c.cfg.LeasePoll
		}
		sent := c.clk.Now()
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeaseBound)
		a, err := sess.SyncConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(leaseGroup))
		cancel()
		switch {
		case err == nil:
			c.assign(a.Partitions, sent, c.clk.Now())
		case errors.Is(err, wire.ConsumerGroupMemberNotFound) && sess.Err() == nil:
			// Iggy dropped the membership while the connection lives: rejoin.
			c.dropAll("lease: no longer a member")
			if err := sess.JoinConsumerGroup(c.ctx, c.meta, c.topic, wire.NamedID(leaseGroup)); err != nil {
				c.log.Warn("lease: rejoin failed", "err", err)
			}
		default:
			if c.ctx.Err() != nil {
				return
			}
			c.log.Warn("lease: session failed; every partition stops", "err", err)
			c.dropAll("lease session failed")
			_ = sess.Close()
			c.sess.CompareAndSwap(sess, nil)
			sess = nil
		}
		t.Reset(c.cfg.LeasePoll)
	}
}

// kickLease makes the lease loop read the assignment now (a partition was found taken over).
func (c *Coordinator) kickLease() {
	select {
	case c.leaseNow <- struct{}{}:
	default:
	}
}

// assign closes lost partitions, then takes the sync (sent at sent) as the lease confirmation,
// then starts loading the gained ones; received is when the answer arrived, the moment a
// gained partition's HandoverBound wait counts from.
func (c *Coordinator) assign(parts []uint32, sent, received time.Time) {
	var lost, gained []*partition
	c.mu.Lock()
	if c.leaving.Load() || c.dr.self.Load() {
		c.mu.Unlock()
		return
	}
	for p := range record.Partitions {
		want := slices.Contains(parts, uint32(p))
		cur := c.parts[p]
		switch {
		case want && cur == nil && sent.Before(c.forgotAt[p]):
			// The answer was asked for before this gateway found the partition taken over;
			// the next read tells.
		case want && cur == nil:
			pt := newPartition(c, p, received)
			c.parts[p] = pt
			gained = append(gained, pt)
			c.wg.Add(1)
		case !want && cur != nil:
			c.parts[p] = nil
			lost = append(lost, cur)
		}
	}
	c.mu.Unlock()
	for _, pt := range lost {
		pt.stop("lease lost")
	}
	c.confirmed.Store(sent.UnixNano())
	for _, pt := range gained {
		go pt.load()
	}
	if len(lost)+len(gained) > 0 {
		c.kickAnnounce()
	}
}

// noteReleased records that this process stopped serving p under claim for good.
func (c *Coordinator) noteReleased(p int, claim uint64) {
	c.mu.Lock()
	c.released[p] = max(c.released[p], claim)
	c.mu.Unlock()
	c.kickAnnounce()
}

// releasedLocked reports whether the owner of claim prev is known to have stopped serving p:
// no claim at all, a claim of this process that it stopped, or a claim whose node's newest
// announcement lists it as released.
func (c *Coordinator) releasedLocked(p int, prev record.Claim) bool {
	if prev.Number == 0 {
		return true
	}
	if prev.Node == c.cfg.NodeID && c.released[p] == prev.Number {
		return true
	}
	a, ok := c.view[prev.Node]
	return ok && a.Released[p] == prev.Number
}

// dropAll stops serving every partition at once (session broke, leaving, closing) and returns
// them.
func (c *Coordinator) dropAll(why string) []*partition {
	c.mu.Lock()
	var lost []*partition
	for p, pt := range c.parts {
		if pt != nil {
			lost = append(lost, pt)
			c.parts[p] = nil
		}
	}
	c.mu.Unlock()
	for _, pt := range lost {
		pt.stop(why)
	}
	if len(lost) > 0 {
		c.kickAnnounce()
	}
	return lost
}

// forget removes pt if it is still the partition's entry (a failed load or a fenced append), so
// the next sync that lists the partition loads it again.
func (c *Coordinator) forget(pt *partition) {
	c.mu.Lock()
	if c.parts[pt.id] == pt {
		c.parts[pt.id] = nil
	}
	c.forgotAt[pt.id] = c.clk.Now()
	c.mu.Unlock()
	c.kickAnnounce()
}

func (c *Coordinator) kickAnnounce() {
	select {
	case c.announceNow <- struct{}{}:
	default:
	}
}

func (c *Coordinator) lowestNode() int32 {
	low := c.cfg.NodeID
	for _, b := range c.cfg.Brokers {
		low = min(low, b.NodeID)
	}
	return low
}
