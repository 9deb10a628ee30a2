package fleettest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

const (
	// ackProgress and readProgress are what a step waits for, so the next step starts under load.
	ackProgress  = 200
	readProgress = 100
	// recovery bounds the wait for the load to go on after a step.
	recovery = 40 * time.Second
)

// run is the load on a fleet: producers, the consumer group and the probe, and the checks made
// at the end of every scenario.
type run struct {
	t  *testing.T
	f  *fleet
	tp *tap
	l  *load
	pr *probe

	stableAt time.Time
	gens     []int32
	finished bool
	// fams are other client families' groups beside the run's (addFamilies).
	fams []*familyRun
}

// startRun starts a fleet, the topic, the probe, the producers and the group, and returns once
// the group is stable and the load is flowing.
func startRun(t *testing.T, extra ...string) *run {
	t.Helper()
	return startRunOn(t, startFleet(t, extra...))
}

// startRunOn starts the load on the fleet f; kip848 makes the group a KIP-848 consumer group.
func startRunOn(t *testing.T, f *fleet, kip848 ...bool) *run {
	t.Helper()
	tp := &tap{}
	if f.lab != nil {
		tp.dialFor = f.clientDialer
	}
	createTopic(t, f, tp)
	r := &run{t: t, f: f, tp: tp}
	r.pr = startProbe(t, f, tp, probeInterval, false)
	r.l = newLoad(t, f, tp)
	r.l.kip848 = len(kip848) > 0 && kip848[0]
	r.l.startProducers()
	r.l.startGroup()
	t.Cleanup(func() {
		if !r.finished {
			r.l.stopGroup()
			r.l.prodCancel()
			r.l.prodWG.Wait()
			for _, cl := range r.l.prods {
				cl.Close()
			}
		}
		if t.Failed() {
			t.Logf("group assignment events: %v; non-zero group answers: %s", r.l.eventList(), tp.summary())
		}
	})
	checkfor.Eventually(t, 30*time.Second, "the consumer group stable, both members in one generation", func() error {
		gens, ok := r.l.generations()
		if !ok {
			return fmt.Errorf("generations %v, assignment events %v", gens, r.l.eventList())
		}
		r.gens = gens
		return nil
	})
	r.stableAt = time.Now()
	r.waitProgress("the load before the first step")
	return r
}

// waitProgress waits until ackProgress more records were acknowledged and readProgress more read.
func (r *run) waitProgress(what string) {
	r.t.Helper()
	acked, read := r.l.nAcked.Load(), r.l.nRead.Load()
	checkfor.Eventually(r.t, recovery, what, func() error {
		a, n := r.l.nAcked.Load()-acked, r.l.nRead.Load()-read
		if a < ackProgress || n < readProgress {
			return fmt.Errorf("%d more acknowledged (want %d), %d more read (want %d)", a, ackProgress, n, readProgress)
		}
		return nil
	})
}

// coordinator is the node FindCoordinator names for the group.
func (r *run) coordinator(g string) int32 {
	r.t.Helper()
	var node int32
	checkfor.Eventually(r.t, 20*time.Second, "FindCoordinator of "+g, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = g, []string{g}
		resp, err := req.RequestWith(ctx, r.pr.joiner)
		if err != nil {
			return err
		}
		code, id := resp.ErrorCode, resp.NodeID
		if len(resp.Coordinators) > 0 {
			code, id = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
		}
		if err := kerr.ErrorForCode(code); err != nil {
			return err
		}
		node = id
		return nil
	})
	return node
}

// handover is, for each log partition that stopped served just before at, how long after at
// another gateway first answered 0 to its Heartbeat.
func (r *run) handover(stopped int32, at time.Time, before [LogPartitions]int32, within time.Duration) map[int]time.Duration {
	r.t.Helper()
	out := map[int]time.Duration{}
	var owned []int
	for p, id := range before {
		if id == stopped {
			owned = append(owned, p)
		}
	}
	checkfor.Eventually(r.t, within, fmt.Sprintf("another gateway serving log partitions %v of gateway %d", owned, stopped), func() error {
		for _, rd := range r.pr.snapshot() {
			for _, p := range owned {
				if _, ok := out[p]; ok {
					continue
				}
				for id, ts := range rd.heartbeat[p] {
					if id != stopped && ts.After(at) {
						out[p] = ts.Sub(at)
					}
				}
			}
		}
		if len(out) < len(owned) {
			return fmt.Errorf("%d of %d served elsewhere: %v", len(out), len(owned), out)
		}
		return nil
	})
	return out
}

// finish stops the load and makes every check of the issue.
func (r *run) finish() {
	t := r.t
	t.Helper()
	l := r.l
	// The issue asks for at least minRounds probe rounds per scenario; the load goes on until then.
	checkfor.Eventually(t, 2*minRounds*probeInterval+recovery, fmt.Sprintf("%d probe rounds", minRounds), func() error {
		if n := r.pr.roundsSeen(); n < minRounds {
			return fmt.Errorf("%d rounds", n)
		}
		return nil
	})
	l.stopProducers()
	r.finished = true
	ends := endOffsets(t, r.f, r.tp)
	checkfor.Eventually(t, recovery, "the group read and committed up to the end of every partition", func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		for p, end := range ends {
			if l.commits[p] < end {
				return fmt.Errorf("partition %d: committed %d, end %d (commits %v, ends %v)", p, l.commits[p], end, l.commits, ends)
			}
		}
		return nil
	})
	r.familiesCaughtUp(ends)
	gens, _ := l.generations()
	if fmt.Sprint(gens) != fmt.Sprint(r.gens) {
		t.Errorf("the group's generations went from %v to %v", r.gens, gens)
	}
	if js := r.tp.joinsSince("member-", r.stableAt); len(js) > 0 {
		t.Errorf("the group joined again after it was stable: %v", js)
	}
	l.mu.Lock()
	var late []string
	for _, e := range l.events {
		if e.at.After(r.stableAt) {
			late = append(late, e.String())
		}
	}
	commits := map[int32]int64{}
	for p, o := range l.commits {
		commits[p] = o
	}
	l.mu.Unlock()
	if len(late) > 0 {
		t.Errorf("assignment changes after the group was stable: %s", firstFew(late))
	}
	r.checkOffsetFetch(commits)
	// Members that leave at the end rebalance the group: answers from then on are not checked.
	stopping := time.Now()
	l.stopGroup()
	acked := map[string]pos{}
	l.mu.Lock()
	for v, at := range l.acked {
		acked[v] = at
	}
	l.mu.Unlock()
	famProblems := r.familyProblems(acked, stopping)

	stored := readAll(t, r.f, r.tp, ends)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.prodErrs) > 0 {
		t.Errorf("producers gave up on records: %v", l.prodErrs[:min(5, len(l.prodErrs))])
	}
	if len(l.commitErr) > 0 {
		t.Logf("commits that failed (the checks of what was committed follow): %v", l.commitErr[:min(5, len(l.commitErr))])
	}
	if len(l.acked) == 0 {
		t.Fatal("no record was acknowledged")
	}
	problems := append(l.storedProblemsLocked(stored), l.orderProblemsLocked()...)
	problems = append(problems, famProblems...)
	for v, at := range l.acked {
		switch reads := l.reads[at]; {
		case len(reads) == 0:
			problems = append(problems, fmt.Sprintf("%s at %d/%d was never read by the group", v, at.p, at.off))
		case len(reads) > 1:
			problems = append(problems, fmt.Sprintf("%s at %d/%d was read %d times, by %v", v, at.p, at.off, len(reads), l.readBy[at]))
		case reads[0] != v:
			problems = append(problems, fmt.Sprintf("the group read %s at %d/%d, acknowledged there was %s", reads[0], at.p, at.off, v))
		}
	}
	for at, reads := range l.reads {
		if len(reads) > 1 {
			problems = append(problems, fmt.Sprintf("%d/%d was read %d times, by %v", at.p, at.off, len(reads), l.readBy[at]))
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("%d problems with the records (%d acknowledged, %d stored): %s", len(problems), len(l.acked), len(stored), firstFew(problems))
	}
	lastRead := map[int32]int64{}
	for at := range l.reads {
		lastRead[at.p] = max(lastRead[at.p], at.off+1)
	}
	for p := range int32(partitions) {
		if commits[p] != lastRead[p] {
			t.Errorf("partition %d: last commit %d, last read + 1 is %d", p, commits[p], lastRead[p])
		}
	}
	// Two members forming the group see REBALANCE_IN_PROGRESS once; from then on no answer may
	// make a member rejoin.
	var bad []string
	for _, a := range r.tp.rejoins(r.stableAt) {
		if a.at.Before(stopping) {
			bad = append(bad, a.String())
		}
	}
	if len(bad) > 0 {
		t.Errorf("members saw answers that make them rejoin: %s", firstFew(bad))
	}
	r.pr.close()
	rounds := r.pr.snapshot()
	if len(rounds) < minRounds {
		t.Errorf("only %d probe rounds, want at least %d", len(rounds), minRounds)
	}
	if sb := splitBrain(rounds); len(sb) > 0 {
		t.Errorf("two coordinators at once: %s", firstFew(sb))
	}
	r.checkVerify()
	t.Logf("%d acknowledged, %d stored, %d probe rounds; non-zero group answers: %s", len(l.acked), len(stored), len(rounds), r.tp.summary())
}

// checkOffsetFetch asks the group's current coordinator for its offsets and compares them with
// the last successful commits.
func (r *run) checkOffsetFetch(commits map[int32]int64) {
	t := r.t
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(r.f, r.tp, "admin")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fetched, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		t.Errorf("OffsetFetch of %s: %v", group, err)
		return
	}
	var got []string
	fetched.Each(func(o kadm.OffsetResponse) {
		got = append(got, fmt.Sprintf("%s/%d=%d (%v)", o.Topic, o.Partition, o.At, o.Err))
	})
	for p := range int32(partitions) {
		o, ok := fetched.Lookup(topic, p)
		switch {
		case !ok:
			t.Errorf("OffsetFetch has no offset for partition %d (last commit %d); it answered %v", p, commits[p], got)
		case o.At != commits[p]:
			t.Errorf("OffsetFetch of partition %d is %d, the last commit was %d", p, o.At, commits[p])
		}
	}
}

// checkVerify runs `iggy-kafka inspect --verify` on the fleet's log: whatever the scenario did
// (stops, crashes, drains), the log holds no finding, claims among them: each claim is numbered
// above every earlier one from the first start on.
func (r *run) checkVerify() {
	t := r.t
	t.Helper()
	if len(r.f.iggy) == 0 {
		return // kfake's brokers, no coordinator log
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := r.f.command(ctx, "inspect", "--verify", "--iggy", r.f.iggyAddr())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("inspect --verify after the scenario: %v\n%s", err, out)
		return
	}
	t.Logf("inspect --verify: %s", strings.TrimSpace(string(out)))
}
