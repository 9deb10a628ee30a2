package quota

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Source is where the fleet's quotas are kept (the bridge, in Iggy): entity encoding -> key ->
// decimal value.
type Source interface {
	ClientQuotas(ctx context.Context) (map[string]map[string]string, error)
}

// Config configures a Manager.
type Config struct {
	// Source is read at Start and every Refresh after.
	Source Source
	// Refresh is how often the quotas are read again; default 1s. A change made through any
	// gateway of the fleet is enforced by every other within Refresh and one read.
	Refresh time.Duration
	// WindowSize and Windows are the rates' samples (Kafka's quota.window.size.seconds and
	// quota.window.num); default 1s and 11.
	WindowSize time.Duration
	Windows    int
	// Clock times the rates and the refresh; default the wall clock.
	Clock  clock.Clock
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultRefresh    = time.Second
	DefaultWindowSize = time.Second
	DefaultWindows    = 11
)

// Manager is one gateway's view of the fleet's quotas and the rates it measures against
// them. Its methods are safe for concurrent use.
type Manager struct {
	cfg Config

	// table is read without a lock, so that a request pays no lock when no quota applies.
	table atomic.Pointer[Table]

	mu      sync.Mutex
	sensors map[sensorID]*sensor

	nudge chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	// started: Start ran, so Close waits for done.
	started atomic.Bool
}

type sensorID struct {
	key  string
	tags Tags
}

type sensor struct {
	r    rate
	last int64
}

// New returns a Manager with no quotas until Start or Set.
func New(cfg Config) *Manager {
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.WindowSize <= 0 {
		cfg.WindowSize = DefaultWindowSize
	}
	if cfg.Windows < 2 {
		cfg.Windows = DefaultWindows
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		cfg:     cfg,
		sensors: map[sensorID]*sensor{},
		nudge:   make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	m.table.Store(&Table{})
	return m
}

// Start reads the quotas now and starts the goroutine that reads them every Refresh, until
// Close. A failed read keeps the quotas last read and is logged; the next tick tries again.
func (m *Manager) Start() {
	if m.started.Swap(true) {
		return
	}
	go m.run()
}

func (m *Manager) run() {
	defer close(m.done)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-m.stop
		cancel()
	}()
	defer cancel()
	failing := false
	for {
		if m.cfg.Source != nil {
			stored, err := m.cfg.Source.ClientQuotas(ctx)
			switch {
			case err != nil && ctx.Err() == nil && !failing:
				m.cfg.Logger.Warn("reading client quotas failed; enforcing the last read", "err", err)
				failing = true
			case err == nil:
				if failing {
					m.cfg.Logger.Info("reading client quotas again")
				}
				failing = false
				m.Set(TableOf(stored))
			}
		}
		m.expire()
		t := m.cfg.Clock.NewTimer(m.cfg.Refresh)
		select {
		case <-t.C():
		case <-m.nudge:
			t.Stop()
		case <-m.stop:
			t.Stop()
			return
		}
	}
}

// Refresh makes the goroutine read the quotas again now (after a change through this
// gateway), without waiting for the answer.
func (m *Manager) Refresh() {
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// Close ends the refresh goroutine and waits for it; a Manager never started closes at once.
func (m *Manager) Close() {
	m.once.Do(func() { close(m.stop) })
	if m.started.Load() {
		<-m.done
	}
}

// Set replaces the quotas enforced.
func (m *Manager) Set(t Table) {
	m.table.Store(&t)
}

// Resolve is the quota of key that applies to user and clientID now.
func (m *Manager) Resolve(key, user, clientID string) (Resolved, bool) {
	return m.table.Load().Resolve(key, user, clientID)
}

// Limited reports whether any quota applies to user and clientID now.
func (m *Manager) Limited(user, clientID string) bool {
	t := m.table.Load()
	for key := range keys {
		if _, ok := t.Resolve(key, user, clientID); ok {
			return true
		}
	}
	return false
}

// MaxInWindow is the most of key that one request may bring without being throttled for it
// alone, the limit over Windows-1 samples: Kafka caps a Fetch's bytes at it, so that a
// client under a small consumer_byte_rate is not answered empty forever. ok is false when no
// quota applies.
func (m *Manager) MaxInWindow(key, user, clientID string) (max float64, ok bool) {
	q, ok := m.Resolve(key, user, clientID)
	if !ok {
		return 0, false
	}
	return q.Limit * float64(m.cfg.Windows-1) * m.cfg.WindowSize.Seconds(), true
}

// Record adds v to the rate of key that user and clientID share, and returns how long they
// are throttled for it: zero when no quota applies or the rate is within it. Kafka records
// first and then checks, so a value that goes over is counted.
func (m *Manager) Record(key, user, clientID string, v float64) time.Duration {
	q, ok := m.Resolve(key, user, clientID)
	if !ok {
		return 0
	}
	now := m.cfg.Clock.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	id := sensorID{key: key, tags: q.Tags}
	s := m.sensors[id]
	if s == nil {
		s = &sensor{}
		m.sensors[id] = s
	}
	s.last = now
	s.r.record(v, now, m.cfg.WindowSize, m.cfg.Windows)
	d := s.r.throttle(q.Limit, now, m.cfg.WindowSize, m.cfg.Windows)
	if key == RequestPercentage {
		d = min(d, m.cfg.WindowSize)
	}
	return d
}

// Unrecord takes back v recorded at now (a throttled fetch answers no records, so its bytes
// do not count), as Kafka records the negative.
func (m *Manager) Unrecord(key, user, clientID string, v float64) {
	q, ok := m.Resolve(key, user, clientID)
	if !ok {
		return
	}
	now := m.cfg.Clock.Now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sensors[sensorID{key: key, tags: q.Tags}]; s != nil {
		s.r.record(-v, now, m.cfg.WindowSize, m.cfg.Windows)
	}
}

// Sensors is the number of rates kept, for tests and metrics.
func (m *Manager) Sensors() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sensors)
}

// expire drops the rates nothing was recorded in for the whole window: they measure zero.
func (m *Manager) expire() {
	now := m.cfg.Clock.Now().UnixNano()
	span := int64(m.cfg.Windows) * int64(m.cfg.WindowSize)
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, s := range m.sensors {
		if now-s.last >= span {
			delete(m.sensors, id)
		}
	}
}
