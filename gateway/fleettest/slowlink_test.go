package fleettest

import (
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// The slow, lossy link of scenario d: 200 ms more on every packet toward the store and 5 % of the
// packets of both directions dropped, on the group's coordinator's link to the store.
const (
	slowDelay = 200 * time.Millisecond
	slowLoss  = 0.05
	// slowLinkHold is how long TestPartitionSlowLink keeps the link degraded in the test
	// command; slowLinkEnv names another duration (e.g. 1m, the minute).
	slowLinkHold = 30 * time.Second
	slowLinkEnv  = "FLEETTEST_SLOW_LINK"
	// standDownBound is how long a gateway's lease confirmations must all come late, while
	// another gateway serves, before it stands down (package coordinator: 20 x HandoverBound).
	standDownBound = 20 * handoverBound
	// moveBound bounds the time from the degradation until another gateway serves every log
	// partition of the slow one: its lease lapses within handoverBound after its last quick
	// read, every confirmation comes late for standDownBound, the answer that tells it comes
	// up to a slow read later (200 ms and a retransmission or two: 1 s), the release waits up
	// to handoverBound and is announced over the slow link (1 s), then the others read the
	// announcement and their lease (FollowInterval, LeasePoll: 200 ms), wait handoverBound
	// and load the partition (replay and claim: 500 ms); 1 s more for a loaded machine.
	moveBound = handoverBound + standDownBound + time.Second + handoverBound + time.Second +
		200*time.Millisecond + handoverBound + 500*time.Millisecond + time.Second
	// leaseBound is the gateways' LeaseBound (the coordinator's default for iggyHeartbeat): a
	// lease read not answered by then fails, and the session is replaced.
	leaseBound = iggyHeartbeat*6/5 - 2*gateway.LeasePoll - 100*time.Millisecond
	// backBound bounds the time from putting the link back until the slow gateway serves log
	// partitions again: the read in flight then ends within leaseBound (answered, or the session
	// fails and a new one joins at once), then standDownBound of confirmations in time, then the
	// others read its announcement and their lease (200 ms), it waits handoverBound and loads
	// the partition (500 ms), and a probe round sees it (250 ms); 1 s more for a loaded machine.
	backBound = leaseBound + standDownBound + 200*time.Millisecond + handoverBound + 500*time.Millisecond +
		250*time.Millisecond + time.Second
	// hiccupBound bounds a stretch of probe rounds in which a partition that moved away from
	// the slow gateway has no coordinator: a gateway with a good link whose lease read came back
	// late once, under load, stops the partition whose append found it stale, and serves it
	// again after its next lease read (100 ms), handoverBound and the load (500 ms); a probe
	// round (250 ms) and 1 s for a loaded machine.
	hiccupBound = gateway.LeasePoll + handoverBound + 500*time.Millisecond + 250*time.Millisecond + time.Second
)

// echoIn serves, in the lab's namespace of role, an echo of every byte on addr.
func echoIn(t *testing.T, lab *netLab, role, addr string) {
	t.Helper()
	var l net.Listener
	if err := inNetns(lab.node(role).ns, func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
}

// roundTrip is the time a byte takes from role to addr's echo and back, over a connection made
// beforehand, or an error when it does not come back within limit.
func roundTrip(c net.Conn, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	c.SetDeadline(start.Add(limit))
	if _, err := c.Write([]byte{1}); err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// TestDegradedLink checks the harness's degraded link on three namespaces without a fleet: a
// connection open before the link from a to b is degraded carries on through it, every round
// trip at least the delay longer; c's round trips to b are not delayed; with every packet lost
// nothing comes back; once the link is put back the round trip is short again on the same
// connection.
func TestDegradedLink(t *testing.T) {
	lab := newNetLab(t, "a", "b", "c")
	bAddr := net.JoinHostPort(lab.node("b").ip(), "7000")
	echoIn(t, lab, "b", bAddr)
	dial := func(role string) net.Conn {
		t.Helper()
		c, err := lab.dialer(role)(t.Context(), "tcp", bAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, c := dial("a"), dial("c")
	rt := func(conn net.Conn) time.Duration {
		t.Helper()
		d, err := roundTrip(conn, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := rt(a); d >= slowDelay {
		t.Fatalf("a round trip of %v before the link was degraded", d)
	}
	d := lab.degrade("a", "b", slowDelay, 0)
	for range 5 {
		if got := rt(a); got < slowDelay {
			t.Fatalf("a round trip of %v through a link that delays by %v", got, slowDelay)
		}
		if got := rt(c); got >= slowDelay {
			t.Fatalf("c, not on the degraded link, took %v", got)
		}
	}
	d.undegrade()
	if got := rt(a); got >= slowDelay {
		t.Fatalf("a round trip of %v after the link was put back", got)
	}
	lossy := lab.degrade("a", "b", 0, 1)
	if got, err := roundTrip(a, time.Second); err == nil {
		t.Fatalf("a round trip of %v through a link that drops every packet", got)
	}
	lossy.undegrade()
	a2 := dial("a")
	checkfor.Eventually(t, 10*time.Second, "a round trip after the lossy link was put back", func() error {
		_, err := roundTrip(a2, time.Second)
		return err
	})
}

// TestPartitionSlowLink is scenario d: the group's coordinator's link to the store degraded
// (slowDelay toward the store, slowLoss of the packets both ways) under load for slowLinkHold,
// or what slowLinkEnv says (1m for the minute), then put back. Its lease confirmations
// all come late, so it stands down and the other gateways serve its log partitions: within
// moveBound of the degradation every one of them is served elsewhere, and from then on, while
// the link stays slow, it serves none of them and none goes unserved for longer than
// hiccupBound. After the link is put back it serves log partitions again within backBound. The
// load goes on meanwhile (records acknowledged and read by the group), never two gateways
// answer for one log partition, and finish checks every record and commit, and that no group,
// franz-go's or librdkafka's, rebalanced.
func TestPartitionSlowLink(t *testing.T) {
	hold := slowLinkHold
	if v := os.Getenv(slowLinkEnv); v != "" {
		var err error
		if hold, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: %v", slowLinkEnv, v, err)
		}
	}
	if hold < moveBound+5*time.Second {
		t.Fatalf("%s=%v: the link must stay slow past the move (%v) to see it hold", slowLinkEnv, hold, moveBound)
	}
	f := startNetFleet(t)
	r := startRunOn(t, f)
	r.addFamilies(partitionFamilies(t)...)
	id := r.coordinator(group)
	before := r.pr.owners()
	acked, read, rounds := r.l.nAcked.Load(), r.l.nRead.Load(), r.pr.roundsSeen()
	at := time.Now()
	d := f.lab.degrade(fmt.Sprintf("gateway-%d", id), "store", slowDelay, slowLoss)
	checkfor.Eventually(t, hold+recovery, fmt.Sprintf("the link degraded for %v", hold), func() error {
		return checkfor.True(time.Since(at) >= hold, "%v so far", time.Since(at).Round(time.Second))
	})
	// How the coordinator's log partitions fared: rounds in which it served all of them, rounds
	// in which another gateway served some, rounds in which some had no coordinator at all;
	// when they were first all served elsewhere, and how many rounds left some unserved after.
	var own, elsewhere, none, unservedAfter, servedByItAfter int
	var moved, unservedFrom time.Time
	var longestUnserved time.Duration
	rs := r.pr.snapshot()
	for _, rd := range rs[rounds:] {
		mine, other, unserved := 0, 0, 0
		for p, owner := range before {
			if owner != id {
				continue
			}
			_, byIt := rd.heartbeat[p][id]
			switch {
			case byIt:
				mine++
			case len(rd.heartbeat[p]) > 0:
				other++
			default:
				unserved++
			}
		}
		if unserved > 0 {
			none++
		} else if other > 0 {
			elsewhere++
		} else if mine > 0 {
			own++
		}
		switch {
		case moved.IsZero():
			if mine == 0 && unserved == 0 && other > 0 {
				moved = rd.at
			}
			continue
		case mine > 0:
			servedByItAfter++
		}
		switch {
		case unserved > 0:
			unservedAfter++
			if unservedFrom.IsZero() {
				unservedFrom = rd.at
			}
		case !unservedFrom.IsZero():
			longestUnserved = max(longestUnserved, rd.at.Sub(unservedFrom))
			unservedFrom = time.Time{}
		}
	}
	if !unservedFrom.IsZero() {
		longestUnserved = max(longestUnserved, rs[len(rs)-1].at.Sub(unservedFrom))
	}
	if moved.IsZero() {
		t.Errorf("gateway %d's log partitions were never all served elsewhere in %v of a slow link (bound %v)", id, hold, moveBound)
	} else {
		t.Logf("gateway %d's log partitions all served elsewhere %v after its link was degraded (bound %v); after that, rounds with some unserved: %d (longest stretch %v), with some served by it: %d",
			id, moved.Sub(at).Round(time.Millisecond), moveBound, unservedAfter, longestUnserved.Round(time.Millisecond), servedByItAfter)
		if moved.Sub(at) > moveBound {
			t.Errorf("gateway %d's log partitions all served elsewhere only %v after its link was degraded (bound %v)", id, moved.Sub(at).Round(time.Millisecond), moveBound)
		}
		if servedByItAfter > 0 {
			t.Errorf("gateway %d served some of its log partitions again in %d probe rounds while its link was still slow", id, servedByItAfter)
		}
		if longestUnserved > hiccupBound {
			t.Errorf("some of gateway %d's log partitions went unserved for %v after they had moved (bound %v)", id, longestUnserved.Round(time.Millisecond), hiccupBound)
		}
	}
	nAcked, nRead := r.l.nAcked.Load()-acked, r.l.nRead.Load()-read
	t.Logf("gateway %d's link to the store degraded for %v: %d records acknowledged and %d read by the group meanwhile; probe rounds: %d with its log partitions all served by it, %d with some served elsewhere, %d with some unserved",
		id, time.Since(at).Round(time.Millisecond), nAcked, nRead, own, elsewhere, none)
	if nRead < readProgress {
		t.Errorf("the group read %d records in the %v the link was degraded (want at least %d)", nRead, hold, readProgress)
	}
	healed := time.Now()
	d.undegrade()
	r.pr.waitAllServed(t, healBound, "after the link was put back")
	r.waitProgress("the load after the link was put back")
	t.Logf("put back: every log partition served and the load on after %v", time.Since(healed).Round(time.Millisecond))
	// Once its confirmations have all come in time for standDownBound it takes part again, and
	// the lease gives it log partitions back, each by the usual handover.
	checkfor.Eventually(t, backBound, fmt.Sprintf("gateway %d serving log partitions again", id), func() error {
		owners := r.pr.owners()
		return checkfor.True(slices.Contains(owners[:], id), "owners %v", owners)
	})
	t.Logf("gateway %d serves log partitions again %v after its link was put back (bound %v)", id, time.Since(healed).Round(time.Millisecond), backBound)
	r.waitProgress("the load after the slow gateway took part again")
	r.finish()
}
