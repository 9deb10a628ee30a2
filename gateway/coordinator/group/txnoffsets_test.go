package group

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// A TxnOffsetCommit is checked against a classic group as KIP-447 has it: the member at the
// group's generation, a stale static instance fenced, and a producer naming no member taken.
func TestTxnCommitCheckClassic(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 2)
	static := e.join(joinReq("gs", "", withInstance("i-1")))
	if static.ErrorCode != 0 {
		t.Fatalf("static join: %v", kerr.ErrorForCode(static.ErrorCode))
	}
	inst := func(s string) *string { return &s }
	for _, c := range []struct {
		name string
		in   TxnCommit
		want *kerr.Error
	}{
		{"member at the generation", TxnCommit{Group: "g", MemberID: ids[0], Generation: gen}, nil},
		{"no member, no generation (v0-2)", TxnCommit{Group: "g", Generation: -1}, nil},
		{"unknown member", TxnCommit{Group: "g", MemberID: "nobody", Generation: gen}, kerr.UnknownMemberID},
		{"older generation", TxnCommit{Group: "g", MemberID: ids[1], Generation: gen - 1}, kerr.IllegalGeneration},
		{"member without generation", TxnCommit{Group: "g", MemberID: ids[1], Generation: -1}, kerr.IllegalGeneration},
		{"stale static instance", TxnCommit{Group: "gs", MemberID: "old", InstanceID: inst("i-1"), Generation: static.Generation}, kerr.FencedInstanceID},
		{"static instance at its generation", TxnCommit{Group: "gs", MemberID: static.MemberID, InstanceID: inst("i-1"), Generation: static.Generation}, nil},
		{"unknown group, no member", TxnCommit{Group: "new", Generation: -1}, nil},
		{"unknown group, a member", TxnCommit{Group: "new", MemberID: "m", Generation: 3}, kerr.UnknownMemberID},
		{"empty group id", TxnCommit{Generation: -1}, kerr.InvalidGroupID},
	} {
		code, _ := e.m.TxnCommitCheck(c.in)
		if want := errCodeOf(c.want); code != want {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(code), c.want)
		}
	}
	if n := len(e.j.records()); n == 0 {
		t.Fatal("no records from the joins")
	}
}

// Against a KIP-848 consumer group the generation is the member epoch.
func TestTxnCommitCheckConsumerGroup(t *testing.T) {
	e := newEnv(t, nil)
	a := &cgm{id: "A"}
	e.cgBeat("g", a)
	for _, c := range []struct {
		name string
		in   TxnCommit
		want *kerr.Error
	}{
		{"member at its epoch", TxnCommit{Group: "g", MemberID: "A", Generation: a.epoch}, nil},
		{"member ahead of its epoch", TxnCommit{Group: "g", MemberID: "A", Generation: a.epoch + 1}, kerr.StaleMemberEpoch},
		{"unknown member", TxnCommit{Group: "g", MemberID: "Z", Generation: a.epoch}, kerr.UnknownMemberID},
		{"no member while the group has members", TxnCommit{Group: "g", Generation: -1}, kerr.UnknownMemberID},
	} {
		code, _ := e.m.TxnCommitCheck(c.in)
		if want := errCodeOf(c.want); code != want {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(code), c.want)
		}
	}
}

func errCodeOf(e *kerr.Error) int16 {
	if e == nil {
		return 0
	}
	return e.Code
}

// Staged offsets of a transaction written by an earlier release (in the transaction record)
// become committed offsets once the log holds them, creating the group.
func TestCommitStaged(t *testing.T) {
	e := newEnv(t, nil)
	staged := []record.TxnOffset{
		{Group: "g", Topic: "orders", Partition: 0, Offset: 42, LeaderEpoch: 3, Metadata: "m"},
		{Group: "g", Topic: "orders", Partition: 1, Offset: 7, LeaderEpoch: -1},
	}
	if err := e.m.CommitStaged(staged); err != nil {
		t.Fatal(err)
	}
	if n := len(e.j.records()); n != 2 {
		t.Fatalf("%d records, want one offset commit each", n)
	}
	if p := fetchOffsets(t, e, true)[0]; p.ErrorCode != 0 || p.Offset != 42 {
		t.Errorf("partition 0: %+v", p)
	}
}

// fetchOffsets is an OffsetFetch of group g's orders 0-2, by partition.
func fetchOffsets(t *testing.T, e *env, stable bool) map[int32]kmsg.OffsetFetchResponseGroupTopicPartition {
	t.Helper()
	topics := []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders", Partitions: []int32{0, 1, 2}}}
	rg := e.m.FetchOffsets(ctx(t), testID, "g", topics, stable, nil, -1)
	out := map[int32]kmsg.OffsetFetchResponseGroupTopicPartition{}
	for _, p := range rg.Topics[0].Partitions {
		out[p.Partition] = p
	}
	return out
}

func txo(topic string, p int32, off int64) record.TxnOffset {
	return record.TxnOffset{Topic: topic, Partition: p, Offset: off, LeaderEpoch: -1}
}

// The group's coordinator keeps what a transaction committed to the group: one txn-offsets
// record per change, a later offset replacing the staged one, nothing for what is staged
// already; RequireStable answers the partitions held UNSTABLE_OFFSET_COMMIT (and a fetch without
// it the committed offset) until the marker: a commit marker writes the offsets as OffsetCommit
// records with the end record in one batch, an abort the end alone; a marker for a producer with
// nothing pending appends nothing.
func TestTxnOffsetsStagedAndEnded(t *testing.T) {
	e := newEnv(t, nil)
	const pid, epoch = 4001, 3
	if err := e.m.CommitStaged([]record.TxnOffset{{Group: "g", Topic: "orders", Partition: 1, Offset: 5, LeaderEpoch: -1}}); err != nil {
		t.Fatal(err)
	}
	base := len(e.j.records())
	if err := e.m.StageTxnOffsets("tx", pid, epoch, "g", []record.TxnOffset{txo("orders", 1, 7), txo("orders", 0, 3)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, epoch, "g", []record.TxnOffset{txo("orders", 0, 3)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, epoch, "g", []record.TxnOffset{txo("orders", 0, 9)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	recs := e.j.records()[base:]
	if len(recs) != 2 || recs[1].Type != record.TypeTxnOffsets {
		t.Fatalf("records after three stages (one repeating what is staged): %d, want 2 txn-offsets", len(recs))
	}
	want := []record.TxnOffset{{Group: "g", Topic: "orders", Partition: 0, Offset: 9, LeaderEpoch: -1}, {Group: "g", Topic: "orders", Partition: 1, Offset: 7, LeaderEpoch: -1}}
	if got := recs[1].TxnOffsets; got.ProducerID != pid || got.Epoch != epoch || got.TransactionalID != "tx" || !reflect.DeepEqual(got.Offsets, want) {
		t.Fatalf("staged record %+v", got)
	}
	got := fetchOffsets(t, e, true)
	if got[0].ErrorCode != kerr.UnstableOffsetCommit.Code || got[1].ErrorCode != kerr.UnstableOffsetCommit.Code || got[2].ErrorCode != 0 {
		t.Fatalf("RequireStable while staged: %+v", got)
	}
	if p := fetchOffsets(t, e, false)[1]; p.ErrorCode != 0 || p.Offset != 5 {
		t.Fatalf("partition 1 without RequireStable: %+v", p)
	}
	// All offsets of the group (null topics) are held back the same way.
	rg := e.m.FetchOffsets(ctx(t), testID, "g", nil, true, nil, -1)
	for _, p := range rg.Topics[0].Partitions {
		if p.ErrorCode != kerr.UnstableOffsetCommit.Code {
			t.Errorf("all offsets, partition %d: code %d while staged", p.Partition, p.ErrorCode)
		}
	}
	// A marker of another producer ends nothing: one end record naming no group, read back so
	// that only the partition's coordinator answers it.
	n := len(e.j.records())
	if err := e.m.EndTxnOffsets(pid+1, 0, true); err != nil || len(e.j.records()) != n+1 || e.j.records()[n].TxnOffsets.Group != "" {
		t.Fatalf("marker of a producer with nothing pending: %v, %d records appended", err, len(e.j.records())-n)
	}
	if !e.m.Unstable("g", "orders", 0) {
		t.Fatal("another producer's marker ended the offsets")
	}
	n = len(e.j.records())
	if err := e.m.EndTxnOffsets(pid, epoch, true); err != nil {
		t.Fatal(err)
	}
	end := e.j.records()[n:]
	if len(end) != 3 || end[0].Type != record.TypeOffsetCommit || end[1].Type != record.TypeOffsetCommit ||
		end[2].Type != record.TypeTxnOffsets || end[2].TxnOffsets.End != record.TxnOffsetsCommit {
		t.Fatalf("commit marker appended %+v", end)
	}
	got = fetchOffsets(t, e, true)
	if got[0].ErrorCode != 0 || got[0].Offset != 9 || got[1].ErrorCode != 0 || got[1].Offset != 7 {
		t.Fatalf("after the commit: %+v", got)
	}
	// The marker again (a retry, the next coordinator after a handover) changes nothing but
	// its one end record naming no group.
	n = len(e.j.records())
	if err := e.m.EndTxnOffsets(pid, epoch, true); err != nil || len(e.j.records()) != n+1 || e.j.records()[n].TxnOffsets.Group != "" {
		t.Fatalf("commit marker again: %v, %d records appended", err, len(e.j.records())-n)
	}
	if p := fetchOffsets(t, e, true)[0]; p.ErrorCode != 0 || p.Offset != 9 {
		t.Fatalf("after the marker again: %+v", p)
	}
	// An abort drops what was staged.
	if err := e.m.StageTxnOffsets("tx", pid, epoch, "g", []record.TxnOffset{txo("orders", 0, 20)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	if err := e.m.EndTxnOffsets(pid, epoch, false); err != nil {
		t.Fatal(err)
	}
	if p := fetchOffsets(t, e, true)[0]; p.ErrorCode != 0 || p.Offset != 9 {
		t.Fatalf("after an abort: %+v", p)
	}
	if last := e.j.records()[len(e.j.records())-1]; last.TxnOffsets == nil || last.TxnOffsets.End != record.TxnOffsetsAbort {
		t.Fatalf("abort appended %+v", last)
	}
}

// Epochs: a stage at an older epoch than the staged offsets is PRODUCER_FENCED, one at a newer
// epoch replaces them whole; a marker at an older epoch is INVALID_PRODUCER_EPOCH and ends
// nothing, in no group; a commit marker at a newer epoch drops offsets staged at an older one.
// A failed append keeps nothing.
func TestTxnOffsetsEpochs(t *testing.T) {
	e := newEnv(t, nil)
	const pid = 7
	if err := e.m.StageTxnOffsets("tx", pid, 5, "g", []record.TxnOffset{txo("orders", 0, 3)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, 5, "h", []record.TxnOffset{txo("orders", 0, 4)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	n := len(e.j.records())
	if err := e.m.StageTxnOffsets("tx", pid, 4, "g", []record.TxnOffset{txo("orders", 1, 3)}, e.m.TxnGuard(pid)); !errors.Is(err, kerr.ProducerFenced) {
		t.Fatalf("stage at an older epoch: %v", err)
	}
	if err := e.m.EndTxnOffsets(pid, 4, true); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker at an older epoch: %v", err)
	}
	if len(e.j.records()) != n || !e.m.Unstable("g", "orders", 0) || !e.m.Unstable("h", "orders", 0) {
		t.Fatal("a refused stage or marker changed something")
	}
	e.j.mu.Lock()
	e.j.fail = errors.New("store down")
	e.j.mu.Unlock()
	if err := e.m.StageTxnOffsets("tx", pid, 6, "g", []record.TxnOffset{txo("orders", 2, 1)}, e.m.TxnGuard(pid)); err == nil {
		t.Fatal("a stage whose append failed succeeded")
	}
	if err := e.m.EndTxnOffsets(pid, 5, true); err == nil {
		t.Fatal("a marker whose append failed succeeded")
	}
	e.j.mu.Lock()
	e.j.fail = nil
	e.j.mu.Unlock()
	if e.m.Unstable("g", "orders", 2) || !e.m.Unstable("g", "orders", 0) || !e.m.Unstable("h", "orders", 0) {
		t.Fatal("a failed append changed the pending offsets")
	}
	if err := e.m.StageTxnOffsets("tx", pid, 6, "g", []record.TxnOffset{txo("orders", 1, 8)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	if e.m.Unstable("g", "orders", 0) || !e.m.Unstable("g", "orders", 1) {
		t.Fatal("a stage at a newer epoch did not replace the older one's offsets")
	}
	// h's offsets are epoch 5's; a commit marker at 6 commits g's and drops h's.
	if err := e.m.EndTxnOffsets(pid, 6, true); err != nil {
		t.Fatal(err)
	}
	gOff, hOff := e.m.FetchOffsets(ctx(t), testID, "g", nil, true, nil, -1), e.m.FetchOffsets(ctx(t), testID, "h", nil, true, nil, -1)
	if len(gOff.Topics) != 1 || gOff.Topics[0].Partitions[0].Offset != 8 || len(hOff.Topics) != 0 {
		t.Fatalf("after a commit at epoch 6: g %+v, h %+v", gOff.Topics, hOff.Topics)
	}
	if got := e.m.TxnOffsets(); len(got) != 0 {
		t.Fatalf("pending after the marker: %+v", got)
	}
}

// A manager restored from the log has the pending offsets, and answers RequireStable and the
// marker from them.
func TestTxnOffsetsRestored(t *testing.T) {
	e := newEnv(t, nil)
	e.m.RestoreTxnOffsets([]record.TxnOffsets{{Group: "g", TransactionalID: "tx", ProducerID: 9, Epoch: 1,
		Offsets: []record.TxnOffset{{Group: "g", Topic: "orders", Partition: 2, Offset: 11, LeaderEpoch: -1}}}})
	if p := fetchOffsets(t, e, true)[2]; p.ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("restored pending offset: %+v", p)
	}
	if err := e.m.EndTxnOffsets(9, 1, true); err != nil {
		t.Fatal(err)
	}
	if p := fetchOffsets(t, e, true)[2]; p.ErrorCode != 0 || p.Offset != 11 {
		t.Fatalf("after the marker: %+v", p)
	}
}

// A TxnOffsetCommit checked at the transaction's coordinator before that transaction's marker
// reached the group, and staged after it, is refused (INVALID_TXN_STATE) and leaves nothing
// pending: otherwise RequireStable would answer UNSTABLE_OFFSET_COMMIT with no marker to come.
// A marker of another producer does not disturb the guard.
func TestTxnOffsetsGuard(t *testing.T) {
	e := newEnv(t, nil)
	const pid = 11
	guard := e.m.TxnGuard(pid)
	if err := e.m.EndTxnOffsets(pid+1, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, 0, "g", []record.TxnOffset{txo("orders", 0, 1)}, guard); err != nil {
		t.Fatalf("stage after another producer's marker: %v", err)
	}
	guard = e.m.TxnGuard(pid)
	if err := e.m.EndTxnOffsets(pid, 0, false); err != nil {
		t.Fatal(err)
	}
	n := len(e.j.records())
	if err := e.m.StageTxnOffsets("tx", pid, 0, "g", []record.TxnOffset{txo("orders", 0, 2)}, guard); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("stage checked before its transaction's marker: %v, want INVALID_TXN_STATE", err)
	}
	if len(e.j.records()) != n || e.m.Unstable("g", "orders", 0) {
		t.Fatal("a stage refused by its guard left something")
	}
	if err := e.m.StageTxnOffsets("tx", pid, 0, "g", []record.TxnOffset{txo("orders", 0, 3)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatalf("stage of the next transaction: %v", err)
	}
}

// Transactions v2: the TxnOffsetCommit of the next transaction (epoch 1) is checked while the
// previous one's marker (epoch 0, the epoch its offsets were staged at) reaches the group; that
// marker does not refuse it, a marker at its own epoch does.
func TestTxnOffsetsGuardOfTheNextTransaction(t *testing.T) {
	e := newEnv(t, nil)
	const pid = 11
	if err := e.m.StageTxnOffsets("tx", pid, 0, "g", []record.TxnOffset{txo("orders", 0, 1)}, e.m.TxnGuard(pid)); err != nil {
		t.Fatal(err)
	}
	guard := e.m.TxnGuard(pid)
	if err := e.m.EndTxnOffsets(pid, 0, true); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, 1, "g", []record.TxnOffset{txo("orders", 0, 2)}, guard); err != nil {
		t.Fatalf("stage of the next transaction checked before the previous one's marker: %v", err)
	}
	guard = e.m.TxnGuard(pid)
	if err := e.m.EndTxnOffsets(pid, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := e.m.StageTxnOffsets("tx", pid, 1, "g", []record.TxnOffset{txo("orders", 0, 3)}, guard); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("stage checked before its own transaction's marker: %v, want INVALID_TXN_STATE", err)
	}
}

// A marker that finds nothing pending still goes through the log, so a manager that lost its
// partition answers it NOT_COORDINATOR rather than a success the next owner never saw.
func TestTxnOffsetsMarkerOfALostPartition(t *testing.T) {
	e := newEnv(t, nil)
	e.j.mu.Lock()
	e.j.fail = fmt.Errorf("a newer claim precedes the record: %w", ErrNotCoordinator)
	e.j.mu.Unlock()
	if err := e.m.EndTxnOffsets(5, 0, true); !errors.Is(err, kerr.NotCoordinator) {
		t.Fatalf("marker at a manager whose partition moved: %v, want NOT_COORDINATOR", err)
	}
}
