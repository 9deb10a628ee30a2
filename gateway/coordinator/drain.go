package coordinator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// drainState is what a gateway knows of `coordinator_drains`.
type drainState struct {
	// readMu orders the reads of the topic (Start, then the follower).
	readMu sync.Mutex
	// self is whether this gateway's drain stands (Coordinator.fv), read without a lock by the
	// lease and announce loops.
	self atomic.Bool
	// leaveMu orders a drain's release of the lease with Leave's, so a gateway leaves
	// `kafka-gateways` once.
	leaveMu sync.Mutex
}

// readDrains reads `coordinator_drains` from where the last read ended up to its end and
// updates the drained set. A change of this gateway's own state makes the lease loop act on it
// at once.
func (c *Coordinator) readDrains(ctx context.Context) error {
	c.dr.readMu.Lock()
	defer c.dr.readMu.Unlock()
	msgs, err := readFeed(ctx, c.cfg.Client, c.drainsFeed)
	c.mu.Lock()
	for _, m := range msgs {
		// Log order decides (fleet.View): the latest request of a node wins whatever its
		// writer's clock.
		if err := c.fv.ApplyDrains(m.Offset, m.Payload); err != nil {
			c.log.Warn("drain request skipped", "offset", m.Offset, "err", err)
		}
	}
	self := c.fv.DrainStands(c.cfg.NodeID)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.brokers.publish()
	if was := c.dr.self.Swap(self); was != self {
		if self {
			c.log.Info("drained by an operator: releasing every coordinator partition; produce and fetch go on")
		} else {
			c.log.Info("drain undone by an operator: joining " + fleet.LeaseGroup + " again")
		}
		c.kickLease()
		c.kickAnnounce()
	}
	return nil
}

// followDrains reads `coordinator_drains` every FollowInterval.
func (c *Coordinator) followDrains() {
	c.every(c.cfg.FollowInterval, c.cfg.FollowInterval, nil, func() bool {
		if err := c.readDrains(c.ctx); err != nil && c.ctx.Err() == nil {
			c.log.Debug("reading drain requests", "err", err)
		}
		return true
	})
}

// releaseAll stops serving every partition, waits (within HandoverBound) until each manager is
// closed and its appends in flight ended, and announces the releases: the gateway that gains a
// partition reads coordinator_owners after Iggy gave it the partition, finds the release and
// serves as soon as its claim is read back. Leave and a drain share it. A release that lands
// after the wait is announced when it lands: by the announce loop for a drain, by noteReleased
// for a leave, whose announce loop has ended.
func (c *Coordinator) releaseAll(ctx context.Context, why string) {
	lost := c.dropAll(why)
	t := c.clk.NewTimer(c.cfg.HandoverBound)
	defer t.Stop()
wait:
	for _, pt := range lost {
		select {
		case <-pt.done:
		case <-t.C():
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	if c.leaving.Load() {
		c.lateReleases.Store(true)
	}
	c.announce(ctx)
}

// drainSelf is the lease loop's answer to a drain of this gateway: what Leave does (release,
// announce, leave `kafka-gateways`), but the gateway stays up, announces itself as draining and
// ends its lease session so that it does not rejoin until the drain is undone.
func (c *Coordinator) drainSelf(sess *iggy.Session) {
	c.dr.leaveMu.Lock()
	defer c.dr.leaveMu.Unlock()
	defer func() {
		_ = sess.Close()
		c.sess.CompareAndSwap(sess, nil)
	}()
	if c.leaving.Load() {
		return
	}
	c.releaseAll(c.ctx, "drained")
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeaseBound)
	defer cancel()
	if err := sess.LeaveConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup)); err != nil && c.ctx.Err() == nil {
		// Closing the session ends the membership too, later on an Iggy cluster.
		c.log.Warn("drain: leaving "+fleet.LeaseGroup+" failed; the session is closed", "err", err)
	}
	c.member.Store(-1)
	c.kickAnnounce()
	c.log.Info("drained: no coordinator partition served here until the drain is undone")
}

// startDrained reports, at Start, whether an operator's drain stands for this gateway; it reads
// the whole topic first, so a drained gateway that restarts does not join.
func (c *Coordinator) startDrained(ctx context.Context) (bool, error) {
	if err := c.readDrains(ctx); err != nil {
		return false, fmt.Errorf("coordinator: reading %s/%s: %w", fleet.MetaStream(c.cfg.Stream), fleet.DrainsTopic, err)
	}
	return c.dr.self.Load(), nil
}
