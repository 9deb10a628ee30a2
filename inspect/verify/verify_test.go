package verify_test

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// A clean history: node 1 claims, commits, hands over to node 2, which commits on.
func writeHistory(e *logtest.Env, p int, g string) {
	e.Put(p,
		testlog.Claim(1, 1, e.At(0)),
		testlog.Commit(1, g, "orders", 0, 10, e.At(1)),
		testlog.Claim(2, 2, e.At(5)),
		testlog.Commit(2, g, "orders", 0, 20, e.At(6)),
	)
}

func verifyLog(t *testing.T, e *logtest.Env) []verify.Finding {
	t.Helper()
	got, _ := verifySummary(t, e)
	return got
}

// verifySummary verifies the whole log and checks the verdict against what was emitted and
// what the log holds.
func verifySummary(t *testing.T, e *logtest.Env) ([]verify.Finding, verify.Summary) {
	t.Helper()
	var got []verify.Finding
	sum, err := verify.Verify(e.Ctx, e.Log, nil, func(f verify.Finding) error { got = append(got, f); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ends, err := e.Log.Ends(e.Ctx)
	if err != nil {
		t.Fatal(err)
	}
	var records uint64
	for _, end := range ends {
		records += end
	}
	if sum.Findings != len(got) || sum.Records != records || sum.Partitions != record.Partitions {
		t.Fatalf("verdict %+v: emitted %d findings, the log holds %d records", sum, len(got), records)
	}
	return got, sum
}

func TestVerifyCleanLogAndPlantedVoidRecord(t *testing.T) {
	e := logtest.Start(t)
	g := testlog.GroupIn(3, "g")
	writeHistory(e, 3, g)
	writeHistory(e, 9, testlog.GroupIn(9, "h"))
	if got := verifyLog(t, e); len(got) != 0 {
		t.Fatalf("clean log: findings %+v", got)
	}
	// Node 1, fenced by claim 2, writes on.
	off := e.Put(3, testlog.Commit(1, g, "orders", 0, 99, e.At(7)))
	got := verifyLog(t, e)
	if len(got) != 1 || got[0].Kind != verify.FindingVoidFenced || got[0].Partition != 3 || got[0].Offset != off {
		t.Fatalf("findings %+v, want one %s at 3/%d", got, verify.FindingVoidFenced, off)
	}
}

func TestVerifyFindsEveryKind(t *testing.T) {
	e := logtest.Start(t)
	g := testlog.GroupIn(0, "g")
	e.Put(0, testlog.Claim(5, 1, e.At(0)), testlog.Commit(5, g, "t", 0, 1, e.At(1)))
	e.Put(0, testlog.Claim(5, 2, e.At(2)))                        // duplicate
	e.Put(0, testlog.Claim(4, 2, e.At(3)))                        // decreasing
	e.Put(0, testlog.Commit(9, g, "t", 0, 2, e.At(4)))            // unclaimed
	e.PutRaw(0, iggy.Message{Payload: []byte{record.Version, 2}}) // undecodable
	bad := record.Record{Type: record.TypeCheckpoint, Claim: 5, Time: e.At(5), Checkpoint: &record.Checkpoint{Through: 5, Offsets: []record.OffsetCommit{{Group: g, Topic: "t", Partition: 0, Offset: 77, LeaderEpoch: -1}}}}
	e.Put(0, bad)
	want := []string{verify.FindingClaimDuplicate, verify.FindingClaimDecreasing, verify.FindingVoidUnclaimed, verify.FindingUndecodable, verify.FindingCheckpointDiff}
	got, sum := verifySummary(t, e)
	if (render.VerifyVerdict{Summary: sum}).String() != "7 records, 5 findings" {
		t.Errorf("verdict %q", render.VerifyVerdict{Summary: sum})
	}
	if len(got) != len(want) {
		t.Fatalf("findings %+v, want kinds %v", got, want)
	}
	for i, f := range got {
		if f.Kind != want[i] {
			t.Errorf("finding %d: %+v, want %s", i, f, want[i])
		}
	}
}
