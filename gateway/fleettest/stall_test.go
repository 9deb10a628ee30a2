package fleettest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// Stall bounds of issue 17, for clients with their library's default settings (no metadata
// tuning).
const (
	termStall = 500 * time.Millisecond
	killStall = 1500 * time.Millisecond
)

// stallEvery is how often a stall load produces one record, round robin over the partitions.
const stallEvery = 5 * time.Millisecond

// TestClientStallAfterStop measures what a gateway's SIGTERM and SIGKILL cost clients that keep
// franz-go's defaults: the worst produce latency (produce call to acknowledgement) of the records
// produced around the signal, and the worst consume delay (acknowledgement to a plain
// consumer's read) of the records acknowledged after it. A SIGTERMed gateway leaves the fleet,
// waits until the others name it leader of nothing, and answers NOT_LEADER_OR_FOLLOWER before it
// closes (a lame duck), so clients move before their connections break; a SIGKILLed one is out
// of the first Metadata answered after its lease membership ended.
func TestClientStallAfterStop(t *testing.T) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	s := startStallLoad(t, f)
	defer s.stop()
	measureStalls(t, f, s.times, s.minAgePassed)
}

// measureStalls SIGTERMs gateway 2, restarts it, SIGKILLs it and restarts it again under a
// running stall load, and fails the test when a worst produce latency or consume delay is above
// its bound. ready, called before each signal, waits until the clients would act on the stop at
// once (what a library's own rate limits need).
//
// The same gateway twice, because a client keeps idle connections to a gateway that stopped
// leading its partitions and learns that they died only when it uses one again: had the
// restarted gateway 2 taken partitions over at the SIGKILL of another, franz-go would have found
// its old connections to it dead and retried after its backoff (250 ms to 1 s), a cost of the
// restart, not of the SIGKILL (docs/design.md, "Stalls when a gateway goes").
func measureStalls(t *testing.T, f *fleet, st *stallTimes, ready func(*testing.T)) {
	t.Helper()
	st.waitFlowing(t, "the load before the first stop")
	for _, c := range []struct {
		id    int32
		crash bool
		bound time.Duration
	}{{2, false, termStall}, {2, true, killStall}} {
		g := f.gw(c.id)
		ready(t)
		st.steady(t)
		at := time.Now()
		what := "SIGTERM"
		if c.crash {
			what = "SIGKILL"
			g.kill(t)
		} else {
			g.term(t, exitLimit)
		}
		// Records produced from a second before the signal to three seconds after it, once all of
		// them are acknowledged and read.
		from, to := at.Add(-time.Second), at.Add(3*time.Second)
		checkfor.Eventually(t, 30*time.Second, what+": every record of the window acknowledged and read", func() error {
			return st.settled(from, to)
		})
		prod, cons := st.worst(from, to)
		t.Logf("%s: gateway %d %s at %s: worst produce latency %v, worst consume delay %v (bound %v)",
			st.client, c.id, what, at.Format("15:04:05.000"), prod, cons, c.bound)
		if prod.d > c.bound || cons.d > c.bound {
			t.Errorf("%s: gateway %d %s stalled clients: produce %v, consume %v, bound %v", st.client, c.id, what, prod.d, cons.d, c.bound)
		}
		f.restart(g)
		st.waitFlowing(t, fmt.Sprintf("the load with gateway %d back", c.id))
	}
}

// stallTimes is when each record of a stall load was produced, acknowledged and read, whatever
// client library moved it.
type stallTimes struct {
	client string // the library, for the log

	mu      sync.Mutex
	records map[string]*timing
	errs    []error
}

type timing struct{ produced, acked, read time.Time }

func newStallTimes(client string) *stallTimes {
	return &stallTimes{client: client, records: map[string]*timing{}}
}

// produced records that the n-th record is sent now and returns its value.
func (st *stallTimes) produced(n int) string {
	v := fmt.Sprintf("stall-%07d", n)
	st.mu.Lock()
	st.records[v] = &timing{produced: time.Now()}
	st.mu.Unlock()
	return v
}

// acked records the producer's answer for value v; an error is kept unless the load is ending.
func (st *stallTimes) acked(v string, err error, ending bool) {
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err != nil {
		if !ending {
			st.errs = append(st.errs, fmt.Errorf("%s: %w", v, err))
		}
		return
	}
	if tm, ok := st.records[v]; ok && tm.acked.IsZero() {
		tm.acked = now
	}
}

// read records values read at now (a value read twice keeps its first read).
func (st *stallTimes) read(now time.Time, values ...string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, v := range values {
		if tm, ok := st.records[v]; ok && tm.read.IsZero() {
			tm.read = now
		}
	}
}

// waitFlowing waits until records produced from now on are acknowledged and read.
func (st *stallTimes) waitFlowing(t *testing.T, what string) {
	t.Helper()
	from := time.Now()
	checkfor.Eventually(t, 30*time.Second, st.client+": "+what, func() error {
		st.mu.Lock()
		defer st.mu.Unlock()
		if len(st.errs) > 0 {
			t.Fatalf("%s: produce failed: %v", st.client, st.errs[0])
		}
		n := 0
		for _, tm := range st.records {
			if tm.produced.After(from) && !tm.acked.IsZero() && !tm.read.IsZero() {
				n++
			}
		}
		if n < 100 {
			return fmt.Errorf("%d records produced since %v acknowledged and read", n, from.Format("15:04:05.000"))
		}
		return nil
	})
}

// steady waits until the records of the last second (but its last 200 ms, which may be in
// flight) were all acknowledged and read within 200 ms each: the window a measurement starts a
// second before its signal must not hold what a client's start or an earlier stop cost.
func (st *stallTimes) steady(t *testing.T) {
	t.Helper()
	checkfor.Eventually(t, 30*time.Second, st.client+": a steady second", func() error {
		now := time.Now()
		from, to := now.Add(-1200*time.Millisecond), now.Add(-200*time.Millisecond)
		if n := st.producedWithin(from, to); n < 100 {
			return fmt.Errorf("%d records produced in the second", n)
		}
		if err := st.settledWithin(from, to); err != nil {
			return err
		}
		if prod, cons := st.worst(from, to); prod.d > 200*time.Millisecond || cons.d > 200*time.Millisecond {
			return fmt.Errorf("worst produce latency %v, consume delay %v", prod, cons)
		}
		return nil
	})
}

// settled: every record produced in [from, to) is acknowledged and read, and none failed.
func (st *stallTimes) settled(from, to time.Time) error {
	if time.Now().Before(to) {
		return fmt.Errorf("the window ends at %v", to.Format("15:04:05.000"))
	}
	return st.settledWithin(from, to)
}

// producedWithin is how many records were produced in [from, to).
func (st *stallTimes) producedWithin(from, to time.Time) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := 0
	for _, tm := range st.records {
		if !tm.produced.Before(from) && tm.produced.Before(to) {
			n++
		}
	}
	return n
}

func (st *stallTimes) settledWithin(from, to time.Time) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.errs) > 0 {
		return fmt.Errorf("produce failed: %v", st.errs[0])
	}
	var missing []string
	for v, tm := range st.records {
		if !tm.produced.Before(from) && tm.produced.Before(to) && (tm.acked.IsZero() || tm.read.IsZero()) {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%d records of the window not yet acknowledged and read, first %s", len(missing), missing[0])
	}
	return nil
}

// worst is the worst produce latency and consume delay of the records produced in [from, to),
// and the records they were measured on. A record read before its acknowledgement arrived counts
// no consume delay.
func (st *stallTimes) worst(from, to time.Time) (produce, consume stallWorst) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for v, tm := range st.records {
		if tm.produced.Before(from) || !tm.produced.Before(to) {
			continue
		}
		if d := tm.acked.Sub(tm.produced); d > produce.d {
			produce = stallWorst{d, v, *tm}
		}
		if d := tm.read.Sub(tm.acked); d > consume.d {
			consume = stallWorst{d, v, *tm}
		}
	}
	return produce, consume
}

// stallWorst is a worst figure and the record it was measured on.
type stallWorst struct {
	d     time.Duration
	value string
	tm    timing
}

func (w stallWorst) String() string {
	var n int
	fmt.Sscanf(w.value, "stall-%d", &n)
	return fmt.Sprintf("%v (%s, partition %d, produced %s, acknowledged %s, read %s)", w.d, w.value, n%partitions,
		w.tm.produced.Format("15:04:05.000"), w.tm.acked.Format("15:04:05.000"), w.tm.read.Format("15:04:05.000"))
}

// stallLoad is one default-settings franz-go producer writing round robin over the topic's
// partitions every stallEvery and one default-settings consumer of every partition.
type stallLoad struct {
	prod, cons *kgo.Client
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	times      *stallTimes
	meta       *metadataTimes
}

// metadataTimes is a kgo hook that keeps when the producer last read a Metadata answer.
type metadataTimes struct {
	mu   sync.Mutex
	last time.Time
}

func (m *metadataTimes) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 3 && err == nil { // Metadata
		m.mu.Lock()
		m.last = time.Now()
		m.mu.Unlock()
	}
}

// minAgePassed waits until the producer's last Metadata answer is older than franz-go's default
// MetadataMinAge (5 s), so that the refresh a stop makes it ask for goes out at once: a client
// that refreshed less than 5 s before would wait out the rest of those 5 s against any broker.
func (s *stallLoad) minAgePassed(t *testing.T) {
	t.Helper()
	checkfor.Eventually(t, 30*time.Second, "the producer's metadata older than 5 s", func() error {
		s.meta.mu.Lock()
		age := time.Since(s.meta.last)
		s.meta.mu.Unlock()
		if age < 5*time.Second+200*time.Millisecond {
			return fmt.Errorf("last metadata %v ago", age)
		}
		return nil
	})
}

// kgoLogEnv names a file that gets the franz-go debug log of the stall load and of the franz-go
// group families' members (appended, each line naming its member); logging changes nothing the
// clients do.
const kgoLogEnv = "FLEETTEST_KGO_LOG"

func startStallLoad(t *testing.T, f *fleet) *stallLoad {
	t.Helper()
	var logOpts []kgo.Opt
	if name := os.Getenv(kgoLogEnv); name != "" {
		lf, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lf.Close() })
		logOpts = append(logOpts, kgo.WithLogger(kgo.BasicLogger(lf, kgo.LogLevelDebug, func() string {
			return time.Now().Format("15:04:05.000 ")
		})))
	}
	metaHook := &metadataTimes{}
	prod, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(f.seeds()...), kgo.ClientID("stall-producer"),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(metaHook)}, logOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(f.seeds()...), kgo.ClientID("stall-consumer"),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, logOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &stallLoad{prod: prod, cons: cons, cancel: cancel, times: newStallTimes("franz-go"), meta: metaHook}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(stallEvery)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			v := s.times.produced(n)
			prod.Produce(ctx, &kgo.Record{Value: []byte(v), Partition: int32(n % partitions)}, func(r *kgo.Record, err error) {
				s.times.acked(v, err, ctx.Err() != nil)
			})
		}
	}()
	go func() {
		defer s.wg.Done()
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			now := time.Now()
			var vs []string
			fs.EachRecord(func(r *kgo.Record) { vs = append(vs, string(r.Value)) })
			s.times.read(now, vs...)
		}
	}()
	return s
}

func (s *stallLoad) stop() {
	s.cancel()
	s.wg.Wait()
	s.prod.Close()
	s.cons.Close()
}
