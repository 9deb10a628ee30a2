package coordinator

import "time"

// slowLeaseFactor x HandoverBound is how long every lease confirmation must come late before a
// gateway stands down, and how long they must all come in time before it takes part again
// (package doc, "A slow link to Iggy").
const slowLeaseFactor = 20

// leaseWatch judges the lease reads of one gateway as they are answered: a confirmation that
// arrives at least HandoverBound after the previous one was sent comes late (the lease had
// lapsed by then, so the partitions stopped answering and their appends were fenced meanwhile);
// one that arrives sooner comes in time. The lease loop owns it; it is not safe for concurrent
// use.
//
// Standing down asks that every confirmation come late for slowLeaseFactor x HandoverBound: a
// single one in time starts the count again, so a loaded machine whose reads are late now and
// then never stands down for it. Taking part again asks that the confirmations come in time
// for as long, but tolerates one late in lateTolerance: the same loaded machine, whose lease
// lapses now and then, would otherwise stay out for good, while a link that stays slow makes
// every confirmation late and never comes near.
type leaseWatch struct {
	bound time.Duration // HandoverBound
	after time.Duration // Config.standDownAfter
	// prev is when the last answered read was sent (zero: none on this session yet).
	prev time.Time
	// lateSince is when the lease lapsed before the first of the current run of late
	// confirmations (zero: the last one came in time).
	lateSince time.Time
	// quickSince is when the first in-time confirmation of the current quick stretch arrived
	// (zero: none); answers and late count the confirmations since, and the late ones.
	quickSince    time.Time
	answers, late int
}

// lateTolerance: a quick stretch ends when more than one confirmation in lateTolerance came late.
const lateTolerance = 10

func newLeaseWatch(bound, after time.Duration) leaseWatch {
	return leaseWatch{bound: bound, after: after}
}

// answered records a lease read sent at sent and answered at at.
func (w *leaseWatch) answered(sent, at time.Time) {
	defer func() { w.prev = sent }()
	if w.prev.IsZero() {
		return
	}
	late := at.Sub(w.prev) >= w.bound
	switch {
	case !late:
		w.lateSince = time.Time{}
	case w.lateSince.IsZero():
		w.lateSince = w.prev.Add(w.bound)
	}
	switch {
	case !w.quickSince.IsZero():
		w.answers++
		if late {
			w.late++
		}
		if w.late*lateTolerance > w.answers {
			w.quickSince = time.Time{}
		}
	case !late:
		w.quickSince, w.answers, w.late = at, 1, 0
	}
}

// newSession forgets the previous read: the time a new session took to join is no late
// confirmation. A run of late confirmations goes on across it (a link bad enough to break
// sessions is no better for it).
func (w *leaseWatch) newSession() { w.prev = time.Time{} }

// stoodDown starts the count of a quick stretch anew: only confirmations after the stand-down
// count for taking part again.
func (w *leaseWatch) stoodDown() { w.quickSince = time.Time{} }

// slow reports whether every confirmation has come late for Config.standDownAfter (by default
// slowLeaseFactor x HandoverBound).
func (w *leaseWatch) slow(now time.Time) bool {
	return !w.lateSince.IsZero() && now.Sub(w.lateSince) >= w.after
}

// quick reports whether the confirmations have come in time, but for one in lateTolerance at
// most, for as long.
func (w *leaseWatch) quick(now time.Time) bool {
	return !w.quickSince.IsZero() && now.Sub(w.quickSince) >= w.after
}

// othersServing reports whether another live gateway that is not drained holds a lease
// membership and announces serving at least one log partition: one that can take this
// gateway's partitions and serve them. A gateway whose own link is too slow to serve announces
// none (its partitions keep being fenced and reloaded), so in a fleet whose every link is slow
// nobody stands down for another that serves no better.
//
// The announcements are judged as of the last read of them that succeeded, not now: a gateway
// on a slow link whose reads of coordinator_owners stall for longer than Config.Live has heard
// nothing new, which tells nothing of the others, and taking part again then would take their
// partitions only to load them over the slow link and stand down again (scenario d of
// docs/reliability.md: 7.8 s without a coordinator). A gateway that did go meanwhile is still
// seen: the lease reads' membership leaves it out (fleet.View.Alive).
func (c *Coordinator) othersServing(now time.Time) bool {
	at := c.brokers.heardAt(now)
	c.mu.Lock()
	defer c.mu.Unlock()
	for node, a := range c.fv.Announcements() {
		if node != c.cfg.NodeID && a.HasMember && !a.Draining && len(a.Claims) > 0 && c.fv.Alive(node, at) {
			return true
		}
	}
	return false
}

// standDown is the lease loop's answer to a link too slow to serve: the gateway stops serving
// every partition, waits for the releases within HandoverBound and announces them with no lease
// member. Only members that a live announcement names count in the lease (fleet.View's
// LiveMembers), so every gateway that reads it, this one included, leaves this gateway out of
// the lease and the others take its partitions. It stays a member of kafka-gateways: its
// lease reads go on, judge the link, and keep it from being evicted; and it stays a live broker,
// since an announcement without a member cannot lose it (fleet.View.Alive). Leaving the group
// instead would make it, for everyone who read the membership before its next announcement, a
// gateway that lost its membership, gone from Metadata for a moment: the leaders of its data
// partitions would move away and back while its writes were still on the slow link.
func (c *Coordinator) standDown() {
	c.log.Warn("lease: every confirmation came late for a while and other gateways serve; standing down: "+
		"every coordinator partition is released until the confirmations come in time again",
		"for", c.cfg.standDownAfter)
	c.standby.Store(true)
	c.releaseAll(c.ctx, "lease confirmations late")
}

// maybeTakePart ends a stand-down once every confirmation has come in time for as long as it
// took to stand down, or at once when no other gateway serves any more: the gateway announces
// its member again, and the lease counts it from the moment each gateway reads that, as for a
// gateway that joins.
func (c *Coordinator) maybeTakePart(w *leaseWatch, now time.Time) {
	quick, alone := w.quick(now), !c.othersServing(now)
	if !quick && !alone {
		return
	}
	c.log.Info("lease: taking part again", "confirmations_in_time", quick, "no_other_gateway_serves", alone)
	*w = newLeaseWatch(c.cfg.HandoverBound, c.cfg.standDownAfter)
	c.standby.Store(false)
	c.announce(c.ctx)
}
