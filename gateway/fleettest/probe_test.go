package fleettest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

const (
	probeInterval = 200 * time.Millisecond
	probeTimeout  = time.Second
	// minRounds is how many probe rounds a scenario must see, so a probe that died early
	// cannot pass the checks.
	minRounds = 50
)

// probeGroups names one group per coordinator log partition: probeGroups()[p] hashes to p.
func probeGroups() []string {
	out := make([]string, LogPartitions)
	found := 0
	for i := 0; found < LogPartitions; i++ {
		g := fmt.Sprintf("probe-%d", i)
		if p := LogPartition(g); out[p] == "" {
			out[p] = g
			found++
		}
	}
	return out
}

// probeMember is the probe's member in one group.
type probeMember struct {
	group      string
	memberID   string
	generation int32
}

// round is one probe round: for each log partition, the gateways that answered 0 to the
// Heartbeat and to the DescribeGroups of its group, and when each did.
type round struct {
	at        time.Time
	heartbeat [LogPartitions]map[int32]time.Time
	describe  [LogPartitions]map[int32]time.Time
}

// probe holds a member in a group of every log partition and asks every gateway about them.
type probe struct {
	t        testing.TB
	f        *fleet
	tp       *tap
	interval time.Duration
	joiner   *kgo.Client
	clients  map[int32]*kgo.Client // one per gateway, seeded with it alone
	members  []probeMember
	// heartbeatsOnly leaves DescribeGroups out of the rounds (measurements ask often).
	heartbeatsOnly bool

	mu     sync.Mutex
	rounds []round

	cancel context.CancelFunc
	done   chan struct{}
}

// startProbe joins the probe's members (through any gateway: kgo finds each coordinator) and
// starts its rounds; heartbeatsOnly is the probe's (set before its rounds read it).
func startProbe(t testing.TB, f *fleet, tp *tap, interval time.Duration, heartbeatsOnly bool) *probe {
	t.Helper()
	pr := &probe{t: t, f: f, tp: tp, interval: interval, heartbeatsOnly: heartbeatsOnly, clients: map[int32]*kgo.Client{}, done: make(chan struct{})}
	var err error
	if pr.joiner, err = kgo.NewClient(clientOpts(f, tp, "probe-join")...); err != nil {
		t.Fatal(err)
	}
	for _, g := range f.gws {
		cl, err := kgo.NewClient(kgo.SeedBrokers(g.addr), kgo.ClientID(fmt.Sprintf("probe-%d", g.id)),
			tp.dialer(fmt.Sprintf("probe@%d", g.id)), kgo.RequestTimeoutOverhead(probeTimeout))
		if err != nil {
			t.Fatal(err)
		}
		pr.clients[g.id] = cl
	}
	t.Cleanup(pr.close)
	groups := probeGroups()
	pr.members = make([]probeMember, len(groups))
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr.members[i], errs[i] = pr.join(g)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr.cancel = cancel
	go pr.loop(ctx)
	return pr
}

// join makes the probe's member of group the group's only member and leader, with an empty
// assignment.
func (pr *probe) join(group string) (probeMember, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta := (&kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{}}).AppendTo(nil)
	memberID := ""
	var last error
	// A failed attempt is retried at this pace; a refused JoinGroup comes back at once.
	pace := time.NewTicker(100 * time.Millisecond)
	defer pace.Stop()
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				continue
			case <-pace.C:
			}
		}
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = group, memberID, "consumer"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
		proto := kmsg.NewJoinGroupRequestProtocol()
		proto.Name, proto.Metadata = "range", meta
		req.Protocols = append(req.Protocols, proto)
		resp, err := req.RequestWith(ctx, pr.joiner)
		if err != nil {
			last = err
			continue
		}
		switch err := kerr.ErrorForCode(resp.ErrorCode); {
		case err == kerr.MemberIDRequired:
			memberID = resp.MemberID
			continue
		case err == kerr.UnknownMemberID:
			// The pending member id is gone (the group moved meanwhile): start over, as
			// Kafka's clients do.
			memberID = ""
			last = fmt.Errorf("JoinGroup of %s: %w", group, err)
			continue
		case err != nil:
			last = fmt.Errorf("JoinGroup of %s: %w", group, err)
			continue
		}
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Group, sreq.Generation, sreq.MemberID = group, resp.Generation, resp.MemberID
		sreq.ProtocolType, sreq.Protocol = kmsg.StringPtr("consumer"), resp.Protocol
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = resp.MemberID, (&kmsg.ConsumerMemberAssignment{}).AppendTo(nil)
		sreq.GroupAssignment = append(sreq.GroupAssignment, a)
		sresp, err := sreq.RequestWith(ctx, pr.joiner)
		if err == nil {
			err = kerr.ErrorForCode(sresp.ErrorCode)
		}
		if err != nil {
			last = fmt.Errorf("SyncGroup of %s: %w", group, err)
			memberID = resp.MemberID
			continue
		}
		return probeMember{group: group, memberID: resp.MemberID, generation: resp.Generation}, nil
	}
	return probeMember{}, fmt.Errorf("joining %s: %v (last: %v)", group, ctx.Err(), last)
}

func (pr *probe) loop(ctx context.Context) {
	defer close(pr.done)
	tick := time.NewTicker(pr.interval)
	defer tick.Stop()
	for {
		r := pr.round(ctx)
		if ctx.Err() != nil {
			return
		}
		pr.mu.Lock()
		pr.rounds = append(pr.rounds, r)
		pr.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// round asks every gateway at once: a Heartbeat per group and one DescribeGroups of all groups.
func (pr *probe) round(ctx context.Context) round {
	r := round{at: time.Now()}
	for p := range LogPartitions {
		r.heartbeat[p], r.describe[p] = map[int32]time.Time{}, map[int32]time.Time{}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, cl := range pr.clients {
		seed := cl.SeedBrokers()[0]
		for p, m := range pr.members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rctx, cancel := context.WithTimeout(ctx, probeTimeout)
				defer cancel()
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID = m.group, m.generation, m.memberID
				resp, err := seed.Request(rctx, req)
				if err == nil && resp.(*kmsg.HeartbeatResponse).ErrorCode == 0 {
					mu.Lock()
					r.heartbeat[p][id] = time.Now()
					mu.Unlock()
				}
			}()
		}
		if pr.heartbeatsOnly {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			req := kmsg.NewPtrDescribeGroupsRequest()
			for _, m := range pr.members {
				req.Groups = append(req.Groups, m.group)
			}
			resp, err := seed.Request(rctx, req)
			if err != nil {
				return
			}
			now := time.Now()
			for _, g := range resp.(*kmsg.DescribeGroupsResponse).Groups {
				if g.ErrorCode != 0 {
					continue
				}
				mu.Lock()
				r.describe[LogPartition(g.Group)][id] = now
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return r
}

func (pr *probe) close() {
	if pr.cancel != nil {
		pr.cancel()
		<-pr.done
		pr.cancel = nil
	}
	for _, cl := range pr.clients {
		cl.Close()
	}
	pr.clients = nil
	if pr.joiner != nil {
		pr.joiner.Close()
		pr.joiner = nil
	}
}

func (pr *probe) snapshot() []round {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return append([]round(nil), pr.rounds...)
}

// roundsSeen is the number of rounds so far.
func (pr *probe) roundsSeen() int {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return len(pr.rounds)
}

// splitBrain lists every round in which two gateways answered 0 for one group.
func splitBrain(rounds []round) []string {
	var out []string
	for _, r := range rounds {
		for p := range LogPartitions {
			for what, answered := range map[string]map[int32]time.Time{"Heartbeat": r.heartbeat[p], "DescribeGroups": r.describe[p]} {
				if len(answered) > 1 {
					var when []string
					for _, id := range ids(answered) {
						when = append(when, fmt.Sprintf("%d at +%v", id, answered[id].Sub(r.at).Round(time.Microsecond)))
					}
					out = append(out, fmt.Sprintf("round at %s: gateways %v all answered 0 to %s of the group of log partition %d (%s)",
						r.at.Format("15:04:05.000"), ids(answered), what, p, strings.Join(when, ", ")))
				}
			}
		}
	}
	return out
}

func ids(m map[int32]time.Time) []int32 {
	var out []int32
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// owners is, per log partition, the gateway that answered 0 to the Heartbeat in the last round
// (0 when none did).
func (pr *probe) owners() [LogPartitions]int32 {
	var out [LogPartitions]int32
	rs := pr.snapshot()
	if len(rs) == 0 {
		return out
	}
	for p, answered := range rs[len(rs)-1].heartbeat {
		for id := range answered {
			out[p] = id
		}
	}
	return out
}

// waitAllServed waits for a round, after the call, in which every log partition's group got a 0
// from a gateway, and returns that round's owners.
func (pr *probe) waitAllServed(t testing.TB, within time.Duration, what string) [LogPartitions]int32 {
	t.Helper()
	var owners [LogPartitions]int32
	from := pr.roundsSeen()
	checkfor.Eventually(t, within, what+": a probe round in which every log partition has a coordinator", func() error {
		rs := pr.snapshot()
		if len(rs) <= from {
			return fmt.Errorf("no round yet")
		}
		for _, r := range rs[from:] {
			served := 0
			for p := range LogPartitions {
				for id := range r.heartbeat[p] {
					owners[p] = id
					served++
					break
				}
			}
			if served == LogPartitions {
				return nil
			}
		}
		from = len(rs)
		return fmt.Errorf("last round %s", describeRound(rs[len(rs)-1]))
	})
	return owners
}

func describeRound(r round) string {
	var parts []string
	for p := range LogPartitions {
		parts = append(parts, fmt.Sprintf("%d:%v", p, ids(r.heartbeat[p])))
	}
	return r.at.Format("15:04:05.000") + " " + strings.Join(parts, " ")
}
