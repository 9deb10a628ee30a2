package inspect_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

func TestReplayKnownState(t *testing.T) {
	e := newLogEnv(t)
	p := 7
	g, gone := groupIn(p, "orders"), groupIn(p, "gone")
	e.Put(p,
		claim(1, 1, e.at(0)),                     // 0
		groupSnap(1, g, 3, e.at(1)),              // 1
		commit(1, g, "orders", 0, 40, e.at(2)),   // 2
		commit(1, gone, "x", 0, 1, e.at(3)),      // 3
		claim(2, 3, e.at(10)),                    // 4
		commit(2, g, "orders", 0, 42, e.at(11)),  // 5
		commit(2, g, "orders", 1, 7, e.at(12)),   // 6
		commit(1, g, "orders", 1, 999, e.at(13)), // 7: void, fenced
		record.Record{Type: record.TypeGroupDeleted, Claim: 2, Time: e.at(14), GroupDeleted: &record.GroupDeleted{Group: gone}}, // 8
	)
	res, err := replay.Run(e.ctx, e.log, p, replay.Options{FromStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 9 || res.Void != 1 || res.Through == nil || *res.Through != 8 {
		t.Fatalf("records %d void %d through %v", res.Records, res.Void, res.Through)
	}
	if res.Claim == nil || res.Claim.Number != 2 || res.Claim.Node != 3 || res.Claim.Offset != 4 {
		t.Fatalf("claim %+v", res.Claim)
	}
	if len(res.Groups) != 1 {
		t.Fatalf("groups %+v", res.Groups)
	}
	gv := res.Groups[0]
	if gv.Group != g || gv.State != "Stable" || gv.Generation != 3 || gv.Protocol != "range" || gv.Leader != "m-1" || len(gv.Members) != 2 {
		t.Fatalf("group %+v", gv)
	}
	if m := gv.Members[1]; m.MemberID != "m-2" || m.InstanceID != "static-b" || m.ClientHost != "/10.0.0.2" || m.Assignment != "orders[2]" || m.SessionTimeoutMS != 45000 {
		t.Fatalf("member %+v", m)
	}
	if len(gv.Offsets) != 2 || gv.Offsets[0].Offset != 42 || gv.Offsets[1].Offset != 7 {
		t.Fatalf("offsets %+v", gv.Offsets)
	}

	// Time travel: up to offset 3 the old owner's state stands, and the deleted group exists.
	old, err := replay.Run(e.ctx, e.log, p, replay.Options{Until: logread.Position{Offset: 3, HasOffset: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Groups) != 2 || old.Claim.Node != 1 || old.Groups[1].Offsets[0].Offset != 40 {
		t.Fatalf("until 3: claim %+v groups %+v", old.Claim, old.Groups)
	}
	byTime, err := replay.Run(e.ctx, e.log, p, replay.Options{Until: logread.Position{Time: e.at(11)}})
	if err != nil {
		t.Fatal(err)
	}
	if *byTime.Through != 5 {
		t.Fatalf("until %v: through %d", e.at(11), *byTime.Through)
	}

	// From the last checkpoint: the state is the same, read from fewer records.
	st := res.State()
	cp := st.Snapshot(8)
	cpOff := e.Put(p, record.Record{Type: record.TypeCheckpoint, Claim: 2, Time: e.at(20), Checkpoint: &cp})
	e.Put(p, commit(2, g, "orders", 1, 8, e.at(21)))
	fromCP, err := replay.Run(e.ctx, e.log, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fromCP.From != cpOff || fromCP.Records != 2 || fromCP.Groups[0].Offsets[1].Offset != 8 || len(fromCP.Groups[0].Members) != 2 {
		t.Fatalf("from checkpoint: from %d records %d groups %+v", fromCP.From, fromCP.Records, fromCP.Groups)
	}
	var got []verify.Finding
	if _, err := verify.Verify(e.ctx, e.log, nil, func(f verify.Finding) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != verify.FindingVoidFenced {
		t.Fatalf("findings %+v, want only the fenced commit", got)
	}
}

func TestClaimsListsSixteenPartitions(t *testing.T) {
	e := newLogEnv(t)
	for p := range record.Partitions {
		if p == 5 {
			continue // no gateway ever claimed it
		}
		e.Put(p, claim(1, int32(1+p%3), e.at(p)))
	}
	e.Put(2, claim(2, 1, e.at(30)))
	f, err := claims.LoadModel(e.ctx, e.log)
	if err != nil {
		t.Fatal(err)
	}
	rows := f.Rows(e.at(60))
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
	hist := f.Parts[2].History(e.at(60))
	if len(hist) != 2 || hist[0].Node != 3 || hist[0].HeldSeconds != 28 || hist[1].Node != 1 || !hist[1].Current {
		t.Fatalf("history %+v", hist)
	}
}

func TestInspectRowsAndGroupFilter(t *testing.T) {
	e := newLogEnv(t)
	g := groupIn(4, "g")
	other := groupIn(4, "other")
	e.Put(4, claim(1, 1, e.at(0)), commit(1, g, "t", 0, 1, e.at(1)), commit(1, other, "t", 0, 1, e.at(2)), claim(2, 2, e.at(3)), commit(1, g, "t", 0, 2, e.at(4)))
	var rows []inspect.RecordRow
	q := inspect.Query{Group: g}
	if err := inspect.Inspect(e.ctx, e.log, q, func(r inspect.RecordRow) error { rows = append(rows, r); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[0].Valid || rows[1].Valid || rows[1].Offset != 4 || rows[0].Fields.String() != "topic=t partition=0 offset=1 leader_epoch=-1" {
		t.Fatalf("rows %+v", rows)
	}
	rows = nil
	q = inspect.Query{Partitions: []int{4}, From: logread.Position{Offset: 1, HasOffset: true}, To: logread.Position{Time: e.at(3)}}
	if err := inspect.Inspect(e.ctx, e.log, q, func(r inspect.RecordRow) error { rows = append(rows, r); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Offset != 1 || rows[2].Type != "claim" {
		t.Fatalf("range rows %+v", rows)
	}
}

// A watcher reports a handover once its claim record is in the log, without waiting for any
// timer of its own beyond the follow poll.
func TestWatchSeesHandover(t *testing.T) {
	e := newLogEnv(t)
	e.Put(6, claim(1, 1, e.at(0)))
	f, err := claims.LoadModel(e.ctx, e.log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	updates := make(chan claims.Update, 16)
	done := make(chan error, 1)
	go func() {
		done <- claims.Watch(ctx, e.log, f, func(u claims.Update) error { updates <- u; return nil })
	}()
	e.Put(6, claim(2, 2, e.at(9)))
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

// inspect --follow prints a record once it is appended, after the ones already there.
func TestInspectFollow(t *testing.T) {
	e := newLogEnv(t)
	g := groupIn(11, "g")
	e.Put(11, claim(1, 1, e.at(0)))
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	rows := make(chan inspect.RecordRow, 16)
	caught := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- inspect.Inspect(ctx, e.log, inspect.Query{Group: g, Follow: true}, func(r inspect.RecordRow) error { rows <- r; return nil }, func() {
			select {
			case caught <- struct{}{}:
			default:
			}
		})
	}()
	checkfor.Eventually(t, 10*time.Second, "caught up", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	e.Put(11, commit(1, groupIn(11, "other"), "t", 0, 1, e.at(1)), commit(1, g, "t", 0, 3, e.at(2)), commit(2, g, "t", 0, 4, e.at(3)))
	var got []inspect.RecordRow
	checkfor.Eventually(t, 10*time.Second, "followed rows", func() error {
		for {
			select {
			case r := <-rows:
				got = append(got, r)
			default:
				if len(got) < 2 {
					return fmt.Errorf("%d rows", len(got))
				}
				return nil
			}
		}
	})
	if len(got) != 2 || got[0].Offset != 2 || !got[0].Valid || got[1].Offset != 3 || got[1].Valid {
		t.Fatalf("rows %+v", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// claims starts each partition's fold at its last checkpoint and takes the history before it
// from a header scan: rows and history equal those of a fold of every record.
func TestClaimsFromCheckpointEqualFullFold(t *testing.T) {
	e := newLogEnv(t)
	p := 12
	g, h := groupIn(p, "g"), groupIn(p, "h")
	e.Put(p, claim(1, 1, e.at(0)), groupSnap(1, g, 1, e.at(1)), commit(1, g, "t", 0, 1, e.at(2)), claim(2, 2, e.at(3)), commit(2, h, "t", 0, 5, e.at(4)), commit(1, g, "t", 0, 99, e.at(5)))
	full := claims.NewTracker(p)
	ends, err := e.log.Ends(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.log.Read(e.ctx, p, 0, ends[p], func(en *logread.Entry) error { full.Apply(en); return nil }); err != nil {
		t.Fatal(err)
	}
	cp := full.State.Snapshot(ends[p] - 1)
	e.Put(p, record.Record{Type: record.TypeCheckpoint, Claim: 2, Time: e.at(6), Checkpoint: &cp}, commit(2, g, "t", 1, 7, e.at(7)), claim(3, 3, e.at(8)), commit(3, h, "t", 0, 6, e.at(9)))
	full = claims.NewTracker(p)
	ends, _ = e.log.Ends(e.ctx)
	if err := e.log.Read(e.ctx, p, 0, ends[p], func(en *logread.Entry) error { full.Apply(en); return nil }); err != nil {
		t.Fatal(err)
	}
	f, err := claims.LoadModel(e.ctx, e.log)
	if err != nil {
		t.Fatal(err)
	}
	now := e.at(60)
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

// followRows runs a follow of q until stop and gathers its rows; caught is signalled each time
// it reaches the end of the log.
func followRows(t *testing.T, e *logEnv, q inspect.Query) (rows chan inspect.RecordRow, caught chan struct{}, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	rows, caught = make(chan inspect.RecordRow, 64), make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- inspect.Inspect(ctx, e.log, q, func(r inspect.RecordRow) error { rows <- r; return nil }, func() {
			select {
			case caught <- struct{}{}:
			default:
			}
		})
	}()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(cancel)
	checkfor.Eventually(t, 10*time.Second, "caught up", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	return rows, caught, stop
}

// gather takes the rows out of ch until it has at least n.
func gather(t *testing.T, ch chan inspect.RecordRow, n int) []inspect.RecordRow {
	t.Helper()
	var got []inspect.RecordRow
	checkfor.Eventually(t, 10*time.Second, fmt.Sprintf("%d rows", n), func() error {
		for {
			select {
			case r := <-ch:
				got = append(got, r)
			default:
				if len(got) < n {
					return fmt.Errorf("%d rows", len(got))
				}
				return nil
			}
		}
	})
	return got
}

// A follow starts at the end of the log: it shows only the records appended after it started,
// judged valid by the claims before it. From the beginning it shows the history first.
func TestInspectFollowStartsAtTail(t *testing.T) {
	e := newLogEnv(t)
	g := groupIn(8, "g")
	e.Put(8, claim(1, 1, e.at(0)), commit(1, g, "t", 0, 1, e.at(1)), claim(2, 2, e.at(2)))
	e.Put(9, claim(1, 3, e.at(0)))
	rows, caught, stop := followRows(t, e, inspect.Query{Follow: true})
	e.Put(8, commit(1, g, "t", 0, 2, e.at(3)), commit(2, g, "t", 0, 3, e.at(4)))
	got := gather(t, rows, 2)
	// Once the follower has caught up again after them, every row it will show is out.
	select {
	case <-caught:
	default:
	}
	checkfor.Eventually(t, 10*time.Second, "caught up after the new records", func() error {
		select {
		case <-caught:
			return nil
		default:
			return errors.New("not yet")
		}
	})
	got = append(got, gather(t, rows, 0)...)
	stop()
	if len(got) != 2 || got[0].Partition != 8 || got[0].Offset != 3 || got[0].Valid || got[1].Offset != 4 || !got[1].Valid {
		t.Fatalf("followed from the end: %+v", got)
	}

	from, fromEnd, err := inspect.ParseFrom("beginning", e.at(0))
	if err != nil || fromEnd {
		t.Fatal(err)
	}
	rows, _, stop = followRows(t, e, inspect.Query{Follow: true, From: from, Partitions: []int{8}})
	got = gather(t, rows, 5)
	stop()
	if len(got) != 5 || got[0].Offset != 0 || got[4].Offset != 4 {
		t.Fatalf("followed from the beginning: %+v", got)
	}
}

func TestParseFrom(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in      string
		from    logread.Position
		fromEnd bool
	}{
		{"", logread.Position{}, false},
		{"beginning", logread.Position{HasOffset: true}, false},
		{"start", logread.Position{HasOffset: true}, false},
		{"end", logread.Position{}, true},
		{"7", logread.Position{Offset: 7, HasOffset: true}, false},
		{"10m", logread.Position{Time: now.Add(-10 * time.Minute)}, false},
	} {
		from, fromEnd, err := inspect.ParseFrom(c.in, now)
		if err != nil || from != c.from || fromEnd != c.fromEnd {
			t.Errorf("ParseFrom(%q) = %+v %v %v", c.in, from, fromEnd, err)
		}
	}
	if _, _, err := inspect.ParseFrom("latest", now); err == nil {
		t.Error("ParseFrom(latest) took it")
	}
}
