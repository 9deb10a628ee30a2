package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// syncBuffer is a bytes.Buffer a command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Without a terminal, claims --watch -o json prints one NDJSON line per change and inspect
// --follow -o json one per record, each as its record arrives.
func TestFollowersPrintNDJSON(t *testing.T) {
	addr, put := operatorStore(t)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "XDG_CONFIG_HOME=" + t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var watchOut, followOut, errs syncBuffer
	loaded := make(chan struct{})
	watchLoaded = func() { close(loaded) }
	defer func() { watchLoaded = nil }()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, args := range [][]string{{"claims", "--watch", "-o", "json"}, {"inspect", "--follow", "--from", "beginning", "--partition", "6", "-o", "json"}} {
		out := &watchOut
		if i == 1 {
			out = &followOut
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = run(ctx, args, env, out, &errs)
		}()
	}
	// inspect --follow --from beginning prints the two records already in partition 6 first.
	checkfor.Eventually(t, 10*time.Second, "existing records", func() error {
		if n := strings.Count(followOut.String(), "\n"); n != 2 {
			return errors.New("follow output: " + followOut.String() + errs.String())
		}
		return nil
	})
	select {
	case <-loaded:
	case <-time.After(10 * time.Second):
		t.Fatalf("claims --watch did not start following: %s", errs.String())
	}
	put(6, record.Record{Type: record.TypeClaim, Claim: 2, Time: time.Now(), ClaimInfo: &record.Claim{Number: 2, Node: 2, Addr: "localhost:9092"}})
	checkfor.Eventually(t, 10*time.Second, "the change lines", func() error {
		for _, line := range strings.Split(strings.TrimSpace(watchOut.String()), "\n") {
			var c claims.Change
			if json.Unmarshal([]byte(line), &c) == nil && c.Partition == 6 && c.Field == "owner" && c.Old == "1" && c.New == "2" {
				return nil
			}
		}
		return errors.New("watch output: " + watchOut.String() + errs.String())
	})
	checkfor.Eventually(t, 10*time.Second, "the followed claim", func() error {
		lines := strings.Split(strings.TrimSpace(followOut.String()), "\n")
		var r inspect.RecordRow
		if len(lines) == 3 && json.Unmarshal([]byte(lines[2]), &r) == nil && r.Offset == 2 && r.Type == "claim" && r.Valid {
			return nil
		}
		return errors.New("follow output: " + followOut.String())
	})
	cancel()
	wg.Wait()
	if codes[0] != exitOK || codes[1] != exitOK {
		t.Fatalf("exit codes %v, stderr %s", codes, errs.String())
	}
}
