// Package checkfor is the tests' one way to wait: poll a condition until it holds or a deadline
// passes, and on failure report the last thing the condition saw, not a fixed string.
package checkfor

import (
	"fmt"
	"testing"
	"time"
)

// Interval is the pause between two checks.
const Interval = 5 * time.Millisecond

// Eventually calls check until it returns nil or within has passed; then it fails t with what,
// the time waited and the last error check returned.
func Eventually(t testing.TB, within time.Duration, what string, check func() error) {
	t.Helper()
	if err := Wait(within, check); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Wait calls check until it returns nil or within has passed, and returns nil or an error that
// wraps check's last error.
func Wait(within time.Duration, check func() error) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		err := check()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("still failing after %v: %w", within, err)
		}
		<-tick.C
	}
}

// True adapts a boolean condition: state describes what was seen when cond was false.
func True(cond bool, format string, args ...any) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}
