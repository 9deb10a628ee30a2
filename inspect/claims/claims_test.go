package claims_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func TestClaimsListsSixteenPartitions(t *testing.T) {
	e := logtest.Start(t)
	for p := range record.Partitions {
		if p == 5 {
			continue // no gateway ever claimed it
		}
		e.Put(p, testlog.Claim(1, int32(1+p%3), e.At(p)))
	}
	e.Put(2, testlog.Claim(2, 1, e.At(30)))
	f, err := claims.LoadModel(e.Ctx, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	rows := f.Rows(e.At(60))
	if len(rows) != record.Partitions {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		switch {
		case r.Partition == 5:
			if r.OwnerNode != nil || len(r.Flags) != 1 || r.Flags[0] != claims.FlagUnowned {
				t.Errorf("partition 5: %+v", r)
			}
		case r.Partition == 2:
			if *r.OwnerNode != 1 || r.Claim != 2 || *r.HeldSeconds != 30 || r.LogEndOffset != 2 {
				t.Errorf("partition 2: owner %d claim %d held %v end %d", *r.OwnerNode, r.Claim, *r.HeldSeconds, r.LogEndOffset)
			}
		default:
			if r.OwnerNode == nil || *r.OwnerNode != int32(1+r.Partition%3) || r.Claim != 1 {
				t.Errorf("partition %d: %+v", r.Partition, r)
			}
		}
		if r.Controller != (r.Partition == 0) {
			t.Errorf("partition %d controller %v", r.Partition, r.Controller)
		}
	}
	hist := f.Parts[2].History(e.At(60))
	if len(hist) != 2 || hist[0].Node != 3 || hist[0].HeldSeconds != 28 || hist[1].Node != 1 || !hist[1].Current {
		t.Fatalf("history %+v", hist)
	}
}

// A watcher reports a handover once its claim record is in the log, without waiting for any
// timer of its own beyond the follow poll.
func TestWatchSeesHandover(t *testing.T) {
	e := logtest.Start(t)
	e.Put(6, testlog.Claim(1, 1, e.At(0)))
	f, err := claims.LoadModel(e.Ctx, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	defer cancel()
	updates := make(chan claims.Update, 16)
	done := make(chan error, 1)
	go func() {
		done <- claims.Watch(ctx, e.Log, f, func(u claims.Update) error { updates <- u; return nil })
	}()
	e.Put(6, testlog.Claim(2, 2, e.At(9)))
	var got claims.Update
	checkfor.Eventually(t, 10*time.Second, "handover update", func() error {
		select {
		case got = <-updates:
			if len(got.Handovers) == 0 {
				return fmt.Errorf("update without handover: %+v", got.Changes)
			}
			return nil
		default:
			return errors.New("no update yet")
		}
	})
	h := got.Handovers[0]
	if h.Partition != 6 || h.To != 2 || h.From == nil || *h.From != 1 || *h.HeldSeconds != 9 {
		t.Fatalf("handover %+v", h)
	}
	if *got.Rows[6].OwnerNode != 2 {
		t.Fatalf("row 6 %+v", got.Rows[6])
	}
	owner := false
	for _, c := range got.Changes {
		owner = owner || (c.Partition == 6 && c.Field == "owner" && c.Old == "1" && c.New == "2")
	}
	if !owner {
		t.Fatalf("changes %+v", got.Changes)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// claims starts each partition's fold at its last checkpoint and takes the history before it
// from a header scan: rows and history equal those of a fold of every record.
func TestClaimsFromCheckpointEqualFullFold(t *testing.T) {
	e := logtest.Start(t)
	p := 12
	g, h := testlog.GroupIn(p, "g"), testlog.GroupIn(p, "h")
	e.Put(p, testlog.Claim(1, 1, e.At(0)), testlog.GroupSnap(1, g, 1, e.At(1)), testlog.Commit(1, g, "t", 0, 1, e.At(2)), testlog.Claim(2, 2, e.At(3)), testlog.Commit(2, h, "t", 0, 5, e.At(4)), testlog.Commit(1, g, "t", 0, 99, e.At(5)))
	full := claims.NewTracker(p)
	ends, err := e.Log.Ends(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Log.Read(e.Ctx, p, 0, ends[p], func(en *logread.Entry) error { full.Apply(en); return nil }); err != nil {
		t.Fatal(err)
	}
	cp := full.State.Snapshot(ends[p] - 1)
	e.Put(p, record.Record{Type: record.TypeCheckpoint, Claim: 2, Time: e.At(6), Checkpoint: &cp}, testlog.Commit(2, g, "t", 1, 7, e.At(7)), testlog.Claim(3, 3, e.At(8)), testlog.Commit(3, h, "t", 0, 6, e.At(9)))
	full = claims.NewTracker(p)
	ends, _ = e.Log.Ends(e.Ctx)
	if err := e.Log.Read(e.Ctx, p, 0, ends[p], func(en *logread.Entry) error { full.Apply(en); return nil }); err != nil {
		t.Fatal(err)
	}
	f, err := claims.LoadModel(e.Ctx, e.Log)
	if err != nil {
		t.Fatal(err)
	}
	now := e.At(60)
	got, want := f.Parts[p].History(now), full.History(now)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 3 {
		t.Fatalf("history from checkpoint\n%+v\nfull fold\n%+v", got, want)
	}
	ref := claims.NewModel()
	ref.Parts[p], ref.Ends = full, ends
	for i := range ref.Parts {
		if i != p {
			ref.Parts[i] = f.Parts[i]
		}
	}
	if a, b := fmt.Sprint(f.Rows(now)[p].Cells()), fmt.Sprint(ref.Rows(now)[p].Cells()); a != b {
		t.Fatalf("row from checkpoint %s\nfull fold %s", a, b)
	}
	if c := f.Parts[p].State.Counts(); c.Applied != 4 {
		t.Fatalf("folded %d records from the checkpoint, want 4", c.Applied)
	}
}
