package fleettest

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// Stall bounds of issue 17, for clients with franz-go's default settings (no metadata tuning).
const (
	termStall = 500 * time.Millisecond
	killStall = 1500 * time.Millisecond
)

// TestClientStallAfterStop measures what a gateway's SIGTERM, a SIGKILL, and two gateways'
// SIGTERM at once cost clients that keep franz-go's defaults: the worst produce latency (produce call to acknowledgement) of the records
// produced around the signal, and the worst consume delay (acknowledgement to a plain
// consumer's read) of the records acknowledged after it. A SIGTERMed gateway leaves the fleet,
// waits until the others stopped naming it, and answers NOT_LEADER_OR_FOLLOWER before it closes
// (a lame duck), so clients move before their connections break; a SIGKILLed one leaves Metadata
// as soon as its lease membership ends.
func TestClientStallAfterStop(t *testing.T) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	s := startStallLoad(t, f)
	defer s.stop()
	s.waitFlowing(t, "the load before the first stop")

	for _, c := range []struct {
		ids   []int32
		crash bool
		bound time.Duration
	}{{[]int32{2}, false, termStall}, {[]int32{3}, true, killStall}, {[]int32{1, 2}, false, termStall}} {
		s.minAgePassed(t)
		at := time.Now()
		what := "SIGTERM"
		if c.crash {
			what = "SIGKILL"
		}
		sig := syscall.SIGTERM
		if c.crash {
			sig = syscall.SIGKILL
		}
		for _, id := range c.ids { // at once, then wait for each
			f.gw(id).signal(t, sig)
		}
		for _, id := range c.ids {
			f.gw(id).waitExit(t, exitLimit)
		}
		// Records produced from a second before the signal to three seconds after it, once all of
		// them are acknowledged and read.
		from, to := at.Add(-time.Second), at.Add(3*time.Second)
		checkfor.Eventually(t, 30*time.Second, what+": every record of the window acknowledged and read", func() error {
			return s.settled(from, to)
		})
		prod, cons := s.worst(from, to)
		t.Logf("gateways %v %s: worst produce latency %v, worst consume delay %v (bound %v)", c.ids, what, prod, cons, c.bound)
		if prod > c.bound || cons > c.bound {
			t.Errorf("gateways %v %s stalled clients: produce %v, consume %v, bound %v", c.ids, what, prod, cons, c.bound)
		}
		for _, id := range c.ids {
			f.restart(f.gw(id))
		}
		s.waitFlowing(t, fmt.Sprintf("the load with gateways %v back", c.ids))
	}
}

// stallLoad is one default-settings producer writing round robin over the topic's partitions
// every 5 ms and one default-settings consumer of every partition, each record timed.
type stallLoad struct {
	prod, cons *kgo.Client
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	mu      sync.Mutex
	records map[string]*timing
	errs    []error
	meta    *metadataTimes
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

type timing struct{ produced, acked, read time.Time }

func startStallLoad(t *testing.T, f *fleet) *stallLoad {
	t.Helper()
	metaHook := &metadataTimes{}
	prod, err := kgo.NewClient(kgo.SeedBrokers(f.seeds()...), kgo.ClientID("stall-producer"),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.WithHooks(metaHook), stallDebug())
	if err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(f.seeds()...), kgo.ClientID("stall-consumer"),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &stallLoad{prod: prod, cons: cons, cancel: cancel, records: map[string]*timing{}, meta: metaHook}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			v := fmt.Sprintf("stall-%07d", n)
			s.mu.Lock()
			s.records[v] = &timing{produced: time.Now()}
			s.mu.Unlock()
			prod.Produce(ctx, &kgo.Record{Value: []byte(v), Partition: int32(n % partitions)}, func(r *kgo.Record, err error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				if err != nil {
					if ctx.Err() == nil {
						s.errs = append(s.errs, err)
					}
					return
				}
				s.records[v].acked = time.Now()
			})
		}
	}()
	go func() {
		defer s.wg.Done()
		for ctx.Err() == nil {
			fs := cons.PollFetches(ctx)
			now := time.Now()
			s.mu.Lock()
			fs.EachRecord(func(r *kgo.Record) {
				if tm, ok := s.records[string(r.Value)]; ok && tm.read.IsZero() {
					tm.read = now
				}
			})
			s.mu.Unlock()
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

// waitFlowing waits until records produced from now on are acknowledged and read.
func (s *stallLoad) waitFlowing(t *testing.T, what string) {
	t.Helper()
	from := time.Now()
	checkfor.Eventually(t, 30*time.Second, what, func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		n := 0
		for _, tm := range s.records {
			if tm.produced.After(from) && !tm.read.IsZero() {
				n++
			}
		}
		if n < 100 {
			return fmt.Errorf("%d records produced since %v read", n, from.Format("15:04:05.000"))
		}
		return nil
	})
}

// settled: every record produced in [from, to) is acknowledged and read, and none failed.
func (s *stallLoad) settled(from, to time.Time) error {
	if time.Now().Before(to) {
		return fmt.Errorf("the window ends at %v", to.Format("15:04:05.000"))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		return fmt.Errorf("produce failed: %v", s.errs[0])
	}
	var missing []string
	for v, tm := range s.records {
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

// worst is the worst produce latency and consume delay of the records produced in [from, to).
func (s *stallLoad) worst(from, to time.Time) (produce, consume time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tm := range s.records {
		if tm.produced.Before(from) || !tm.produced.Before(to) {
			continue
		}
		produce = max(produce, tm.acked.Sub(tm.produced))
		consume = max(consume, tm.read.Sub(tm.acked))
	}
	return produce, consume
}

func stallDebug() kgo.Opt {
	if os.Getenv("STALL_DEBUG") == "" {
		return kgo.WithLogger(nil)
	}
	return kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, func() string { return time.Now().Format("15:04:05.000 ") }))
}
