package group

import (
	"fmt"
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

// Staged offsets a committed transaction hands over become committed offsets once the log holds
// them, creating the group; while Config.Unstable holds a partition, OffsetFetch with
// RequireStable answers it UNSTABLE_OFFSET_COMMIT and a fetch without it the committed offset.
func TestCommitStagedAndRequireStable(t *testing.T) {
	pending := map[string]bool{}
	e := newEnv(t, func(c *Config) {
		c.Unstable = func(group, topic string, p int32) bool { return pending[fmt.Sprintf("%s/%s/%d", group, topic, p)] }
	})
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
	pending["g/orders/1"] = true
	fetch := func(stable bool) map[int32]kmsg.OffsetFetchResponseGroupTopicPartition {
		topics := []kmsg.OffsetFetchRequestGroupTopic{{Topic: "orders", Partitions: []int32{0, 1, 2}}}
		rg := e.m.FetchOffsets(ctx(t), testID, "g", topics, stable, nil, -1)
		out := map[int32]kmsg.OffsetFetchResponseGroupTopicPartition{}
		for _, p := range rg.Topics[0].Partitions {
			out[p.Partition] = p
		}
		return out
	}
	got := fetch(true)
	if p := got[0]; p.ErrorCode != 0 || p.Offset != 42 || p.LeaderEpoch != 3 || *p.Metadata != "m" {
		t.Errorf("partition 0: %+v", p)
	}
	if p := got[1]; p.ErrorCode != kerr.UnstableOffsetCommit.Code || p.Offset != -1 {
		t.Errorf("partition 1 with an open transaction, RequireStable: %+v", p)
	}
	if p := got[2]; p.ErrorCode != 0 || p.Offset != -1 {
		t.Errorf("partition 2: %+v", p)
	}
	if p := fetch(false)[1]; p.ErrorCode != 0 || p.Offset != 7 {
		t.Errorf("partition 1 without RequireStable: %+v", p)
	}
	pending["g/orders/1"] = false
	if p := fetch(true)[1]; p.ErrorCode != 0 || p.Offset != 7 {
		t.Errorf("partition 1 once the transaction ended: %+v", p)
	}
	// All offsets of the group (null topics) are held back the same way.
	pending["g/orders/0"] = true
	rg := e.m.FetchOffsets(ctx(t), testID, "g", nil, true, nil, -1)
	for _, p := range rg.Topics[0].Partitions {
		if want := map[int32]int16{0: kerr.UnstableOffsetCommit.Code, 1: 0}[p.Partition]; p.ErrorCode != want {
			t.Errorf("all offsets, partition %d: code %d, want %d", p.Partition, p.ErrorCode, want)
		}
	}
}
