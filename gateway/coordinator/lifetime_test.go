package coordinator

import (
	"errors"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// Close waits for the goroutine partition.stop starts: with an append in flight (the
// partition's lock held) Close does not return, and once it returns the stopped partition's
// manager is closed and its release noted.
func TestCloseWaitsForStoppedPartitions(t *testing.T) {
	s := newStore(t)
	c := start(t, s, 1, nil)
	waitServing(t, "all served", func() error { return checkfor.True(len(serving(c)) == 16, "%d served", len(serving(c))) })
	pt := part(c, 0)
	pt.mu.Lock() // an append in flight
	returned := make(chan struct{})
	go func() {
		_ = c.Close()
		close(returned)
	}()
	checkfor.Eventually(t, 10*time.Second, "partition 0 stopped by Close", func() error {
		return checkfor.True(pt.status.Load() == stStopped, "status %d", pt.status.Load())
	})
	err := checkfor.Wait(300*time.Millisecond, func() error {
		select {
		case <-returned:
			return nil
		default:
			return errors.New("Close still waiting")
		}
	})
	if err == nil {
		pt.mu.Unlock()
		t.Fatal("Close returned while a stopped partition's manager was still to be closed")
	}
	pt.mu.Unlock()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the append ended")
	}
	select {
	case <-pt.done:
	default:
		t.Fatal("Close returned before the stopped partition finished")
	}
}
