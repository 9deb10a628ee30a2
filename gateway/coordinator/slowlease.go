package coordinator

import (
	"context"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// slowLeaseFactor x HandoverBound is how long every lease confirmation must come late before a
// gateway stands down, and how long they must all come in time before it takes part again
// (package doc, "A slow link to Iggy").
const slowLeaseFactor = 20

// leaseWatch judges the lease reads of one gateway as they are answered: a confirmation that
// arrives at least HandoverBound after the previous one was sent comes late (the lease had
// lapsed by then, so the partitions stopped answering and their appends were fenced meanwhile);
// one that arrives sooner comes in time. It keeps when the current run of late confirmations
// began (the moment the lease first lapsed) and when the current run of in-time ones began.
// The lease loop owns it; it is not safe for concurrent use.
type leaseWatch struct {
	bound time.Duration // HandoverBound
	// prev is when the last answered read was sent (zero: none on this session yet).
	prev time.Time
	// lateSince is when the lease lapsed before the first of the current run of late
	// confirmations; inTimeSince is when the first of the current run of in-time ones arrived.
	// Zero: no such run.
	lateSince, inTimeSince time.Time
}

func newLeaseWatch(bound time.Duration) leaseWatch { return leaseWatch{bound: bound} }

// answered records a lease read sent at sent and answered at at.
func (w *leaseWatch) answered(sent, at time.Time) {
	if !w.prev.IsZero() {
		if at.Sub(w.prev) >= w.bound {
			w.inTimeSince = time.Time{}
			if w.lateSince.IsZero() {
				w.lateSince = w.prev.Add(w.bound)
			}
		} else {
			w.lateSince = time.Time{}
			if w.inTimeSince.IsZero() {
				w.inTimeSince = at
			}
		}
	}
	w.prev = sent
}

// newSession forgets the previous read: the time a new session took to join is no late
// confirmation. A run of late confirmations goes on across it (a link bad enough to break
// sessions is no better for it).
func (w *leaseWatch) newSession() { w.prev = time.Time{} }

// slow reports whether every confirmation has come late for slowLeaseFactor x HandoverBound.
func (w *leaseWatch) slow(now time.Time) bool {
	return !w.lateSince.IsZero() && now.Sub(w.lateSince) >= slowLeaseFactor*w.bound
}

// quick reports whether every confirmation has come in time for slowLeaseFactor x
// HandoverBound.
func (w *leaseWatch) quick(now time.Time) bool {
	return !w.inTimeSince.IsZero() && now.Sub(w.inTimeSince) >= slowLeaseFactor*w.bound
}

// othersServing reports whether another live gateway that is not drained holds a lease
// membership and announces serving at least one log partition: one that can take this
// gateway's partitions and serve them. A gateway whose own link is too slow to serve announces
// none (its partitions keep being fenced and reloaded), so in a fleet whose every link is slow
// nobody stands down for another that serves no better.
func (c *Coordinator) othersServing(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for node, a := range c.fv.Announcements() {
		if node != c.cfg.NodeID && a.HasMember && !a.Draining && len(a.Claims) > 0 && c.fv.Alive(node, now) {
			return true
		}
	}
	return false
}

// standDown is the lease loop's answer to a link too slow to serve: what a drain does (stop
// serving, wait for the releases within HandoverBound, announce them, leave `kafka-gateways`),
// but the session stays open: the lease loop goes on reading the group's members through it,
// to judge the link, until it takes part again.
func (c *Coordinator) standDown(sess *iggy.Session) {
	c.dr.leaveMu.Lock()
	defer c.dr.leaveMu.Unlock()
	if c.leaving.Load() {
		return
	}
	c.log.Warn("lease: every confirmation came late for a while and other gateways serve; standing down: "+
		"every coordinator partition is released and "+fleet.LeaseGroup+" left until the link is quick again",
		"for", slowLeaseFactor*c.cfg.HandoverBound)
	c.releaseAll(c.ctx, "lease confirmations late")
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeaseBound)
	defer cancel()
	if err := sess.LeaveConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup)); err != nil && c.ctx.Err() == nil {
		// The session then breaks or stays a member: the lease loop's next read tells.
		c.log.Warn("lease: leaving "+fleet.LeaseGroup+" to stand down failed", "err", err)
	}
	c.member.Store(-1)
	c.kickAnnounce()
}

// readMembers is a stood-down gateway's lease read: the group's members, read on its session
// (it is not one of them), which judges the link and keeps the fleet view's membership current.
func (c *Coordinator) readMembers(sess *iggy.Session) ([]uint32, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.LeaseBound)
	defer cancel()
	sent := c.clk.Now()
	g, err := sess.GetConsumerGroup(ctx, c.meta, c.topic, wire.NamedID(fleet.LeaseGroup))
	if err != nil {
		return nil, err
	}
	return c.setMembers(g, sent), nil
}
