package clock

import (
	"testing"
	"time"
)

func TestFakeFiresInOrderOnlyWhenDue(t *testing.T) {
	f := NewFake(time.Unix(1000, 0))
	a := f.NewTimer(2 * time.Second)
	fired := make(chan string, 2)
	f.AfterFunc(time.Second, func() { fired <- "func" })

	f.Advance(999 * time.Millisecond)
	select {
	case <-a.C():
		t.Fatal("timer fired before its deadline")
	case s := <-fired:
		t.Fatalf("%s fired before its deadline", s)
	default:
	}
	f.Advance(time.Millisecond)
	if s := <-fired; s != "func" {
		t.Fatalf("fired %q", s)
	}
	select {
	case <-a.C():
		t.Fatal("2s timer fired at 1s")
	default:
	}
	f.Advance(time.Second)
	if got := <-a.C(); !got.Equal(time.Unix(1002, 0)) {
		t.Fatalf("timer sent %v, want the fake time", got)
	}
	if n := f.Timers(); n != 0 {
		t.Fatalf("%d timers pending after all fired", n)
	}
}

func TestFakeStopAndReset(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	f.Advance(2 * time.Second)
	select {
	case <-tm.C():
		t.Fatal("stopped timer fired")
	default:
	}
	added := f.Added()
	if tm.Reset(time.Second) {
		t.Fatal("Reset of a stopped timer reported it pending")
	}
	select {
	case <-added:
	default:
		t.Fatal("Reset did not signal Added")
	}
	f.Advance(time.Second)
	select {
	case <-tm.C():
	default:
		t.Fatal("reset timer did not fire")
	}
}

func TestRealClockFires(t *testing.T) {
	c := Or(nil)
	tm := c.NewTimer(time.Millisecond)
	select {
	case <-tm.C():
	case <-time.After(10 * time.Second):
		t.Fatal("real timer did not fire")
	}
}
