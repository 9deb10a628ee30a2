package coordinator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// franzRetried are the codes franz-go v1.22's transactional producer retries in an
// AddPartitionsToTxn answer (kgo's addPartitionsToTxnSharder.onResp drops the cached
// coordinator and asks again; CONCURRENT_TRANSACTIONS is retried in place). A FindCoordinator
// answer with any error code is not retried there: the sharder returns it as the request's
// error, and the producer fails every buffered record with it (sink.go, "fatal
// AddPartitionsToTxn error").
var franzRetried = []int16{kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code,
	kerr.CoordinatorNotAvailable.Code, kerr.ConcurrentTransactions.Code}

// Every gateway of a fleet finds its lease confirmation older than HandoverBound at once (a
// loaded machine), and the owner of a transactional id's log partition stops serving it when an
// append finds the lease stale. Until the next lease read gives the partition back, no
// announcement lists an owner; FindCoordinator must still name a gateway (the one the lease
// rule gives, which then answers a code franz-go's producer retries) rather than answer
// COORDINATOR_NOT_AVAILABLE, and no gateway may answer a success meanwhile. All on a fake
// clock shared by two gateways: lease reads happen only when the test asks for them.
func TestFindCoordinatorWhileLeaseUnconfirmed(t *testing.T) {
	s := newStore(t)
	clk := clock.NewFake(time.Now())
	var pids atomic.Int64
	const bound = time.Second
	cfg := func(c *Config) {
		c.Clock = clk
		c.LeasePoll, c.TailPoll = time.Hour, time.Millisecond
		c.LeaseBound, c.HandoverBound = 10*time.Second, bound
		c.AnnounceInterval, c.FollowInterval = time.Hour, time.Hour
		c.Transactions = true
		c.Txn = txn.Config{Markers: &ends{}, ProducerID: func(context.Context) (int64, error) { return pids.Add(1), nil }}
	}
	confirm := func(cs ...*Coordinator) { t.Helper(); confirmLeases(t, clk, cs...) }
	a := start(t, s, 1, cfg)
	driveUntil(t, a, "a serves all", func() error { return servesAll(a) })
	b := start(t, s, 2, cfg)
	// a reads b's announcement (its lease member), then its lease: it gives b's share away;
	// b's first lease read gains that share.
	if err := a.readOwners(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	confirm(a, b)
	// b claims its share HandoverBound after its gain, and serves two tail polls after its
	// claim; its lease must be fresh when it claims.
	clk.Advance(bound / 2)
	confirm(a, b)
	clk.Advance(bound / 2)
	waitServing(t, "b claims its share", func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		for p, pt := range b.parts {
			if pt != nil && pt.status.Load() == stLoading {
				return fmt.Errorf("partition %d loading", p)
			}
		}
		return nil
	})
	clk.Advance(2 * b.cfg.TailPoll)
	confirm(a, b)
	waitServing(t, "a and b split the log", func() error {
		na, nb := len(serving(a)), len(serving(b))
		return checkfor.True(na > 0 && nb > 0 && na+nb == 16, "a %d, b %d", na, nb)
	})
	// Each reads the other's announcement of the split, as its follower would (FollowInterval
	// is out of reach): b's loads may read a's announcements before a announces its loss, and an
	// announcement of a that still lists p would name a as p's owner at b below.
	waitServing(t, "a and b read each other's split", func() error {
		if err := announcesServing(t, a, b); err != nil {
			return err
		}
		return announcesServing(t, b, a)
	})
	var p int
	for q := range serving(b) {
		p = q
		break
	}
	id := groupIn(p, "txn")
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 3, &id, 60000
	init.ProducerID, init.ProducerEpoch = -1, -1
	ir, err := b.Txns().InitProducerID(ctxT(t), kafkaIdentity(), init)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId at b: %v, code %d", err, ir.ErrorCode)
	}
	add := func(c *Coordinator) int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, id, ir.ProducerID, ir.ProducerEpoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = "out", []int32{0}
		req.Topics = append(req.Topics, rt)
		resp, err := c.Txns().AddPartitionsToTxn(ctxT(t), kafkaIdentity(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	find := func(c *Coordinator) *kmsg.FindCoordinatorResponse {
		t.Helper()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorType, req.CoordinatorKeys = 4, 1, []string{id}
		resp, err := c.Groups().FindCoordinator(ctxT(t), kafkaIdentity(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	// Both leases go unconfirmed at once; b's next append to p finds its lease stale and
	// stops p (what an append in flight meets on a loaded machine).
	clk.Advance(bound)
	if err := (journal{part(b, p)}).Append(ctxT(t), commit(groupIn(p, "g"), "t", 0, 1)); !errors.Is(err, group.ErrNotCoordinator) {
		t.Fatalf("append on a stale lease: %v", err)
	}
	if part(b, p) != nil {
		t.Fatal("b still holds p after a stale append")
	}
	// a reads b's announcement that no longer lists p: no announcement names an owner of p.
	checkfor.Eventually(t, 10*time.Second, "a reads that b stopped p", func() error {
		if err := a.readOwners(ctxT(t)); err != nil {
			return err
		}
		a.mu.Lock()
		ann, _ := a.fv.Announcement(2)
		a.mu.Unlock()
		_, listed := ann.Claims[p]
		return checkfor.True(!listed, "b's announcement lists %d", p)
	})
	for _, c := range []*Coordinator{a, b} {
		r := find(c).Coordinators[0]
		if r.ErrorCode != 0 || r.NodeID != 2 || r.Port != 9002 {
			t.Errorf("FindCoordinator at node %d while p is unserved: node %d port %d code %d (%s), want node 2 (the lease's) with no error",
				c.cfg.NodeID, r.NodeID, r.Port, r.ErrorCode, kerr.ErrorForCode(r.ErrorCode))
		}
		if code := add(c); !slices.Contains(franzRetried, code) {
			t.Errorf("AddPartitionsToTxn at node %d while p is unserved: code %d (%s), want one franz-go retries", c.cfg.NodeID, code, kerr.ErrorForCode(code))
		}
	}

	// The next lease read gives p back to b, which serves it after HandoverBound (a member of a
	// fleet, it does not skip the wait for its own release) and two tail polls.
	confirm(a, b)
	clk.Advance(bound / 2)
	confirm(a, b)
	clk.Advance(bound/2 + 2*b.cfg.TailPoll)
	checkfor.Eventually(t, 10*time.Second, "b serves p again", func() error {
		if code := add(b); code != 0 {
			confirm(a, b)
			return fmt.Errorf("AddPartitionsToTxn at b: %s", kerr.ErrorForCode(code))
		}
		return nil
	})
	if r := find(a).Coordinators[0]; r.ErrorCode != 0 || r.NodeID != 2 {
		t.Fatalf("FindCoordinator at a once b serves p: node %d code %d", r.NodeID, r.ErrorCode)
	}
}

// announcesServing reads the announcements at c and tells whether other's newest one lists
// exactly the partitions other serves.
func announcesServing(t *testing.T, c, other *Coordinator) error {
	if err := c.readOwners(ctxT(t)); err != nil {
		return err
	}
	c.mu.Lock()
	ann, _ := c.fv.Announcement(other.cfg.NodeID)
	c.mu.Unlock()
	listed := map[int]bool{}
	for p := range ann.Claims {
		listed[p] = true
	}
	return checkfor.True(maps.Equal(listed, serving(other)), "node %d reads node %d's announcement as %v, which serves %v",
		c.cfg.NodeID, other.cfg.NodeID, slices.Sorted(maps.Keys(listed)), slices.Sorted(maps.Keys(serving(other))))
}
