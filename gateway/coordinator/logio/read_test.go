package logio_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

func TestTake(t *testing.T) {
	for _, c := range []struct {
		next, off uint64
		take, gap bool
	}{{5, 5, true, false}, {5, 4, false, false}, {5, 6, false, true}, {0, 0, true, false}} {
		take, err := logio.Take(c.next, c.off)
		if take != c.take || errors.Is(err, logio.ErrGap) != c.gap {
			t.Errorf("Take(%d, %d) = %v, %v", c.next, c.off, take, err)
		}
		var ge *logio.GapError
		if c.gap && (!errors.As(err, &ge) || ge.Expected != c.next || ge.Found != c.off) {
			t.Errorf("Take(%d, %d): %v does not say where the gap is", c.next, c.off, err)
		}
	}
}

func dial(t *testing.T) (context.Context, *iggy.Client) {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return ctx, c
}

// The last valid checkpoint is the fold's: record.Validity over decoded records. A checkpoint
// under a claim that a newer one replaced is void, and so is one whose header is right but
// whose body does not decode (a scan of headers alone took it).
func TestLastCheckpointByValidity(t *testing.T) {
	ctx, c := dial(t)
	log := testlog.Create(ctx, t, c, "kafka")
	at := time.Unix(1000, 0)
	claim := func(n uint64, node int32) record.Record {
		return record.Record{Type: record.TypeClaim, Claim: n, Time: at, ClaimInfo: &record.Claim{Number: n, Node: node, Addr: "h:1"}}
	}
	checkpoint := func(claim, through uint64) record.Record {
		return record.Record{Type: record.TypeCheckpoint, Claim: claim, Time: at, Checkpoint: &record.Checkpoint{Through: through}}
	}
	log.Put(0, claim(1, 1), checkpoint(1, 0)) // offsets 0, 1
	log.Put(0, claim(2, 2), checkpoint(1, 2)) // 2, 3: a stale claim's checkpoint
	b, err := record.Encode(checkpoint(2, 3))
	if err != nil {
		t.Fatal(err)
	}
	log.PutRaw(0, iggy.Message{Payload: b[:len(b)-1]}) // 4: right header, truncated body
	p := logio.Partition{Stream: wire.NamedID(fleet.MetaStream("kafka")), Topic: wire.NamedID(fleet.LogTopic), ID: 0}
	got, ok, err := logio.LastCheckpoint(ctx, c, p, 5)
	if err != nil || !ok || got != 1 {
		t.Fatalf("last checkpoint %d %v %v, want offset 1", got, ok, err)
	}
	log.Put(0, checkpoint(2, 4)) // 5
	if got, ok, err := logio.LastCheckpoint(ctx, c, p, logio.NoEnd); err != nil || !ok || got != 5 {
		t.Fatalf("last checkpoint %d %v %v, want offset 5", got, ok, err)
	}
	// An end the partition does not reach yet is a gap, not a silent short read.
	if _, _, err := logio.LastCheckpoint(ctx, c, p, 9); !errors.Is(err, logio.ErrGap) {
		t.Fatalf("an end beyond the partition: %v", err)
	}
}
