package quota

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

func managerWith(t *testing.T, clk clock.Clock, key string, limit float64) *Manager {
	t.Helper()
	m := New(Config{Clock: clk})
	m.Set(Table{key: {Entity{User: dflt}: limit}})
	return m
}

// TestRateWindows follows Kafka's Rate over 11 one-second samples on a fake clock, with the
// throttle times worked out by hand.
func TestRateWindows(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	m := managerWith(t, clk, ProducerByteRate, 1000)
	rec := func(v float64) time.Duration { return m.Record(ProducerByteRate, "alice", "app", v) }
	// A new client's rate is over at least 10 windows: 10,000 bytes at once is 1,000/s.
	if d := rec(10000); d != 0 {
		t.Fatalf("10000 bytes in a new window: throttled %v", d)
	}
	// 11,000 over 10 s is 1,100/s: (1100-1000)/1000 * 10 s.
	if d := rec(1000); d != time.Second {
		t.Fatalf("at 1100/s: throttled %v, want 1s", d)
	}
	// Another user has a rate of its own under the default user quota.
	if d := m.Record(ProducerByteRate, "bob", "app", 5000); d != 0 {
		t.Fatalf("bob throttled %v by alice's bytes", d)
	}
	// 10.5 s later: 11,001 over 10.5 s, 1047.7/s: 0.0477 * 10.5 s.
	clk.Advance(10500 * time.Millisecond)
	if d := rec(1); d != 501*time.Millisecond {
		t.Fatalf("at 10.5s: throttled %v, want 501ms", d)
	}
	// At 11 s the first sample has expired: 1 byte over 10 s.
	clk.Advance(500 * time.Millisecond)
	if d := rec(1); d != 0 {
		t.Fatalf("at 11s: throttled %v, want none", d)
	}
	// Taking bytes back (a throttled fetch) lowers the rate: 11,002 bytes over 10.5 s (the
	// oldest sample began at 10.5 s), then 9,000 taken back.
	if d := rec(11000); d != 502*time.Millisecond {
		t.Fatalf("11,002 bytes over 10.5 s: throttled %v, want 502ms", d)
	}
	m.Unrecord(ProducerByteRate, "alice", "app", 9000)
	if d := rec(0); d != 0 {
		t.Fatalf("after unrecording: throttled %v", d)
	}
}

func TestRequestPercentageCapped(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	m := managerWith(t, clk, RequestPercentage, 10)
	// 10 s of handler time in one go is 100% over 10 s, ten times the quota: Kafka caps the
	// request throttle at one window.
	if d := m.Record(RequestPercentage, "alice", "app", 1000); d != time.Second {
		t.Fatalf("throttled %v, want the 1s cap", d)
	}
	if d := m.Record(ProducerByteRate, "alice", "app", 1e12); d != 0 {
		t.Fatalf("no producer quota, throttled %v", d)
	}
}

type fakeSource struct {
	mu     sync.Mutex
	stored map[string]map[string]string
	err    error
	reads  int
}

func (s *fakeSource) ClientQuotas(context.Context) (map[string]map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	return s.stored, s.err
}

func (s *fakeSource) set(stored map[string]map[string]string, err error) {
	s.mu.Lock()
	s.stored, s.err = stored, err
	s.mu.Unlock()
}

// TestRefresh: a change in the store is enforced after one Refresh, a failed read keeps the
// quotas last read, idle rates are dropped, and Close ends the goroutine.
func TestRefresh(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	src := &fakeSource{}
	m := New(Config{Source: src, Clock: clk, Refresh: time.Second})
	added := clk.Added()
	m.Start()
	defer m.Close()
	<-added // the first read is done, the timer set
	if _, ok := m.Resolve(ProducerByteRate, "alice", "app"); ok {
		t.Fatal("a quota before any was stored")
	}
	src.set(map[string]map[string]string{EncodeEntity([]Component{{Type: TypeUser}}): {ProducerByteRate: "1000"}}, nil)
	m.Record(ProducerByteRate, "alice", "app", 1) // no quota yet: no rate kept
	added = clk.Added()
	clk.Advance(time.Second)
	<-added
	if q, ok := m.Resolve(ProducerByteRate, "alice", "app"); !ok || q.Limit != 1000 {
		t.Fatalf("after one refresh: %+v %v", q, ok)
	}
	m.Record(ProducerByteRate, "alice", "app", 1)
	if n := m.Sensors(); n != 1 {
		t.Fatalf("%d rates kept, want 1", n)
	}
	src.set(nil, errors.New("iggy is away"))
	added = clk.Added()
	clk.Advance(11 * time.Second)
	<-added
	if _, ok := m.Resolve(ProducerByteRate, "alice", "app"); !ok {
		t.Fatal("a failed read dropped the quotas")
	}
	if n := m.Sensors(); n != 0 {
		t.Fatalf("%d rates kept after 11 idle seconds, want 0", n)
	}
	// Refresh reads at once, without the clock moving.
	src.set(map[string]map[string]string{}, nil)
	m.Refresh()
	checkfor.Eventually(t, 5*time.Second, "the removed quota to be lifted", func() error {
		if _, ok := m.Resolve(ProducerByteRate, "alice", "app"); ok {
			return errors.New("the removed quota still applies")
		}
		return nil
	})
}
