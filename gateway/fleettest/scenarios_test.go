package fleettest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testiggy"
)

// TestDataPathSurvivesGatewayKill checks the harness itself on what needs no coordinator:
// idempotent producers and a plain consumer through the three gateways while one gateway is
// killed and started again. Every acknowledged record must be stored once at its offset and read
// once.
func TestDataPathSurvivesGatewayKill(t *testing.T) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	l := newLoad(t, f, tp)
	l.startProducers()
	l.startPlain()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			l.prodCancel()
			l.prodWG.Wait()
			l.stopGroup()
		}
	})
	progress := func(what string) {
		t.Helper()
		acked, read := l.nAcked.Load(), l.nRead.Load()
		checkfor.Eventually(t, recovery, what, func() error {
			if a, n := l.nAcked.Load()-acked, l.nRead.Load()-read; a < ackProgress || n < readProgress {
				return fmt.Errorf("%d more acknowledged, %d more read", a, n)
			}
			return nil
		})
	}
	progress("the load through three gateways")
	g := f.gw(2)
	g.kill(t)
	progress("the load with gateway 2 killed")
	f.restart(g)
	progress("the load after gateway 2 came back")
	l.stopProducers()
	stopped = true
	ends := endOffsets(t, f, tp)
	checkfor.Eventually(t, recovery, "the plain consumer at the end of every partition", func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		next := map[int32]int64{}
		for at := range l.reads {
			next[at.p] = max(next[at.p], at.off+1)
		}
		for p, end := range ends {
			if next[p] < end {
				return fmt.Errorf("partition %d read to %d of %d", p, next[p], end)
			}
		}
		return nil
	})
	l.stopGroup()
	stored := readAll(t, f, tp, ends)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.prodErrs) > 0 {
		t.Errorf("producers gave up on records: %v", l.prodErrs[:min(5, len(l.prodErrs))])
	}
	problems := l.storedProblemsLocked(stored)
	for v, at := range l.acked {
		if r := l.reads[at]; len(r) != 1 || r[0] != v {
			problems = append(problems, fmt.Sprintf("%s at %d/%d read as %v", v, at.p, at.off, r))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("%d problems (%d acknowledged): %s", len(problems), len(l.acked), firstFew(problems))
	}
	t.Logf("%d acknowledged, %d stored", len(l.acked), len(stored))
}

// rotation is the group's coordinator first, then the other gateways by node id.
func (r *run) rotation() []int32 {
	first := r.coordinator(group)
	order := []int32{first}
	for _, g := range r.f.gws {
		if g.id != first {
			order = append(order, g.id)
		}
	}
	return order
}

// TestRollingRestart is scenario a: SIGTERM to each gateway in turn, the group's coordinator
// first, each started again before the next stops.
func TestRollingRestart(t *testing.T) {
	r := startRun(t)
	for _, id := range r.rotation() {
		g := r.f.gw(id)
		before := r.pr.owners()
		at := time.Now()
		exit := g.term(t, exitLimit)
		moved := r.handover(id, at, before, 15*time.Second)
		t.Logf("gateway %d: exited %v after SIGTERM; its log partitions served elsewhere after %v", id, exit, moved)
		r.f.restart(g)
		r.pr.waitAllServed(t, 20*time.Second, fmt.Sprintf("after gateway %d came back", id))
		r.waitProgress(fmt.Sprintf("the load after gateway %d came back", id))
	}
	r.finish()
}

// TestCoordinatorCrash is scenario b: SIGKILL of the group's coordinator while the producers
// write on through the other gateways.
func TestCoordinatorCrash(t *testing.T) {
	r := startRun(t)
	id := r.coordinator(group)
	g := r.f.gw(id)
	before := r.pr.owners()
	at := time.Now()
	g.kill(t)
	r.waitProgress(fmt.Sprintf("the load with gateway %d killed", id))
	moved := r.handover(id, at, before, 20*time.Second)
	t.Logf("gateway %d killed: its log partitions served elsewhere after %v", id, moved)
	r.pr.waitAllServed(t, 20*time.Second, "after the crash")
	r.f.restart(g)
	r.waitProgress(fmt.Sprintf("the load after gateway %d came back", id))
	r.finish()
}

// TestTwoGatewaysStop is scenario c: SIGTERM to two gateways at once, the coordinator among
// them; the third serves every group, then both come back.
func TestTwoGatewaysStop(t *testing.T) {
	r := startRun(t)
	order := r.rotation()
	a, b := r.f.gw(order[0]), r.f.gw(order[1])
	a.signal(t, sigterm)
	b.signal(t, sigterm)
	a.waitExit(t, exitLimit)
	b.waitExit(t, exitLimit)
	owners := r.pr.waitAllServed(t, 20*time.Second, "with two gateways stopped")
	for p, id := range owners {
		if id != order[2] {
			t.Errorf("log partition %d served by gateway %d, which was stopped", p, id)
		}
	}
	r.waitProgress("the load through the one gateway left")
	r.f.restart(a)
	r.f.restart(b)
	r.pr.waitAllServed(t, 20*time.Second, "after both came back")
	r.waitProgress("the load after both came back")
	r.finish()
}

// TestStoreCrash is scenario d: SIGKILL of the store (fsync always) under load, then its
// restart on the same data.
func TestStoreCrash(t *testing.T) {
	r := startRun(t)
	r.f.killIggy()
	r.f.startIggy()
	r.pr.waitAllServed(t, 30*time.Second, "after the store came back")
	r.waitProgress("the load after the store came back")
	r.finish()
}

// TestFrozenGateway is scenario e: the group's coordinator frozen with SIGSTOP past its Iggy
// session timeout, then continued. The others take its groups over while it sleeps; on waking it
// must not answer as coordinator of any of them (the probe's check of every round).
func TestFrozenGateway(t *testing.T) {
	r := startRun(t)
	id := r.coordinator(group)
	g := r.f.gw(id)
	before := r.pr.owners()
	at := time.Now()
	g.stop(t)
	moved := r.handover(id, at, before, 20*time.Second)
	t.Logf("gateway %d frozen: its log partitions served elsewhere after %v", id, moved)
	r.waitProgress(fmt.Sprintf("the load with gateway %d frozen", id))
	g.cont(t)
	woke := r.pr.roundsSeen()
	checkfor.Eventually(t, 20*time.Second, "ten probe rounds after SIGCONT", func() error {
		if n := r.pr.roundsSeen() - woke; n < 10 {
			return fmt.Errorf("%d rounds", n)
		}
		return nil
	})
	r.pr.waitAllServed(t, 20*time.Second, "after the frozen gateway woke")
	r.waitProgress(fmt.Sprintf("the load after gateway %d woke", id))
	r.finish()
}

// consumerHeartbeat is the heartbeat interval the KIP-848 scenario's gateways give the members.
const consumerHeartbeat = 500 * time.Millisecond

// TestConsumerGroupRollingAndDrain runs the load with a KIP-848 consumer group (franz-go's
// server-side balancer) through a rolling SIGTERM (the group's coordinator first, each gateway
// started again before the next stops), a drain of the group's coordinator and its undo, and a
// SIGKILL of the coordinator. finish checks what it checks for the classic group, in KIP-848 terms: no member epoch
// changes because a gateway stopped (a member's generation is its epoch), no assignment change,
// no answer that makes a member rejoin (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, ...), every
// record read once and committed. The time from the coordinator's SIGTERM to each member's first
// successful heartbeat at another gateway is logged.
func TestConsumerGroupRollingAndDrain(t *testing.T) {
	r := startRunOn(t, startFleet(t, "--consumer-heartbeat-interval", consumerHeartbeat.String()), true)
	epochs := r.gens
	for i, id := range r.rotation() {
		g := r.f.gw(id)
		before := r.pr.owners()
		at := time.Now()
		g.term(t, exitLimit)
		moved := r.handover(id, at, before, 15*time.Second)
		if i == 0 {
			t.Logf("coordinator %d SIGTERM: members' next successful heartbeat at another gateway after %s", id, r.nextBeats(id, at))
		}
		t.Logf("gateway %d: log partitions served elsewhere after %v", id, moved)
		r.f.restart(g)
		r.pr.waitAllServed(t, 20*time.Second, fmt.Sprintf("after gateway %d came back", id))
		r.waitProgress(fmt.Sprintf("the load after gateway %d came back", id))
	}
	id := r.coordinator(group)
	before := r.pr.owners()
	at := time.Now()
	r.operator(t, "drain", "node", fmt.Sprint(id), "--yes", "--wait", "--timeout", "30s")
	r.handover(id, at, before, 15*time.Second)
	t.Logf("coordinator %d drained: members' next successful heartbeat at another gateway after %s", id, r.nextBeats(id, at))
	r.waitProgress("the load after the drain")
	r.operator(t, "drain", "node", fmt.Sprint(id), "--undo", "--yes", "--wait")
	r.pr.waitAllServed(t, 20*time.Second, "after the undo")
	r.waitProgress("the load after the undo")
	id = r.coordinator(group)
	g := r.f.gw(id)
	before = r.pr.owners()
	at = time.Now()
	g.kill(t)
	r.handover(id, at, before, 20*time.Second)
	t.Logf("coordinator %d SIGKILL: members' next successful heartbeat at another gateway after %s", id, r.nextBeats(id, at))
	r.f.restart(g)
	r.pr.waitAllServed(t, 20*time.Second, fmt.Sprintf("after gateway %d came back", id))
	r.waitProgress(fmt.Sprintf("the load after gateway %d came back", id))
	if gens, _ := r.l.generations(); fmt.Sprint(gens) != fmt.Sprint(epochs) {
		t.Errorf("member epochs went from %v to %v", epochs, gens)
	}
	for _, b := range r.tp.beatsSince("member-", r.stableAt) {
		if int32(b.code) != epochs[0] {
			t.Errorf("heartbeat answered with member epoch %d, the group's was %d: %v", b.code, epochs[0], b)
			break
		}
	}
	r.finish()
}

// nextBeats is, per member, how long after at it was first answered a heartbeat by a gateway
// other than node stopped.
func (r *run) nextBeats(stopped int32, at time.Time) string {
	r.t.Helper()
	addr := r.f.gw(stopped).addr
	first := map[string]time.Duration{}
	checkfor.Eventually(r.t, 20*time.Second, "every member heartbeating at another gateway", func() error {
		for _, b := range r.tp.beatsSince("member-", at) {
			if _, ok := first[b.client]; !ok && b.addr != addr {
				first[b.client] = b.at.Sub(at)
			}
		}
		return checkfor.True(len(first) == members, "%d of %d members: %v", len(first), members, first)
	})
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(first)) {
		parts = append(parts, fmt.Sprintf("%s %v", name, first[name].Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// TestIggyLeaderKill: on a three-node Iggy cluster (IGGY_KAFKA_TEST_IGGY_NODES=3 with a real
// server), SIGKILL of the cluster's leader under load; the cluster elects another, the gateways
// follow it, every log partition is served again and the load goes on; then the node comes back.
// On one node (the store, or one real node) there is no leader to lose: the test says so and
// skips.
func TestIggyLeaderKill(t *testing.T) {
	target, err := testiggy.FromEnv(iggyKafka)
	if err != nil {
		t.Fatal(err)
	}
	if target.Nodes < 3 {
		t.Skipf("needs a three-node Iggy cluster (%s=3 with %s set); the server here is the %s", testiggy.NodesEnv, testiggy.Env, target.Kind())
	}
	r := startRun(t)
	leader := r.f.iggyLeader()
	killed := time.Now()
	leader.kill(t)
	r.pr.waitAllServed(t, 60*time.Second, "after the Iggy leader was killed")
	t.Logf("Iggy leader %s killed: every log partition served again after %v", leader.name, time.Since(killed))
	r.waitProgress("the load after the Iggy leader was killed")
	leader.start(t, r.f.home)
	leader.waitListening(t, startLimit)
	r.waitProgress("the load after the old leader came back")
	r.finish()
}

// TestIggyRestart stops every node of the real Iggy server (SIGTERM, all of a cluster at once)
// under load and starts them again on their data: the upstream failover tests' restart of the
// whole cluster. On the embedded store TestStoreCrash's SIGKILL covers it, more strictly.
func TestIggyRestart(t *testing.T) {
	target, err := testiggy.FromEnv(iggyKafka)
	if err != nil {
		t.Fatal(err)
	}
	if target.Kind() == "store" {
		t.Skip("the store's restart is TestStoreCrash's, under SIGKILL")
	}
	r := startRun(t)
	stopped := time.Now()
	for _, n := range r.f.iggy {
		n.signal(t, sigterm)
	}
	for _, n := range r.f.iggy {
		n.waitExit(t, 30*time.Second)
	}
	t.Logf("Iggy stopped in %v", time.Since(stopped))
	restarted := time.Now()
	r.f.startIggy()
	r.pr.waitAllServed(t, 60*time.Second, "after Iggy came back")
	t.Logf("Iggy restarted: every log partition served again after %v", time.Since(restarted))
	r.waitProgress("the load after Iggy came back")
	r.finish()
}
