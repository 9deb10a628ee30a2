package replay_test

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func TestReplayKnownState(t *testing.T) {
	e := logtest.Start(t)
	p := 7
	g, gone := testlog.GroupIn(p, "orders"), testlog.GroupIn(p, "gone")
	e.Put(p,
		testlog.Claim(1, 1, e.At(0)),                     // 0
		testlog.GroupSnap(1, g, 3, e.At(1)),              // 1
		testlog.Commit(1, g, "orders", 0, 40, e.At(2)),   // 2
		testlog.Commit(1, gone, "x", 0, 1, e.At(3)),      // 3
		testlog.Claim(2, 3, e.At(10)),                    // 4
		testlog.Commit(2, g, "orders", 0, 42, e.At(11)),  // 5
		testlog.Commit(2, g, "orders", 1, 7, e.At(12)),   // 6
		testlog.Commit(1, g, "orders", 1, 999, e.At(13)), // 7: void, fenced
		record.Record{Type: record.TypeGroupDeleted, Claim: 2, Time: e.At(14), GroupDeleted: &record.GroupDeleted{Group: gone}}, // 8
	)
	res, err := replay.Run(e.Ctx, e.Log, p, replay.Options{FromStart: true})
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
	old, err := replay.Run(e.Ctx, e.Log, p, replay.Options{Until: logread.Position{Offset: 3, HasOffset: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(old.Groups) != 2 || old.Claim.Node != 1 || old.Groups[1].Offsets[0].Offset != 40 {
		t.Fatalf("until 3: claim %+v groups %+v", old.Claim, old.Groups)
	}
	byTime, err := replay.Run(e.Ctx, e.Log, p, replay.Options{Until: logread.Position{Time: e.At(11)}})
	if err != nil {
		t.Fatal(err)
	}
	if *byTime.Through != 5 {
		t.Fatalf("until %v: through %d", e.At(11), *byTime.Through)
	}

	// From the last checkpoint: the state is the same, read from fewer records.
	st := res.State()
	cp := st.Snapshot(8)
	cpOff := e.Put(p, record.Record{Type: record.TypeCheckpoint, Claim: 2, Time: e.At(20), Checkpoint: &cp})
	e.Put(p, testlog.Commit(2, g, "orders", 1, 8, e.At(21)))
	fromCP, err := replay.Run(e.Ctx, e.Log, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fromCP.From != cpOff || fromCP.Records != 2 || fromCP.Groups[0].Offsets[1].Offset != 8 || len(fromCP.Groups[0].Members) != 2 {
		t.Fatalf("from checkpoint: from %d records %d groups %+v", fromCP.From, fromCP.Records, fromCP.Groups)
	}
	var got []verify.Finding
	if _, err := verify.Verify(e.Ctx, e.Log, nil, func(f verify.Finding) error { got = append(got, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != verify.FindingVoidFenced {
		t.Fatalf("findings %+v, want only the fenced commit", got)
	}
}
