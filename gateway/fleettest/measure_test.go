package fleettest

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// measureEnv turns the measurement on: FLEETTEST_MEASURE=1 go test ./gateway/fleettest -run TestMeasure -v
const measureEnv = "FLEETTEST_MEASURE"

// TestMeasureHandover reports (it asserts nothing about the figures) how long a Kafka client
// waits for another gateway to serve each coordinator log partition of a gateway that was
// stopped: after SIGTERM (it leaves the lease group first) and after SIGKILL (the embedded store
// ends its session when its connections close). The probe asks every gateway every 20 ms, so a
// figure is the SIGTERM or SIGKILL to the first answer 0 from another gateway, to within 20 ms.
func TestMeasureHandover(t *testing.T) {
	if os.Getenv(measureEnv) != "1" {
		t.Skipf("a measurement, not a check: set %s=1 to run it", measureEnv)
	}
	f := startFleet(t)
	tp := &tap{}
	pr := startProbe(t, f, tp, 20*time.Millisecond, true)
	r := &run{t: t, f: f, tp: tp, pr: pr}
	pr.waitAllServed(t, 20*time.Second, "the fleet up")

	var term, kill []time.Duration
	stopOne := func(g *gw, crash bool) {
		t.Helper()
		before := settled(t, pr, g.id)
		at := time.Now()
		if crash {
			g.kill(t)
		} else {
			g.term(t, exitLimit)
		}
		moved := r.handover(g.id, at, before, 30*time.Second)
		for _, d := range moved {
			if crash {
				kill = append(kill, d)
			} else {
				term = append(term, d)
			}
		}
		t.Logf("gateway %d %s: %d partitions served elsewhere after %v", g.id, map[bool]string{false: "SIGTERM", true: "SIGKILL"}[crash], len(moved), sortedDurations(moved))
		f.restart(g)
		pr.waitAllServed(t, 20*time.Second, fmt.Sprintf("gateway %d back", g.id))
	}
	for range 3 {
		for _, g := range f.gws {
			stopOne(g, false)
		}
	}
	for _, g := range f.gws {
		stopOne(g, true)
	}
	if splits := splitBrain(pr.snapshot()); len(splits) > 0 {
		t.Logf("rounds with two coordinators of one group: %s", firstFew(splits))
	}
	t.Logf("SIGTERM handover over %d partitions: p50 %v, p90 %v, max %v", len(term), pct(term, 50), pct(term, 90), pct(term, 100))
	t.Logf("SIGKILL takeover (embedded store) over %d partitions: p50 %v, p90 %v, max %v", len(kill), pct(kill, 50), pct(kill, 90), pct(kill, 100))
}

// settled waits until every partition is served and gateway id serves at least one of them,
// and returns the owners.
func settled(t *testing.T, pr *probe, id int32) [LogPartitions]int32 {
	t.Helper()
	var owners [LogPartitions]int32
	checkfor.Eventually(t, 30*time.Second, fmt.Sprintf("gateway %d serving log partitions", id), func() error {
		owners = pr.owners()
		n := 0
		for _, o := range owners {
			if o == 0 {
				return fmt.Errorf("owners %v", owners)
			}
			if o == id {
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("owners %v", owners)
		}
		return nil
	})
	return owners
}

func sortedDurations(m map[int]time.Duration) []time.Duration {
	var out []time.Duration
	for _, d := range m {
		out = append(out, d.Round(time.Millisecond))
	}
	slices.Sort(out)
	return out
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(time.Millisecond)
}
