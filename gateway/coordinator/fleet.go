package coordinator

import (
	"context"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/twmb/franz-go/pkg/kerr"
)

// announce appends this gateway's announcement to `coordinator_owners`.
func (c *Coordinator) announce(ctx context.Context) {
	a := fleet.Announcement{Node: c.cfg.NodeID, Addr: c.addr, Time: c.clk.Now(), Leaving: c.leaving.Load(),
		Draining: c.dr.self.Load(), Claims: map[int]uint64{}, Version: c.cfg.Version}
	if m := c.member.Load(); m >= 0 {
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
		if err := c.readOwners(c.ctx); err != nil && c.ctx.Err() == nil {
			c.log.Debug("reading owner announcements", "err", err)
		}
		c.promoteAll()
		return true
	})
}

// readOwners reads `coordinator_owners` up to its end as of the call into the view.
func (c *Coordinator) readOwners(ctx context.Context) error {
	c.ownersMu.Lock()
	defer c.ownersMu.Unlock()
	for {
		strategy := wire.PollingStrategy{Kind: wire.PollOffset, Value: c.ownersNext}
		if !c.ownersStarted {
			strategy = wire.PollingStrategy{Kind: wire.PollLast}
		}
		msgs, err := pollMsgs(ctx, c.cfg.Client, iggy.PollRequest{Stream: c.meta, Topic: c.owners, Strategy: strategy, Count: 512})
		if err != nil {
			return err
		}
		c.ownersStarted = true
		c.mu.Lock()
		for _, m := range msgs {
			c.ownersNext = max(c.ownersNext, m.offset+1)
			// Log order decides, as for every reader (fleet.View); a corrupt message is skipped.
			_ = c.fv.ApplyOwners(m.payload)
		}
		c.mu.Unlock()
		if len(msgs) < 512 {
			return nil
		}
	}
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

// brokerView is what the Kafka handlers ask of the fleet (a kafka.Fleet): the live gateways, the
// controller, the drained ones; it answers from the coordinator's fleet.View.
type brokerView struct{ c *Coordinator }

var _ kafka.Fleet = (*brokerView)(nil)

// Fleet returns what the Kafka handlers ask of the fleet.
func (c *Coordinator) Fleet() kafka.Fleet { return c.brokers }

// LiveBrokers lists this gateway, every gateway that owns log partitions, and every gateway
// that announced itself within Config.Live and is not leaving, sorted by node id. Without the
// log it is the configured Brokers.
func (f *brokerView) LiveBrokers() []kafka.Broker {
	c := f.c
	self := kafka.Broker{NodeID: c.cfg.NodeID, Host: c.cfg.Host, Port: c.cfg.Port}
	if !c.cfg.Log {
		out := append([]kafka.Broker{self}, c.cfg.Brokers...)
		slices.SortFunc(out, func(a, b kafka.Broker) int { return int(a.NodeID - b.NodeID) })
		return slices.CompactFunc(out, func(a, b kafka.Broker) bool { return a.NodeID == b.NodeID })
	}
	c.refreshMembers()
	now := c.clk.Now()
	out := []kafka.Broker{self}
	c.mu.Lock()
	for node, a := range c.fv.Announcements() {
		if node == c.cfg.NodeID {
			continue
		}
		if c.fv.Alive(node, now) || departed(a, now) {
			out = append(out, c.brokerLocked(node))
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b kafka.Broker) int { return int(a.NodeID - b.NodeID) })
	return out
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

// departedLocked reports whether node is listed only as departed (leading nothing) now. The
// caller holds c.mu.
func (c *Coordinator) departedLocked(node int32, now time.Time) bool {
	a, ok := c.fv.Announcement(node)
	return ok && !c.fv.Alive(node, now) && departed(a, now)
}

// refreshMembers reads the lease group's membership into the fleet view, so that Metadata lists
// the live gateways as the membership stands a little after the request arrived. A client that
// lost its connection to a crashed gateway asks for Metadata at once, and with the embedded store
// the crashed gateway's membership ends with its connection, but the store notices that
// connection's end no sooner than the client does: a read sent membersSettle after the request
// arrived finds it gone. A client that is answered the crashed gateway instead keeps it as
// leader until its own slow timers fire (franz-go: MetadataMinAge, 5 s; librdkafka: its 1 s scan
// for leaders whose broker is down). One read at a time: a caller that waited for the read in
// flight takes the next one, or the one another waiter sent late enough for it; a read is bounded
// by LeasePoll, and a failed read keeps what was known (no waiter tries again after a read sent
// late enough for it failed).
func (c *Coordinator) refreshMembers() {
	want := c.clk.Now().Add(membersSettle).UnixNano()
	c.membersMu.Lock()
	defer c.membersMu.Unlock()
	if c.membersTried >= want {
		return
	}
	if wait := time.Duration(want - c.clk.Now().UnixNano()); wait > 0 {
		t := c.clk.NewTimer(wait)
		select {
		case <-t.C():
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
	sent := c.clk.Now()
	c.membersTried = sent.UnixNano()
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeasePoll)
	defer cancel()
	g, err := c.cfg.Client.GetConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup))
	if err != nil {
		return
	}
	c.setMembers(g, sent)
}

// membersSettle is how long after a Metadata request arrived the membership read it is answered
// from is sent (refreshMembers): time for the store to end the session of a gateway whose
// connections closed when the client's did.
const membersSettle = 10 * time.Millisecond

// setMembers records a read of the lease group's members, sent at sent, unless a read sent later
// was recorded already, and returns the members read.
func (c *Coordinator) setMembers(g *wire.ConsumerGroupDetails, sent time.Time) []uint32 {
	members := make([]uint32, 0, len(g.Members))
	for _, m := range g.Members {
		members = append(members, m.ID)
	}
	c.mu.Lock()
	if sent.UnixNano() >= c.membersSent {
		c.fv.SetMembers(members)
		c.membersSent = sent.UnixNano()
	}
	c.mu.Unlock()
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

// Controller is the owner of log partition 0 (the lowest node id without the log), -1 while
// none is known.
func (f *brokerView) Controller() int32 {
	if o, ok := f.c.owner(0); ok {
		return o.Node
	}
	return -1
}

// IsController reports whether this gateway is the controller now.
func (f *brokerView) IsController() bool { return f.Controller() == f.c.cfg.NodeID }

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
	p := record.Partition(name)
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
		// No transactions: refused as InitProducerId refuses a transactional id, with an error
		// clients give up on at once (COORDINATOR_NOT_AVAILABLE had Kafka's Java producer
		// retry initTransactions until max.block.ms).
		return -1, "", -1, kerr.TransactionalIDAuthorizationFailed.Code
	default:
		// Share groups are not offered; any other type is unknown, which Kafka refuses so.
		return -1, "", -1, kerr.InvalidRequest.Code
	}
	c := d.c
	o, ok := c.owner(record.Partition(key))
	if !ok {
		return -1, "", -1, kerr.CoordinatorNotAvailable.Code
	}
	c.mu.Lock()
	b := c.brokerLocked(o.Node)
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
