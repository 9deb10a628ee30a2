package group

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// blockingJournal holds every Append until its context ends, as an append to an Iggy that does
// not answer does, and counts the appends that started and that ended.
type blockingJournal struct{ started, ended atomic.Int32 }

func (j *blockingJournal) Append(ctx context.Context, _ ...record.Record) error {
	j.started.Add(1)
	<-ctx.Done()
	j.ended.Add(1)
	return ctx.Err()
}

// The background appends (the offset expiry sweep here, persistGroup alike) run under the
// manager's context: Close ends one in flight instead of leaving it to the store.
func TestCloseEndsBackgroundAppend(t *testing.T) {
	clk := clock.NewFake(t0)
	j := &blockingJournal{}
	m := NewManager(Config{Clock: clk, Journal: j, OffsetRetention: time.Hour, RetentionCheckInterval: time.Minute})
	defer m.Close()
	m.Restore(nil, []record.OffsetCommit{{Group: "idle", Topic: "t1", Offset: 5, LeaderEpoch: -1, Expire: t0.Add(-time.Second)}})
	clk.Advance(time.Minute)
	checkfor.Eventually(t, 5*time.Second, "the expiry sweep appending", func() error {
		return checkfor.True(j.started.Load() == 1, "%d appends started", j.started.Load())
	})
	m.Close()
	checkfor.Eventually(t, 5*time.Second, "the append ended by Close", func() error {
		return checkfor.True(j.ended.Load() == 1, "%d of %d appends ended", j.ended.Load(), j.started.Load())
	})
	if got := fmt.Sprint(m.Groups()); got != "[idle]" {
		t.Fatalf("groups after the cancelled sweep: %s, want the group kept", got)
	}
}
