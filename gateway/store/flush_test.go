package store

import (
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Changed consumer offsets are written offsetFlushEvery later on Config.Clock, not on the wall
// clock: nothing is written before the clock moves that far, and then the change is.
func TestOffsetsFlushOnClock(t *testing.T) {
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := startServer(t, t.TempDir(), func(c *Config) { c.Clock = fake })
	// Two background timers run on the clock: the stale-member sweep's and the offsets flush's.
	// The clock may move only once the flush's is set, or it would count from the moved clock.
	checkfor.Eventually(t, 5*time.Second, "the offsets flush's timer", func() error {
		return checkfor.True(fake.Timers() >= 2, "%d timers", fake.Timers())
	})
	s.offDirty.Store(true)
	fake.Advance(offsetFlushEvery - time.Nanosecond)
	if !s.offDirty.Load() {
		t.Fatal("offsets written before the flush interval passed on the clock")
	}
	fake.Advance(time.Nanosecond)
	checkfor.Eventually(t, 5*time.Second, "the changed offsets written", func() error {
		return checkfor.True(!s.offDirty.Load(), "still to write")
	})
}
