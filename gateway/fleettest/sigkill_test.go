package fleettest

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// sigkillRoundsEnv asks TestMeasureSigkillCost for its number of SIGKILLs:
// FLEETTEST_SIGKILL_ROUNDS=20 CGO_ENABLED=1 go test -run TestMeasureSigkillCost -v ./gateway/fleettest
const sigkillRoundsEnv = "FLEETTEST_SIGKILL_ROUNDS"

// sigkillFamiliesEnv, when set, keeps only the families whose slugs it lists, comma-separated
// (franz-classic, franz-848, rdkafka-classic, rdkafka-consumer, java-classic, java-consumer):
// FLEETTEST_SIGKILL_FAMILIES=franz-classic FLEETTEST_SIGKILL_ROUNDS=20 go test -run TestMeasureSigkillCost -v ./gateway/fleettest
const sigkillFamiliesEnv = "FLEETTEST_SIGKILL_FAMILIES"

// sigkillGroup is the stem of the groups' names; every family's group hashes to its log
// partition, so the SIGKILL of that partition's coordinator hits every family at once.
const sigkillGroup = "sigkill"

// TestSigkillCoordinatorGroups is one round of TestMeasureSigkillCost, in the test command: the
// coordinator of a consumer group of every client family and protocol SIGKILLed under load and
// started again. It asserts the invariants that hold whatever a client does on the crash: every
// acknowledged record stored once at its offset and delivered to every group, and no group given
// a record again below an offset it committed. What the crash costs (rebalances, duplicates,
// stalls) is logged, not asserted.
func TestSigkillCoordinatorGroups(t *testing.T) { sigkillRounds(t, 1) }

// TestMeasureSigkillCost SIGKILLs the groups' coordinator sigkillRoundsEnv times, each time
// starting it again and letting it take log partitions back before the next, and reports per
// family and protocol: the rounds in which a group rebalanced (an assignment or generation
// change) after the kill and after the restart, the records delivered twice, and the longest
// time from a record's send to its first delivery.
func TestMeasureSigkillCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(sigkillRoundsEnv))
	if n <= 0 {
		t.Skipf("a measurement: set %s to the number of SIGKILLs (20 for the documented figures)", sigkillRoundsEnv)
	}
	sigkillRounds(t, n)
}

// sigkillRound is when one round's kill and restart happened, and when the load was read again
// after the restart. A change seen from the restart to the next round's kill counts against the
// restart.
type sigkillRound struct {
	id                     int32
	kill, restart, settled time.Time
	// namedDead is how long after the kill a surviving gateway still named the killed one as
	// the groups' coordinator (FindCoordinator, asked every findEvery).
	namedDead time.Duration
}

func sigkillRounds(t *testing.T, n int) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	pr := startProbe(t, f, tp, probeInterval, true)

	sent := &sentTimes{m: map[string]time.Time{}}
	l := newLoad(t, f, tp)
	l.onSend = sent.send
	l.startProducers()
	producing := true
	t.Cleanup(func() {
		if producing {
			l.prodCancel()
			l.prodWG.Wait()
			for _, cl := range l.prods {
				cl.Close()
			}
		}
	})

	families := append(append([]groupFamily{franzFamily(false), franzFamily(true)}, rdkafkaFamilies(t)...), javaFamilies()...)
	if only := os.Getenv(sigkillFamiliesEnv); only != "" {
		keep := strings.Split(only, ",")
		families = slices.DeleteFunc(families, func(fam groupFamily) bool { return !slices.Contains(keep, fam.slug) })
		if len(families) == 0 {
			t.Fatalf("%s=%q names no family", sigkillFamiliesEnv, only)
		}
	}
	logPart := LogPartition(sigkillGroup)
	recs := make([]*groupRecorder, len(families))
	stops := make([]func(), len(families))
	for i, fam := range families {
		recs[i] = newGroupRecorder(fam.name, sent)
		stops[i] = fam.start(t, f, familyGroup(sigkillGroup+"-"+fam.slug, logPart), recs[i])
		t.Cleanup(stops[i])
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, rec := range recs {
				rec.mu.Lock()
				t.Logf("%s: events %v; errors %v", rec.family, rec.events, rec.errs)
				rec.mu.Unlock()
			}
		}
	})
	checkfor.Eventually(t, 90*time.Second, "every family's group stable", func() error {
		for _, rec := range recs {
			if err := rec.stable(); err != nil {
				return fmt.Errorf("%s: %w", rec.family, err)
			}
		}
		return nil
	})
	progress := func(from time.Time, what string) {
		t.Helper()
		checkfor.Eventually(t, recovery, what, func() error {
			for _, rec := range recs {
				if got := rec.readSince(from); got < readProgress {
					return fmt.Errorf("%s: %d records sent since %s read (want %d)", rec.family, got, from.Format("15:04:05.000"), readProgress)
				}
			}
			return nil
		})
	}
	progress(time.Now(), "every family's group reading")

	var rounds []sigkillRound
	for i := range n {
		owners := pr.waitAllServed(t, 30*time.Second, fmt.Sprintf("round %d", i+1))
		g := f.gw(owners[logPart])
		var rd sigkillRound
		fw := watchFind(pr, g.id, familyGroup(sigkillGroup+"-"+families[0].slug, logPart))
		rd.id, rd.kill = g.id, time.Now()
		g.kill(t)
		progress(rd.kill, fmt.Sprintf("round %d: every group reading after gateway %d's SIGKILL", i+1, g.id))
		rd.restart = time.Now()
		named, answers := fw.stop(g.id)
		for _, d := range named {
			rd.namedDead = max(rd.namedDead, d)
		}
		t.Logf("round %d: FindCoordinator after the kill, each change of answer: %s", i+1, answers)
		f.restart(g)
		settled(t, pr, g.id)
		progress(time.Now(), fmt.Sprintf("round %d: every group reading after gateway %d's restart", i+1, g.id))
		rd.settled = time.Now()
		rounds = append(rounds, rd)
		t.Logf("round %d: gateway %d SIGKILLed at %s, restarted after %v, serving again after %v", i+1, g.id,
			rd.kill.Format("15:04:05.000"), rd.restart.Sub(rd.kill).Round(time.Millisecond), rd.settled.Sub(rd.restart).Round(time.Millisecond))
	}

	l.stopProducers()
	producing = false
	ends := endOffsets(t, f, tp)
	checkfor.Eventually(t, recovery, "every group read and committed to the end", func() error {
		for _, rec := range recs {
			if err := rec.caughtUp(ends); err != nil {
				return err
			}
		}
		return nil
	})
	for _, stop := range stops {
		stop()
	}
	stored := readAll(t, f, tp, ends)
	l.mu.Lock()
	acked := map[string]pos{}
	for v, at := range l.acked {
		acked[v] = at
	}
	problems := l.storedProblemsLocked(stored)
	if len(l.prodErrs) > 0 {
		t.Errorf("producers gave up on records: %v", l.prodErrs[:min(5, len(l.prodErrs))])
	}
	l.mu.Unlock()
	for _, rec := range recs {
		problems = append(problems, rec.problems(acked)...)
	}
	if len(problems) > 0 {
		t.Errorf("%d problems (%d acknowledged): %s", len(problems), len(acked), firstFew(problems))
	}
	var namedDead []time.Duration
	for _, rd := range rounds {
		namedDead = append(namedDead, rd.namedDead)
	}
	t.Logf("%d acknowledged, %d stored; %d SIGKILLs of the groups' coordinator (log partition %d); the survivors named the killed gateway in FindCoordinator for up to %v after the kill (median of rounds %v)\n%s",
		len(acked), len(stored), len(rounds), logPart, pct(namedDead, 100), pct(namedDead, 50), sigkillTable(recs, rounds))
}

// sigkillTable is the cost of the rounds per family, as docs/reliability.md shows it. A round's
// stall is the longest time from a record's send to its first delivery over the records sent
// from the kill to the restart (after the kill) and from the restart to the next round's kill
// (after the restart); the table gives the median and the worst over the rounds.
func sigkillTable(recs []*groupRecorder, rounds []sigkillRound) string {
	var b strings.Builder
	b.WriteString("| Client, protocol | SIGKILLs | Rounds rebalanced after the kill / after the restart | Deliveries of a record read before | Stall after the kill, median / worst | Stall after the restart, median / worst |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, rec := range recs {
		killed, restarted := 0, 0
		var examples []string
		var afterKill, afterRestart []time.Duration
		var worstKill, worstRestart string
		for i, rd := range rounds {
			end := rd.settled
			if i+1 < len(rounds) {
				end = rounds[i+1].kill
			}
			if es := rec.eventsWithin(rd.kill, rd.restart); len(es) > 0 {
				killed++
				examples = append(examples, fmt.Sprint(es))
			}
			if es := rec.eventsWithin(rd.restart, end); len(es) > 0 {
				restarted++
				examples = append(examples, fmt.Sprint(es))
			}
			d, which := rec.longestStall(rd.kill, rd.restart)
			if len(afterKill) == 0 || d > slices.Max(afterKill) {
				worstKill = fmt.Sprintf("round %d: %s", i+1, which)
			}
			afterKill = append(afterKill, d)
			d, which = rec.longestStall(rd.restart, end)
			if len(afterRestart) == 0 || d > slices.Max(afterRestart) {
				worstRestart = fmt.Sprintf("round %d: %s", i+1, which)
			}
			afterRestart = append(afterRestart, d)
		}
		fmt.Fprintf(&b, "| %s | %d | %d / %d | %d | %v / %v | %v / %v |\n", rec.family, len(rounds), killed, restarted,
			rec.duplicates(), pct(afterKill, 50), pct(afterKill, 100), pct(afterRestart, 50), pct(afterRestart, 100))
		fmt.Fprintf(&b, "  %s: worst after the kill %s; after the restart %s\n", rec.family, worstKill, worstRestart)
		if len(examples) > 0 {
			rec.mu.Lock()
			errs := append([]string(nil), rec.errs...)
			rec.mu.Unlock()
			fmt.Fprintf(&b, "  %s rebalances: %s; errors the members went on after: %s\n", rec.family, firstFew(examples), firstFew(errs))
		}
	}
	return b.String()
}
