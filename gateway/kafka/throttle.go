package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
)

// Client quotas are enforced as a Kafka broker enforces them (KIP-13, KIP-124, KIP-219),
// with the rule and the rates in gateway/quota:
//
//   - Every request but ApiVersions and the SASL ones records its handler time against
//     request_percentage (a Fetch's long poll left out, as Kafka leaves out purgatory time);
//     Produce records its request's bytes against producer_byte_rate, Fetch its answer's
//     bytes against consumer_byte_rate.
//   - Over a quota, the answer carries the longest throttle in throttle_time_ms (every
//     response type that has the field). A Fetch over a quota answers no records: its bytes
//     are taken back from the rate, and the answer holds no topics.
//   - The connection is muted for the throttle: its next request is not read until the
//     throttle has passed. For the request versions whose client throttles itself after the
//     answer (KIP-219: Produce v6+, Fetch v8+, and the like; kmsg's ThrottleResponse says
//     which), the answer goes out at once; for older versions the answer is held for the
//     throttle, as Kafka holds it.
//   - A connection under any quota is read one request at a time, as Kafka reads every
//     connection: its next request is read once this one is recorded, so a pipelining
//     client's requests are each measured after the throttle of the one before. Other
//     connections are read up to MaxInFlight ahead.

// anonymous is the quota user of a connection that did not authenticate, Kafka's name for it.
const anonymous = "ANONYMOUS"

// quotaNames are the user and client id req is measured as.
func quotaNames(req *request) (user, clientID string) {
	user = req.user
	if user == "" {
		user = anonymous
	}
	if req.clientID != nil {
		clientID = *req.clientID
	}
	return user, clientID
}

// quotaLimited reports whether req's connection is read one request at a time: a quota
// applies to it.
func (c *conn) quotaLimited(req *request) bool {
	q := c.s.cfg.Quotas
	if q == nil || exemptFromQuotas(req.key) {
		return false
	}
	return q.Limited(quotaNames(req))
}

// exemptFromQuotas: requests that are answered before a connection has a principal.
func exemptFromQuotas(key int16) bool { return preAuthKey(key) }

// requestQuota records req's handler time and, for a Produce, its bytes, and returns the
// longest throttle they call for.
func (c *conn) requestQuota(q *quota.Manager, req *request, busy time.Duration) time.Duration {
	user, cid := quotaNames(req)
	d := q.Record(quota.RequestPercentage, user, cid, busy.Seconds()*100)
	if req.key == produceKey {
		d = max(d, q.Record(quota.ProducerByteRate, user, cid, float64(req.size)))
	}
	return d
}

// throttleFetch records a Fetch answer's bytes (sl, encoded) and, when the fetch is throttled
// for them or for reqThrottle, answers in sl instead with no records and the throttle.
func (c *conn) throttleFetch(q *quota.Manager, req *request, resp *kmsg.FetchResponse, sl *slot, reqThrottle time.Duration) time.Duration {
	user, cid := quotaNames(req)
	size := float64(sl.size())
	d := max(reqThrottle, q.Record(quota.ConsumerByteRate, user, cid, size))
	if d <= 0 {
		return 0
	}
	q.Unrecord(quota.ConsumerByteRate, user, cid, size)
	sl.releaseBufs()
	putBuf(sl.frame)
	empty := kmsg.NewPtrFetchResponse()
	empty.Version = resp.Version
	empty.ThrottleMillis = throttleMillis(d)
	sl.frame = c.encode(req, empty)
	return d
}

func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}

// enforceQuotas runs after req's handler: it records req against the quotas, sets the
// answer's throttle time, encodes the answer into sl, and mutes the connection for the
// throttle (sl.delay holds the answer back for clients that do not throttle themselves).
// Without quotas it only encodes.
func (c *conn) enforceQuotas(req *request, resp kmsg.Response, sl *slot, busy time.Duration) {
	q := c.s.cfg.Quotas
	if q == nil || exemptFromQuotas(req.key) {
		if resp != nil {
			sl.frame = c.encodeSlot(req, resp, sl)
		}
		return
	}
	d := c.requestQuota(q, req, busy)
	after := true
	switch r := resp.(type) {
	case nil: // acks=0: nothing to answer, the mute alone slows the producer
	case *kmsg.FetchResponse:
		sl.frame = c.encodeSlot(req, resp, sl)
		d = c.throttleFetch(q, req, r, sl, d)
		_, after = r.Throttle()
	default:
		if tr, ok := resp.(kmsg.ThrottleResponse); ok && d > 0 {
			resp.(kmsg.SetThrottleResponse).SetThrottle(throttleMillis(d))
			_, after = tr.Throttle()
		}
		sl.frame = c.encodeSlot(req, resp, sl)
	}
	if d <= 0 {
		return
	}
	if !after {
		sl.delay = d
	}
	c.mute(d)
	if o := c.s.cfg.Observer; o != nil {
		user, cid := quotaNames(req)
		o.ClientThrottled(user, cid, d)
	}
}

// mute keeps the reader from reading the next request for d from now.
func (c *conn) mute(d time.Duration) {
	until := c.s.clock.Now().Add(d).UnixNano()
	for {
		cur := c.mutedUntil.Load()
		if cur >= until || c.mutedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// waitMuted waits out a mute; false when the connection closes meanwhile. A connection told
// to stop reading (shutdown) does not wait: what it already read is answered.
func (c *conn) waitMuted() bool {
	for {
		d := time.Duration(c.mutedUntil.Load() - c.s.clock.Now().UnixNano())
		if d <= 0 {
			return true
		}
		t := c.s.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-c.stopped:
			t.Stop()
			return true
		case <-c.ctx.Done():
			t.Stop()
			return false
		}
	}
}

// holdAnswer waits sl.delay before the writer sends sl; false when the connection closes
// meanwhile. A server that begins to shut down sends held answers at once, as it answers long
// polls.
func (c *conn) holdAnswer(sl *slot) bool {
	if sl.delay <= 0 {
		return true
	}
	t := c.s.clock.NewTimer(sl.delay)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-c.s.draining:
		return true
	case <-c.ctx.Done():
		return false
	}
}
