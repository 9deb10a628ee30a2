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

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
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
	// Version is this gateway's release, announced for the operators' node table.
	Version string
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
	// Txn is the template of every txn.Manager's configuration (Markers, ProducerID,
	// MaxTimeout); Clock, Journal and Logger are set per manager. Transactions says whether
	// FindCoordinator names a transaction coordinator (key type 1) and Txns serves them.
	Txn          txn.Config
	Transactions bool
	// Mark writes a transaction's marker on one data partition (WriteTxnMarkers' data
	// partitions); Txn.Markers ends whole transactions on theirs.
	Mark func(ctx context.Context, topic string, partition int32, producerID int64, epoch int16, commit bool) error
	// Peer sends a Kafka request to another gateway at its announced address (host:port) and
	// returns its answer: a transaction's markers for the groups another gateway coordinates
	// (WriteTxnMarkers), and the check of a transactional write against a transaction another
	// gateway coordinates (AddPartitionsToTxn v4). Nil: only what this gateway serves.
	Peer func(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error)
	// Metrics receives the coordinator's counts; nil keeps them in a Metrics of its own. A nil
	// Groups.Metrics is one shared by the coordinator's group managers.
	Metrics *Metrics

	// standDownAfter is how long every lease confirmation must come late before the gateway
	// stands down, and how long they must come in time before it takes part again
	// (slowlease.go); 0 is slowLeaseFactor x HandoverBound. The package's tests that are not
	// about it set it out of reach: under -race on a loaded machine the lease reads of their
	// gateways, all in one process, come late together for seconds.
	standDownAfter time.Duration

	// onServe, when set, is told each time a partition starts serving, and whether the previous
	// owner's release was known then (tests tell the release path from the HandoverBound wait
	// by this event, not by how long the handover took).
	onServe func(p int, released bool)
	// beforeRelease, when set, runs in a stopped partition's background close before its
	// release is recorded (tests hold a release back past a leave's wait with it).
	beforeRelease func(p int)
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
	if c.Metrics == nil {
		c.Metrics = new(Metrics)
	}
	if c.Groups.Metrics == nil {
		c.Groups.Metrics = new(group.Metrics)
	}
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
	if c.standDownAfter <= 0 {
		c.standDownAfter = slowLeaseFactor * c.HandoverBound
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
	// lateReleases is set once a leave has announced: the announce loop has ended, so a
	// release that lands after that (a close slower than the leave's wait) is announced by
	// noteReleased itself.
	lateReleases atomic.Bool
	// announceMu keeps announcements in order: the one appended last was built last.
	announceMu sync.Mutex
	// ownersRead, made by a claim waiting out HandoverBound (waitRelease), is closed and
	// cleared by the next read of coordinator_owners that found announcements (under mu).
	ownersRead chan struct{}
	// standby: the gateway stood down for a slow link (slowlease.go): it stays a member of
	// kafka-gateways but names no member in its announcements, so nobody's lease counts it.
	standby atomic.Bool
	// stops counts the goroutines of partition.stop, which Close waits for after it stopped
	// every partition: no stop can start one after that, since nothing loads a partition once
	// the lease loop ended.
	stops sync.WaitGroup

	// member is this gateway's Iggy member id in the lease group, -1 while it is not a member.
	member atomic.Int64

	mu    sync.Mutex
	parts [record.Partitions]*partition
	// membersSent is when the read of the lease group's membership that fv holds was sent
	// (Unix ns): an older read answered later does not replace it.
	membersSent int64
	// fv is the fleet as coordinator_owners and coordinator_drains say it (package fleet).
	fv *fleet.View
	// released is, per log partition, the highest claim under which this process stopped
	// serving it for good (0: none); every announcement carries it.
	released [record.Partitions]uint64
	// forgotAt is, per log partition, when a failed load or a newer claim removed it; a lease
	// answer to a sync sent before then does not load it again.
	forgotAt [record.Partitions]time.Time

	// ownersMu orders the reads of coordinator_owners (the follower and every loading
	// partition read on from where the feed is), and drainsFeed's are ordered by dr.readMu.
	ownersMu   sync.Mutex
	ownersFeed *logio.Feed
	drainsFeed *logio.Feed

	// nologLoads: without the log, a group's Iggy offsets are loaded into the manager before
	// its first request.
	nologLoads *nologLoads

	// dr is what the gateway knows of coordinator_drains (drain.go).
	dr drainState
	// topics is what the topic resync knows (topics.go).
	topics topicState

	announceNow chan struct{}
	leaseNow    chan struct{}
	router      kafka.GroupCoordinator
	brokers     *brokerView
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
		meta: wire.NamedID(fleet.MetaStream(cfg.Stream)), topic: wire.NamedID(fleet.LogTopic), owners: wire.NamedID(fleet.OwnersTopic),
		fv: fleet.NewView(cfg.Live), announceNow: make(chan struct{}, 1), leaseNow: make(chan struct{}, 1),
		nologLoads: newNologLoads(cfg.Metrics), drains: wire.NamedID(fleet.DrainsTopic),
		ownersFeed: logio.OwnersFeed(cfg.Stream), drainsFeed: logio.DrainsFeed(cfg.Stream),
	}
	c.member.Store(-1)
	c.topics.now = make(chan struct{}, 1)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.brokers = newBrokerView(c)
	c.router = group.NewRouter(directory{c})
	if !cfg.Log {
		c.startNoLog()
		return c, nil
	}
	if err := logio.EnsureShape(ctx, cfg.Client, cfg.Stream); err != nil {
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
		c.log.Info("drained by an operator: not joining " + fleet.LeaseGroup + " until the drain is undone")
	} else if sess, err = c.join(ctx); errors.Is(err, errFleetFull) {
		c.log.Warn(err.Error())
	} else if err != nil {
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

// Txns is the gateway's kafka.TxnCoordinator; nil unless Config.Transactions and Config.Log are
// set (transaction state lives on the log only).
func (c *Coordinator) Txns() kafka.TxnCoordinator {
	if !c.cfg.Transactions || !c.cfg.Log {
		return nil
	}
	return txn.NewRouter(directory{c}, c.clk)
}

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
		err = sess.LeaveConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup))
		c.member.Store(-1)
	}
	return err
}

// WaitSeen waits, after Leave, until every other gateway has read this gateway's leaving
// announcement: each reads coordinator_owners every FollowInterval, so two intervals cover one
// read in flight. It returns at once without the log or when no other gateway is live, and
// early when ctx ends.
func (c *Coordinator) WaitSeen(ctx context.Context) {
	if !c.cfg.Log {
		return
	}
	others := false
	now := c.clk.Now()
	c.mu.Lock()
	for node := range c.fv.Announcements() {
		others = others || node != c.cfg.NodeID && c.fv.Alive(node, now)
	}
	c.mu.Unlock()
	if !others {
		return
	}
	t := c.clk.NewTimer(2 * c.cfg.FollowInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	}
}

// WaitHandedOver waits, after Leave, until for every log partition this gateway released
// another live gateway announces a newer claim as serving, as read here every FollowInterval:
// from then on FindCoordinator names the new owner, so a member the leaving gateway told
// NOT_COORDINATOR stops looking for its coordinator before that gateway closes its listener (a
// lookup that dials a closed port ends a franz-go classic member's session). It returns at once
// without the log or when no other gateway is live, and early when ctx ends.
func (c *Coordinator) WaitHandedOver(ctx context.Context) {
	if !c.cfg.Log {
		return
	}
	c.mu.Lock()
	released := c.released
	c.mu.Unlock()
	for {
		now := c.clk.Now()
		others, done := false, true
		c.mu.Lock()
		for node := range c.fv.Announcements() {
			others = others || node != c.cfg.NodeID && c.fv.Alive(node, now)
		}
		for p, cl := range released {
			if cl == 0 {
				continue
			}
			if _, claim, ok := c.fv.Owner(p, now, c.cfg.NodeID); !ok || claim <= cl {
				done = false
			}
		}
		c.mu.Unlock()
		if done || !others {
			return
		}
		t := c.clk.NewTimer(c.cfg.FollowInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
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
	c.nologLoads.close()
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
	node, claim, ok := c.fv.Owner(p, c.clk.Now(), c.cfg.NodeID)
	return Owner{Node: node, Claim: claim}, ok
}

// leaseLost reports whether this gateway, with the log, has no lease session or has not
// confirmed it within HandoverBound: it cannot read the store.
func (c *Coordinator) leaseLost() bool {
	if !c.cfg.Log {
		return false
	}
	s := c.sess.Load()
	if s == nil || s.Err() != nil {
		return true
	}
	return c.clk.Now().Sub(time.Unix(0, c.confirmed.Load())) >= c.cfg.HandoverBound
}

// WriteFenced reports whether this gateway lost the lease it held on the store: its lease
// session failed, or its last confirmation is LeaseBound old, when the store is about to evict it.
// The bridge refuses to write meanwhile (bridge.Config.Fenced): a produce held up by a cut or an
// outage is answered NOT_LEADER_OR_FOLLOWER instead of written once the store is back, after its
// client may have given it up and sent it through another gateway. Before the first lease
// confirmation it reports false, and so it does for a gateway that left the lease on purpose
// (drained, or leaving: a drained gateway goes on serving its clients' produces).
func (c *Coordinator) WriteFenced() bool {
	if !c.cfg.Log || c.leaving.Load() || c.dr.self.Load() {
		return false
	}
	conf := c.confirmed.Load()
	if conf == 0 {
		return false
	}
	if s := c.sess.Load(); s == nil || s.Err() != nil {
		return true
	}
	return c.clk.Now().Sub(time.Unix(0, conf)) >= c.cfg.LeaseBound
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
	gid := wire.NamedID(fleet.LeaseGroup)
	if _, err := sess.CreateConsumerGroup(ctx, c.meta, c.topic, fleet.LeaseGroup); err != nil && !errors.Is(err, wire.ConsumerGroupNameAlreadyExists) {
		_ = sess.Close()
		return nil, fmt.Errorf("coordinator: creating Iggy group %s: %w", fleet.LeaseGroup, err)
	}
	if g, err := sess.GetConsumerGroup(ctx, c.meta, c.topic, gid); err == nil && len(g.Members) >= record.Partitions {
		if err := c.reapDead(ctx, sess, g); err != nil {
			_ = sess.Close()
			return nil, err
		}
	}
	if err := sess.JoinConsumerGroup(ctx, c.meta, c.topic, gid); err != nil {
		_ = sess.Close()
		return nil, fmt.Errorf("coordinator: joining Iggy group %s: %w", fleet.LeaseGroup, err)
	}
	member, err := c.learnMember(ctx, sess)
	if err != nil {
		if errors.Is(err, errFleetFull) {
			_ = sess.LeaveConsumerGroup(ctx, c.meta, c.topic, gid)
		}
		_ = sess.Close()
		return nil, err
	}
	c.member.Store(int64(member))
	c.sess.Store(sess)
	// The lease counts a member once a live announcement of it is read back (fleet.View's
	// LiveMembers), for this gateway as for the others: announce and read it back before the
	// first lease read.
	c.announce(ctx)
	if err := c.readOwners(ctx); err != nil && ctx.Err() == nil {
		c.log.Debug("reading owner announcements after joining", "err", err)
	}
	return sess, nil
}

// reapDead makes room in a full lease group that holds members of gateways that are gone. Iggy
// drops no member whose session ended with an Iggy restart or the loss of the node holding its
// connection, and offers no way to remove another session's membership; so after enough
// restarts the group would be full of dead members and no gateway could join. When the group is
// full and fewer than all of its members are live (fleet.View.LiveMembers, after a fresh read
// of the announcements), this gateway deletes the group and creates it again: every live
// gateway finds its membership gone at its next lease read, stops serving and joins again, so
// the log partitions are handed over once, by claims, as after a departure (no Kafka group
// rebalances). A group full of live members is errFleetFull.
func (c *Coordinator) reapDead(ctx context.Context, sess *iggy.Session, g *wire.ConsumerGroupDetails) error {
	if err := c.readOwners(ctx); err != nil {
		return errFleetFull
	}
	members := logio.MemberIDs(g)
	c.mu.Lock()
	live := len(c.fv.LiveMembers(members, c.clk.Now()))
	c.mu.Unlock()
	if live == len(members) {
		return errFleetFull
	}
	c.log.Warn("lease: "+fleet.LeaseGroup+" is full and holds members of gateways that are gone (Iggy keeps them after a restart); "+
		"creating it anew: every gateway joins again", "members", len(members), "live", live)
	gid := wire.NamedID(fleet.LeaseGroup)
	if err := sess.DeleteConsumerGroup(ctx, c.meta, c.topic, gid); err != nil && !errors.Is(err, wire.ConsumerGroupIDNotFound) && !errors.Is(err, wire.ConsumerGroupNameNotFound) {
		return fmt.Errorf("coordinator: deleting the full Iggy group %s: %w", fleet.LeaseGroup, err)
	}
	if _, err := sess.CreateConsumerGroup(ctx, c.meta, c.topic, fleet.LeaseGroup); err != nil && !errors.Is(err, wire.ConsumerGroupNameAlreadyExists) {
		return fmt.Errorf("coordinator: creating Iggy group %s: %w", fleet.LeaseGroup, err)
	}
	return nil
}

// errFleetFull is a gateway beyond the 16 that can hold leases: it does not join the lease group
// (its member id could not be told, and a member that cannot tell its id would hold partitions
// nobody serves), serves produce and fetch, and tries again every two seconds.
var errFleetFull = fmt.Errorf("coordinator: %d gateways hold the coordinator log's leases, as many as it has partitions: "+
	"this one coordinates no group until one of them leaves (it serves produce and fetch)", record.Partitions)

// learnMember finds the member id of sess in the lease group. Iggy says a caller's partitions
// (sync) and every member's (get), not the caller's id, so: a sync, a get, a sync; when both
// syncs give the same generation, no rebalance came between, and the member whose partitions
// in the get hold the sync's partitions is the caller (members hold disjoint sets, and each of
// up to 16 members holds at least one; gateways never poll, so no hand-off is pending).
func (c *Coordinator) learnMember(ctx context.Context, sess *iggy.Session) (uint32, error) {
	gid := wire.NamedID(fleet.LeaseGroup)
	for range 50 {
		a1, err := sess.SyncConsumerGroup(ctx, c.meta, c.topic, gid)
		if err != nil {
			return 0, fmt.Errorf("coordinator: reading the lease group %s: %w", fleet.LeaseGroup, err)
		}
		g, err := sess.GetConsumerGroup(ctx, c.meta, c.topic, gid)
		if err != nil {
			return 0, fmt.Errorf("coordinator: reading the lease group %s: %w", fleet.LeaseGroup, err)
		}
		a2, err := sess.SyncConsumerGroup(ctx, c.meta, c.topic, gid)
		if err != nil {
			return 0, fmt.Errorf("coordinator: reading the lease group %s: %w", fleet.LeaseGroup, err)
		}
		if a1.Generation == a2.Generation {
			if len(a1.Partitions) == 0 {
				return 0, errFleetFull // Iggy gives each of up to 16 members at least one
			}
			for _, m := range g.Members {
				if holdsAll(m.Partitions, a1.Partitions) {
					return m.ID, nil
				}
			}
		}
		t := c.clk.NewTimer(c.cfg.LeasePoll / 4)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C():
		}
	}
	return 0, fmt.Errorf("coordinator: the lease group %s kept changing; could not tell this gateway's member id", fleet.LeaseGroup)
}

func holdsAll(have, want []uint32) bool {
	for _, p := range want {
		if !slices.Contains(have, p) {
			return false
		}
	}
	return true
}

// leaseLoop reads the assignment every LeasePoll; a broken session drops every partition at
// once and a new session joins again. It judges every answer (leaseWatch): a gateway whose
// confirmations all come late for a while, while another gateway serves, stands down
// (slowlease.go) and takes part again once they all come in time for as long.
func (c *Coordinator) leaseLoop(sess *iggy.Session) {
	defer c.wg.Done()
	t := c.clk.NewTimer(0)
	defer t.Stop()
	backoff := c.cfg.LeasePoll
	// lastOK is when the last lease read that succeeded on sess was sent (zero: none yet).
	var lastOK time.Time
	watch := newLeaseWatch(c.cfg.HandoverBound, c.cfg.standDownAfter)
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
			c.standby.Store(false)
			watch = newLeaseWatch(c.cfg.HandoverBound, c.cfg.standDownAfter)
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
			lastOK = time.Time{}
			watch.newSession()
		}
		sent := c.clk.Now()
		members, err := c.readLease(sess, lastOK.IsZero() || sent.Sub(lastOK) >= c.cfg.LeaseBound)
		switch {
		case err == nil:
			lastOK = sent
			now := c.clk.Now()
			watch.answered(sent, now)
			if c.standby.Load() {
				c.confirmed.Store(sent.UnixNano())
				c.maybeTakePart(&watch, now)
				break
			}
			if watch.slow(now) && c.othersServing(now) {
				c.standDown()
				watch.stoodDown()
				break
			}
			c.mu.Lock()
			live := c.fv.LiveMembers(members, now)
			c.mu.Unlock()
			c.assign(fleet.Held(live, uint32(c.member.Load())), len(members) == 1, sent, now)
		case errors.Is(err, wire.ConsumerGroupMemberNotFound) && sess.Err() == nil:
			// Iggy dropped the membership while the connection lives: a new session joins
			// again and learns its new member id.
			c.dropAll("lease: no longer a member")
			c.member.Store(-1)
			_ = sess.Close()
			c.sess.CompareAndSwap(sess, nil)
			sess = nil
		default:
			if c.ctx.Err() != nil {
				return
			}
			c.log.Warn("lease: session failed; every partition stops", "err", err)
			c.dropAll("lease session failed")
			c.member.Store(-1)
			_ = sess.Close()
			c.sess.CompareAndSwap(sess, nil)
			sess = nil
		}
		t.Reset(c.cfg.LeasePoll)
	}
}

// readLease reads the members of the lease group; fleet.Lease turns them into partitions. A
// membership without this gateway's id is ConsumerGroupMemberNotFound. With confirm, a sync
// first confirms that the caller is still a member: needed after joining and after a gap of
// LeaseBound since the last read that succeeded, when Iggy may have evicted the session as
// silent and given its member id to another gateway. Within LeaseBound of a read Iggy
// received, it cannot have (LeaseBound < 1.2 H, see the package doc), so a read of the members
// alone is one request per LeasePoll.
func (c *Coordinator) readLease(sess *iggy.Session, confirm bool) ([]uint32, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeaseBound)
	defer cancel()
	gid := wire.NamedID(fleet.LeaseGroup)
	if confirm {
		if _, err := sess.SyncConsumerGroup(ctx, c.meta, c.topic, gid); err != nil {
			return nil, err
		}
	}
	sent := c.clk.Now()
	g, err := sess.GetConsumerGroup(ctx, c.meta, c.topic, gid)
	if err != nil {
		return nil, err
	}
	members := c.setMembers(g, sent)
	if !slices.Contains(members, uint32(c.member.Load())) {
		return nil, wire.ConsumerGroupMemberNotFound
	}
	return members, nil
}

// stillAlone reports whether the lease group still has this gateway's member alone, read now.
// A failed read says no.
func (c *Coordinator) stillAlone(ctx context.Context) bool {
	sess := c.sess.Load()
	if sess == nil {
		return false
	}
	g, err := sess.GetConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup))
	return err == nil && len(g.Members) == 1 && int64(g.Members[0].ID) == c.member.Load()
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
// gained partition's HandoverBound wait counts from; alone says this gateway was the lease
// group's only member.
func (c *Coordinator) assign(parts []int, alone bool, sent, received time.Time) {
	var lost, gained []*partition
	c.mu.Lock()
	if c.leaving.Load() || c.dr.self.Load() || c.standby.Load() {
		c.mu.Unlock()
		return
	}
	for p := range record.Partitions {
		want := slices.Contains(parts, p)
		cur := c.parts[p]
		switch {
		case want && cur == nil && sent.Before(c.forgotAt[p]):
			// The answer was asked for before this gateway found the partition taken over;
			// the next read tells.
		case want && cur == nil:
			pt := newPartition(c, p, received)
			pt.alone = alone
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
		// The controller is the holder of log partition 0: the brokers' view changes with it
		// now, not at the next read of the announcements.
		c.brokers.publish()
	}
}

// noteReleased records that this process stopped serving p under claim for good.
func (c *Coordinator) noteReleased(p int, claim uint64) {
	c.mu.Lock()
	c.released[p] = max(c.released[p], claim)
	c.mu.Unlock()
	if c.lateReleases.Load() {
		c.announce(c.ctx)
		return
	}
	c.kickAnnounce()
}

// releasedLocked reports whether the owner of claim prev is known to have stopped serving p for
// good: no claim at all, a claim of this process that it stopped, or a claim whose node's newest
// announcement lists it as released while leaving the fleet or drained. A gateway that released
// p on losing its lease (a new member, a broken session) may win p back and claim it again at
// any moment, so its release does not spare the HandoverBound wait: two gateways claiming p
// from the same log would write the same number twice.
func (c *Coordinator) releasedLocked(p int, prev record.Claim) bool {
	if prev.Number == 0 {
		return true
	}
	if prev.Node == c.cfg.NodeID && c.released[p] == prev.Number {
		return true
	}
	a, ok := c.fv.Announcement(prev.Node)
	return ok && a.Released[p] == prev.Number && (a.Leaving || a.Draining)
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
