package coordinator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// announce appends this gateway's announcement to `coordinator_owners`.
func (c *Coordinator) announce(ctx context.Context) {
	c.announceMu.Lock()
	defer c.announceMu.Unlock()
	a := fleet.Announcement{Node: c.cfg.NodeID, Addr: c.addr, Time: c.clk.Now(), Leaving: c.leaving.Load(),
		Draining: c.dr.self.Load(), Claims: map[int]uint64{}, Version: c.cfg.Version}
	// A gateway standing down names no member, so that no lease counts it (slowlease.go).
	if m := c.member.Load(); m >= 0 && !c.standby.Load() {
		a.Member, a.HasMember = uint32(m), true
	}
	c.mu.Lock()
	for p, pt := range c.parts {
		if pt != nil && pt.serving() {
			a.Claims[p] = pt.claim.Load()
		}
	}
	for p, cl := range c.released {
		if cl != 0 {
			if a.Released == nil {
				a.Released = map[int]uint64{}
			}
			a.Released[p] = cl
		}
	}
	c.mu.Unlock()
	if _, err := c.cfg.Client.SendMessages(ctx, c.meta, c.owners, 0, []iggy.Message{{Payload: fleet.EncodeAnnouncement(a)}}); err != nil && ctx.Err() == nil {
		c.log.Warn("owner announcement failed", "err", err)
	}
}

func (c *Coordinator) announceLoop() {
	c.every(0, c.cfg.AnnounceInterval, c.announceNow, func() bool {
		if c.leaving.Load() {
			return false
		}
		c.announce(c.ctx)
		c.eachPartition((*partition).maybeCheckpoint)
		return true
	})
}

// every runs round after first, then period after each round ends, and at once whenever wake
// fires (a nil wake never does), until the coordinator stops or round returns false. Every
// background loop of the coordinator is one of these, so each is timed by the Config's clock.
func (c *Coordinator) every(first, period time.Duration, wake <-chan struct{}, round func() bool) {
	defer c.wg.Done()
	t := c.clk.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C():
		case <-wake:
		}
		if !round() {
			return
		}
		t.Reset(period)
	}
}

// eachPartition calls fn for every partition this gateway holds now.
func (c *Coordinator) eachPartition(fn func(*partition)) {
	c.mu.Lock()
	parts := c.parts
	c.mu.Unlock()
	for _, pt := range parts {
		if pt != nil {
			fn(pt)
		}
	}
}

// followOwners reads `coordinator_owners` from its recent end on, every FollowInterval. A gap
// (retention) is harmless here: each announcement is a whole statement of its node.
func (c *Coordinator) followOwners() {
	c.every(0, c.cfg.FollowInterval, nil, func() bool {
		sent := c.clk.Now()
		err := c.readOwners(c.ctx)
		if err != nil && c.ctx.Err() == nil {
			c.log.Debug("reading owner announcements", "err", err)
		}
		c.promoteAll()
		c.brokers.ownersRead(sent, err)
		return true
	})
}

// readOwners reads `coordinator_owners` up to its end as of the call into the view.
func (c *Coordinator) readOwners(ctx context.Context) error {
	c.ownersMu.Lock()
	defer c.ownersMu.Unlock()
	msgs, err := readFeed(ctx, c.cfg.Client, c.ownersFeed)
	c.mu.Lock()
	for _, m := range msgs {
		// Log order decides, as for every reader (fleet.View); a corrupt message is skipped.
		_ = c.fv.ApplyOwners(m.Payload)
	}
	if len(msgs) > 0 && c.ownersRead != nil {
		close(c.ownersRead)
		c.ownersRead = nil
	}
	c.mu.Unlock()
	return err
}

// readFeed reads f up to its end and copies the messages out, so that they are applied under
// the coordinator's lock without holding it through the reads.
func readFeed(ctx context.Context, cl logio.Poller, f *logio.Feed) ([]logio.Msg, error) {
	var msgs []logio.Msg
	err := f.Read(ctx, cl, func(off uint64, b []byte) {
		msgs = append(msgs, logio.Msg{Offset: off, Payload: append([]byte(nil), b...)})
	})
	return msgs, err
}

// promoteAll lets every waiting partition whose wait is over, or whose previous owner released
// it, serve.
func (c *Coordinator) promoteAll() { c.eachPartition((*partition).promote) }

// tailLoop reads every owned partition's new records every TailPoll (Iggy has no waiting read,
// so this is the tail) and lets waiting partitions serve when their time comes.
func (c *Coordinator) tailLoop() {
	c.every(c.cfg.TailPoll, c.cfg.TailPoll, nil, func() bool {
		c.eachPartition(func(pt *partition) {
			pt.promote()
			pt.tail()
		})
		return true
	})
}

// brokerView is what the Kafka handlers ask of the fleet (a kafka.Fleet): one kafka.FleetView,
// made from the coordinator's fleet.View whenever the follow loops read something or time moves
// a gateway out of it (followOwners' every round), and replaced only when it differs. A request
// reads it with one atomic load: no lock, no read of Iggy.
type brokerView struct {
	c   *Coordinator
	cur atomic.Pointer[kafka.FleetView]

	// changes counts the views published (ViewChanges).
	changes atomic.Uint64

	// mu orders the publishes, so a view made from older state never replaces a newer one.
	mu sync.Mutex
	// readAt is when the last read of coordinator_owners that succeeded was sent; outage is
	// set while the reads after it fail. The view is then made as of readAt (see publish).
	readAt time.Time
	outage bool
}

var _ kafka.Fleet = (*brokerView)(nil)

func newBrokerView(c *Coordinator) *brokerView {
	f := &brokerView{c: c}
	f.publish()
	return f
}

// Fleet returns what the Kafka handlers ask of the fleet.
func (c *Coordinator) Fleet() kafka.Fleet { return c.brokers }

// ViewChanges counts the changes of this gateway's view of the fleet so far: each may have moved
// partition leaders (Metadata's) from one gateway to another. The bridge checks its producer
// cache against the store after one (bridge.Config.LeadersMoved).
func (c *Coordinator) ViewChanges() uint64 { return c.brokers.changes.Load() }

// View is the fleet as last published, StoreLost as well while the lease is not fresh: a read
// of coordinator_owners cut off by the network fails only when its request times out, the lease
// says so within HandoverBound.
func (f *brokerView) View() *kafka.FleetView {
	v := f.cur.Load()
	if !v.StoreLost && f.c.leaseLost() {
		lost := *v
		lost.StoreLost = true
		return &lost
	}
	return v
}

// ownersRead records how a read of coordinator_owners sent at sent ended, then publishes.
func (f *brokerView) ownersRead(sent time.Time, err error) {
	f.mu.Lock()
	if err == nil {
		f.readAt, f.outage = sent, false
	} else {
		f.outage = true
	}
	f.mu.Unlock()
	f.publish()
}

// heardAt is when the last read of coordinator_owners that succeeded was sent, or now before
// the first one. It takes f.mu, so a caller must not hold c.mu (publish takes them in that order).
func (f *brokerView) heardAt(now time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readAt.IsZero() || f.readAt.After(now) {
		return now
	}
	return f.readAt
}

// publish makes the view of the fleet as it stands and makes it current if it differs from the
// current one.
//
// Live are this gateway, every gateway that announced itself within Config.Live and is not
// leaving, and every gateway that announced it is leaving less than departedListed ago, sorted
// by node id; Draining are those an operator drained and those leaving. Without the log Live is
// the configured Brokers and this gateway. The controller is the owner of log partition 0.
//
// During a store outage (the reads of coordinator_owners fail) no gateway can announce itself,
// so the view is made as of the last read that succeeded: the gateways live then stay live, with
// the membership last read, until a read succeeds again, and the view says StoreLost. A gateway that crashed meanwhile is left
// out by the Kafka listener, which checks that each listed gateway accepts connections (reach.go
// of package kafka); one that stalled stays listed until the store is back.
func (f *brokerView) publish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	at := f.c.clk.Now()
	if f.outage && !f.readAt.IsZero() {
		at = f.readAt
	}
	v := f.viewAt(at)
	v.StoreLost = f.outage
	if old := f.cur.Load(); old != nil && slices.Equal(old.Live, v.Live) && slices.Equal(old.Draining, v.Draining) && old.Controller == v.Controller && old.StoreLost == v.StoreLost {
		return
	}
	f.changes.Add(1)
	f.cur.Store(v)
}

// viewAt makes the view of the fleet as the announcements and membership read so far make it at
// the moment at, by publish's rules.
func (f *brokerView) viewAt(at time.Time) *kafka.FleetView {
	c := f.c
	self := kafka.Broker{NodeID: c.cfg.NodeID, Host: c.cfg.Host, Port: c.cfg.Port}
	v := &kafka.FleetView{Live: []kafka.Broker{self}, Controller: -1}
	if o, ok := c.owner(0); ok {
		v.Controller = o.Node
	}
	if !c.cfg.Log {
		v.Live = append(v.Live, c.cfg.Brokers...)
	} else {
		c.mu.Lock()
		for node, a := range c.fv.Announcements() {
			alive := c.fv.Alive(node, at)
			if node != c.cfg.NodeID && (alive || departed(a, at)) {
				v.Live = append(v.Live, c.brokerLocked(node))
			}
			if !alive && departed(a, at) {
				v.Draining = append(v.Draining, node)
			}
		}
		v.Draining = append(v.Draining, c.fv.DrainedSet()...)
		c.mu.Unlock()
	}
	slices.SortFunc(v.Live, func(a, b kafka.Broker) int { return int(a.NodeID - b.NodeID) })
	v.Live = slices.CompactFunc(v.Live, func(a, b kafka.Broker) bool { return a.NodeID == b.NodeID })
	slices.Sort(v.Draining)
	v.Draining = slices.Compact(v.Draining)
	return v
}

// departedListed is how long a gateway that announced it is leaving (SIGTERM) stays in
// Metadata's broker list, leading nothing (Draining), counted from that announcement, so every
// gateway of the fleet lists and drops it at the same moments. Kafka's controlled shutdown moves
// a broker's leaderships first and removes the broker from metadata later: librdkafka, answered
// both at once, decommissions the broker while its partitions are migrating away from it, leaves
// some of them with no broker and finds them a leader only in its next 1 s scan. Listed a little
// longer, the broker leads nothing in the clients' view by the time it disappears from it. A
// crashed gateway is not listed on: clients that cannot reach it would try it for requests to
// any broker (franz-go's metadata), and a crash leaves no time to move leaderships first anyway.
const departedListed = 2 * time.Second

// departed reports whether a, an announcement of a gateway that is not alive, still lists it as
// departed at now.
func departed(a fleet.Announcement, now time.Time) bool {
	return a.Leaving && now.Sub(a.Time) < departedListed
}

// setMembers records a read of the lease group's members, sent at sent, unless a read sent later
// was recorded already, publishes the view it makes, and returns the members read.
func (c *Coordinator) setMembers(g *wire.ConsumerGroupDetails, sent time.Time) []uint32 {
	members := logio.MemberIDs(g)
	c.mu.Lock()
	if sent.UnixNano() >= c.membersSent {
		c.fv.SetMembers(members)
		c.membersSent = sent.UnixNano()
	}
	c.mu.Unlock()
	c.brokers.publish()
	return members
}

// brokerLocked is the address of node: from Config.Brokers, else from its announcement.
func (c *Coordinator) brokerLocked(node int32) kafka.Broker {
	if node == c.cfg.NodeID {
		return kafka.Broker{NodeID: node, Host: c.cfg.Host, Port: c.cfg.Port}
	}
	for _, b := range c.cfg.Brokers {
		if b.NodeID == node {
			return b
		}
	}
	b := kafka.Broker{NodeID: node}
	if a, ok := c.fv.Announcement(node); ok {
		if h, p, err := net.SplitHostPort(a.Addr); err == nil {
			port, _ := strconv.Atoi(p)
			b.Host, b.Port = h, int32(port)
		}
	}
	return b
}

// directory answers for the router which manager serves a group here.
type directory struct{ c *Coordinator }

func (d directory) Manager(name string) (*group.Manager, int16) {
	c := d.c
	if !c.cfg.Log {
		if c.nolog == nil {
			return nil, kerr.NotCoordinator.Code
		}
		if err := c.nologRestore(name); err != nil {
			c.log.Warn("loading a group's Iggy offsets", "group", name, "err", err)
			return nil, kerr.CoordinatorLoadInProgress.Code
		}
		return c.nolog, 0
	}
	return d.LogPartition(record.Partition(name))
}

// LogPartition is the txn.Directory's: the group manager of log partition p when this gateway
// serves it, else the code a group request would get.
func (d directory) LogPartition(p int) (*group.Manager, int16) {
	c := d.c
	if !c.cfg.Log || p < 0 || p >= record.Partitions {
		return nil, kerr.NotCoordinator.Code
	}
	c.mu.Lock()
	pt := c.parts[p]
	c.mu.Unlock()
	if pt == nil {
		return nil, kerr.NotCoordinator.Code
	}
	pt.promote()
	switch pt.status.Load() {
	case stLoading, stWaiting:
		return nil, kerr.CoordinatorLoadInProgress.Code
	case stServing:
		if !pt.serving() || !c.leaseFresh() {
			return nil, kerr.NotCoordinator.Code
		}
		pt.mu.Lock()
		m := pt.mgr
		pt.mu.Unlock()
		if m == nil || !m.Serving() {
			return nil, kerr.NotCoordinator.Code
		}
		return m, 0
	}
	return nil, kerr.NotCoordinator.Code
}

// Peer is the txn.Directory's: req sent to the gateway that serves log partition p, at the
// address its newest announcement gives (Config.Peer).
func (d directory) Peer(ctx context.Context, p int, req kmsg.Request) (kmsg.Response, error) {
	c := d.c
	if c.cfg.Peer == nil {
		return nil, errors.New("coordinator: no way to reach another gateway")
	}
	o, ok := c.owner(p)
	if !ok {
		return nil, fmt.Errorf("coordinator: no gateway is known to serve log partition %d", p)
	}
	if o.Node == c.cfg.NodeID {
		return nil, fmt.Errorf("coordinator: log partition %d is this gateway's and not served yet", p)
	}
	c.mu.Lock()
	a, ok := c.fv.Announcement(o.Node)
	c.mu.Unlock()
	if !ok || a.Addr == "" {
		return nil, fmt.Errorf("coordinator: node %d, which serves log partition %d, announced no address", o.Node, p)
	}
	return c.cfg.Peer(ctx, a.Addr, req)
}

// Mark is the txn.Directory's: a marker written on a data partition (Config.Mark).
func (d directory) Mark(ctx context.Context, topic string, partition int32, producerID int64, epoch int16, commit bool) error {
	if d.c.cfg.Mark == nil {
		return kerr.UnknownServerError
	}
	return d.c.cfg.Mark(ctx, topic, partition, producerID, epoch, commit)
}

// Txns is the txn.Directory: the transaction manager of the id's log partition when this gateway
// serves it, else the code a group request would get.
func (d directory) Txns(id string) (*txn.Manager, int16) {
	if _, code := d.Manager(id); code != 0 {
		return nil, code
	}
	d.c.mu.Lock()
	pt := d.c.parts[record.Partition(id)]
	d.c.mu.Unlock()
	if pt == nil {
		return nil, kerr.NotCoordinator.Code
	}
	pt.mu.Lock()
	tm := pt.txns
	pt.mu.Unlock()
	if tm == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return tm, 0
}

// AllTxns lists the transaction managers of every partition this gateway serves.
func (d directory) AllTxns() []*txn.Manager {
	var out []*txn.Manager
	for p := range record.Partitions {
		if m, code := d.Txns(partitionName(p)); code == 0 {
			out = append(out, m)
		}
	}
	return out
}

func (d directory) Managers() []*group.Manager {
	c := d.c
	if !c.cfg.Log {
		if c.nolog == nil {
			return nil
		}
		return []*group.Manager{c.nolog}
	}
	var out []*group.Manager
	for p := range record.Partitions {
		if m, code := d.Manager(partitionName(p)); code == 0 {
			out = append(out, m)
		}
	}
	return out
}

func (d directory) Coordinator(key string, keyType int8) (node int32, host string, port int32, code int16) {
	switch keyType {
	case 0:
	case 1:
		if !d.c.cfg.Transactions || !d.c.cfg.Log {
			// No transactions: refused as InitProducerId refuses a transactional id, with an
			// error clients give up on at once (COORDINATOR_NOT_AVAILABLE had Kafka's Java
			// producer retry initTransactions until max.block.ms).
			return -1, "", -1, kerr.TransactionalIDAuthorizationFailed.Code
		}
		// A transactional id lives in the log partition its hash names, as a group does.
	default:
		// Share groups are not offered; any other type is unknown, which Kafka refuses so.
		return -1, "", -1, kerr.InvalidRequest.Code
	}
	c := d.c
	p := record.Partition(key)
	o, known := c.owner(p)
	node = o.Node
	c.mu.Lock()
	if !known && c.cfg.Log {
		// No gateway serves p now: every owner stopped when its lease went unconfirmed for
		// HandoverBound (a loaded machine), or the owner is moving. Name the gateway the lease
		// rule gives p, as Kafka names a coordinator that is still loading: it answers
		// COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, which every client retries, while
		// COORDINATOR_NOT_AVAILABLE from FindCoordinator ends a franz-go producer's transaction
		// (its AddPartitionsToTxn takes a coordinator lookup's error as final).
		now := c.clk.Now()
		if m, ok := c.fv.LeaseMember(p, now); ok {
			node, known = c.fv.MemberNode(m, now)
			// The membership is as last read, and a gateway that left the lease (drained,
			// leaving) reads it no more: it never names itself then. Another gateway that left
			// announces no member or that it leaves, so the lease gives it nothing.
			if node == c.cfg.NodeID {
				known = known && int64(m) == c.member.Load() && !c.leaving.Load() && !c.dr.self.Load()
			}
		}
	}
	var b kafka.Broker
	if known {
		b = c.brokerLocked(node)
	}
	c.mu.Unlock()
	if b.Host == "" {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	return b.NodeID, b.Host, b.Port, 0
}

// partitionNames holds one group name per log partition, so Managers can ask Manager by name.
var partitionNames = func() [record.Partitions]string {
	var out [record.Partitions]string
	found := 0
	for i := 0; found < record.Partitions; i++ {
		n := "p" + strconv.Itoa(i)
		if p := record.Partition(n); out[p] == "" {
			out[p] = n
			found++
		}
	}
	return out
}()

func partitionName(p int) string { return partitionNames[p] }
