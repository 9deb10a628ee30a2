// Package clock is the time source of everything in the gateway and the store that waits or
// times out: consumer-group sessions, long polls, rebalance and session timeouts. Production code
// takes a Clock and uses Real; tests take a *Fake and move time by hand, so a timeout fires
// exactly when the test says and never because the machine was slow.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on C once d has passed.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a stoppable one-shot timer. C is nil for timers made by AfterFunc.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was still pending.
	Reset(d time.Duration) bool
}

// Real is the wall clock.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{t: time.NewTimer(d)} }

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Or returns c, or Real when c is nil, so that a zero Config field means the wall clock.
func Or(c Clock) Clock {
	if c == nil {
		return Real
	}
	return c
}

// Fake is a clock that moves only when Advance or Set is called. Timers due at or before the new
// time fire in order of their deadlines, before Advance returns.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// waiters are woken whenever a timer is added, for BlockUntil.
	waiters []chan struct{}
}

// NewFake returns a Fake clock set to start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now reports the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer on the fake clock.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	f.add(t, d)
	return t
}

// AfterFunc runs fn in its own goroutine once the fake time has moved d ahead.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	t := &fakeTimer{f: f, fn: fn}
	f.add(t, d)
	return t
}

func (f *Fake) add(t *fakeTimer, d time.Duration) {
	f.mu.Lock()
	t.when = f.now.Add(d)
	t.pending = true
	f.timers = append(f.timers, t)
	ws := f.waiters
	f.waiters = nil
	f.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
	if d <= 0 {
		f.Advance(0)
	}
}

// Timers reports how many timers are pending.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.pending {
			n++
		}
	}
	return n
}

// Added returns a channel closed the next time a timer is created or reset, so that a test can
// wait for the code under test to start waiting before it moves the clock.
func (f *Fake) Added() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := make(chan struct{})
	f.waiters = append(f.waiters, w)
	return w
}

// Advance moves the clock d ahead and fires every timer that came due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	// A timer that fired may be Reset by its owner at once, while the due ones are still being
	// sent: sort by the deadlines read under the lock, never by the timers' fields.
	type firing struct {
		t    *fakeTimer
		when time.Time
	}
	var due []firing
	keep := f.timers[:0]
	for _, t := range f.timers {
		switch {
		case !t.pending:
		case !t.when.After(now):
			t.pending = false
			due = append(due, firing{t, t.when})
		default:
			keep = append(keep, t)
		}
	}
	f.timers = keep
	f.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].when.Before(due[j].when) })
	for _, d := range due {
		if d.t.fn != nil {
			go d.t.fn()
		} else {
			select {
			case d.t.c <- now:
			default:
			}
		}
	}
}

type fakeTimer struct {
	f       *Fake
	when    time.Time
	pending bool
	c       chan time.Time
	fn      func()
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	was := t.pending
	t.pending = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	was := t.pending
	if !was {
		t.f.timers = append(t.f.timers, t)
	}
	t.pending = true
	t.when = t.f.now.Add(d)
	ws := t.f.waiters
	t.f.waiters = nil
	t.f.mu.Unlock()
	for _, w := range ws {
		close(w)
	}
	if d <= 0 {
		t.f.Advance(0)
	}
	return was
}
