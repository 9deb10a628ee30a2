package record

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestPartitionVectors(t *testing.T) {
	// FNV-1a 32 of each id (computed independently), then modulo 16.
	vectors := []struct {
		group string
		hash  uint32
		want  int
	}{
		{"", 0x811c9dc5, 5},
		{"a", 0xe40c292c, 12},
		{"foobar", 0xbf9cf968, 8},
		{"g1", 0x10202895, 5},
		{"my-group", 0x0f4aea0d, 13},
		{"console-consumer-12345", 0x8737c2af, 15},
		{"grüppe", 0x3465bcda, 10},
	}
	for _, v := range vectors {
		if int(v.hash%Partitions) != v.want {
			t.Fatalf("vector %q is inconsistent", v.group)
		}
		if got := Partition(v.group); got != v.want {
			t.Errorf("Partition(%q) = %d, want %d", v.group, got, v.want)
		}
	}
}

func claimRec(n uint64, node int32) Record {
	return Record{Type: TypeClaim, Claim: n, ClaimInfo: &Claim{Number: n, Node: node, Addr: fmt.Sprintf("n%d:9092", node)}}
}

func commitRec(claim uint64, group, topic string, p int32, off int64) Record {
	return Record{Type: TypeOffsetCommit, Claim: claim, OffsetCommit: &OffsetCommit{Group: group, Topic: topic, Partition: p, Offset: off, LeaderEpoch: -1}}
}

func groupRec(claim uint64, name string, gen int32) Record {
	return Record{Type: TypeGroup, Claim: claim, Group: &Group{Name: name, Generation: gen, ProtocolType: "consumer", State: "Stable",
		Members: []Member{{MemberID: "m", Protocols: []Protocol{{Name: "range", Metadata: []byte{1}}}}}}}
}

type applied struct {
	off   uint64
	r     Record
	valid bool
}

func fold(t *testing.T, s *State, recs []applied) {
	t.Helper()
	for _, a := range recs {
		if got := s.Apply(a.off, a.r); got != a.valid {
			t.Fatalf("record at %d (%s, claim %d): valid %v, want %v", a.off, a.r.Type, a.r.Claim, got, a.valid)
		}
	}
}

// A fenced writer's record that lands after a newer claim is void for the reader, whatever it
// says; the new owner's records count.
func TestVoidAfterNewerClaim(t *testing.T) {
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(1, 1), true},
		{1, commitRec(1, "g", "t", 0, 10), true},
		{2, claimRec(2, 2), true},
		{3, commitRec(1, "g", "t", 0, 99), false}, // node 1 did not see claim 2
		{4, groupRec(1, "g", 5), false},
		{5, commitRec(2, "g", "t", 0, 11), true},
	})
	if o, _ := s.Offset("g", "t", 0); o.Offset != 11 {
		t.Fatalf("offset %d, want 11", o.Offset)
	}
	if _, ok := s.Group("g"); ok {
		t.Fatal("a void group snapshot was applied")
	}
	if c := s.Claim(); c.Number != 2 || c.Node != 2 || s.ClaimOffset() != 2 {
		t.Fatalf("claim %+v at %d", c, s.ClaimOffset())
	}
	if c := s.Counts(); c.Void != 2 || c.Applied != 6 {
		t.Fatalf("counts %+v", c)
	}
}

// A claim numbered at or below the newest is void, and so are records written under it; a record
// with a claim nobody made is void too.
func TestDecreasingClaimNumbers(t *testing.T) {
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(5, 1), true},
		{1, claimRec(3, 2), false},
		{2, commitRec(3, "g", "t", 0, 1), false},
		{3, claimRec(5, 2), false},
		{4, commitRec(9, "g", "t", 0, 2), false},
		{5, commitRec(5, "g", "t", 0, 3), true},
		{6, claimRec(6, 2), true},
	})
	if c := s.Claim(); c.Number != 6 || c.Node != 2 {
		t.Fatalf("claim %+v", c)
	}
	if o, _ := s.Offset("g", "t", 0); o.Offset != 3 {
		t.Fatalf("offset %d", o.Offset)
	}
}

// A checkpoint replaces the state for a reader that starts at it, and for a reader whose state
// differs from it; a void checkpoint changes nothing.
func TestCheckpointReplace(t *testing.T) {
	cp := Record{Type: TypeCheckpoint, Claim: 2, Time: t0, Checkpoint: &Checkpoint{Through: 10,
		Groups:  []Group{*groupRec(2, "a", 3).Group},
		Offsets: []OffsetCommit{*commitRec(2, "a", "t", 1, 7).OffsetCommit}}}

	fresh := NewState()
	fold(t, fresh, []applied{{11, cp, true}})
	if g, ok := fresh.Group("a"); !ok || g.Generation != 3 {
		t.Fatalf("group from checkpoint %+v %v", g, ok)
	}
	if c := fresh.Claim(); c.Number != 2 {
		t.Fatalf("claim from checkpoint %d", c.Number)
	}

	// A reader that holds other state (a group the checkpoint does not have, changed after
	// Through) ends with exactly the checkpoint.
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(2, 1), true},
		{9, groupRec(2, "old", 1), true},
		{10, commitRec(2, "old", "t", 0, 1), true},
		{11, commitRec(2, "stray", "t", 0, 1), true},
		{12, cp, true},
	})
	if !reflect.DeepEqual(s.Snapshot(10), fresh.Snapshot(10)) {
		t.Fatalf("after checkpoint\n%+v\nwant\n%+v", s.Snapshot(10), fresh.Snapshot(10))
	}
	if off, at, ok := s.LastCheckpoint(); !ok || off != 12 || !at.Equal(t0) {
		t.Fatalf("last checkpoint %d %v %v", off, at, ok)
	}
	if s.Counts().SinceCheckpoint != 0 {
		t.Fatal("records since checkpoint not reset")
	}

	// A checkpoint under an old claim is void.
	void := cp
	void.Claim = 1
	before := s.Snapshot(0)
	fold(t, s, []applied{{13, claimRec(3, 2), true}, {14, void, false}})
	if !reflect.DeepEqual(s.Snapshot(0), before) {
		t.Fatal("a void checkpoint changed the state")
	}
}

// Checkpoint-then-replay equals a full replay, for a log of commits, snapshots and deletions.
func TestCheckpointThenReplayEqualsFullReplay(t *testing.T) {
	log := []Record{claimRec(1, 1)}
	claim := uint64(1)
	for i := range 300 {
		g := fmt.Sprintf("g%d", i%17)
		switch i % 7 {
		case 0:
			log = append(log, groupRec(claim, g, int32(i)))
		case 3:
			log = append(log, Record{Type: TypeOffsetDeleted, Claim: claim, OffsetDeleted: &OffsetDeleted{Group: g, Topic: "t", Partition: int32(i % 3)}})
		case 5:
			log = append(log, Record{Type: TypeGroupDeleted, Claim: claim, GroupDeleted: &GroupDeleted{Group: g}})
		default:
			log = append(log, commitRec(claim, g, "t", int32(i%3), int64(i)))
		}
		if i == 150 {
			claim = 2
			log = append(log, claimRec(2, 2), commitRec(1, "g0", "t", 0, -5)) // and a fenced write
		}
	}
	// The checkpoint is written at 200, holding the state through 199.
	mid := NewState()
	for i := range 200 {
		mid.Apply(uint64(i), log[i])
	}
	cp := Record{Type: TypeCheckpoint, Claim: 2, Checkpoint: ptr(mid.Snapshot(199))}
	log = append(log[:200:200], append([]Record{cp}, log[200:]...)...)

	full, fromCP := NewState(), NewState()
	for i, r := range log {
		full.Apply(uint64(i), r)
		if i >= 200 {
			fromCP.Apply(uint64(i), r)
		}
	}
	withoutCP := NewState()
	for i, r := range log {
		if r.Type != TypeCheckpoint {
			withoutCP.Apply(uint64(i), r)
		}
	}
	want := withoutCP.Snapshot(0)
	if len(want.Groups) == 0 || len(want.Offsets) == 0 {
		t.Fatal("the test log leaves nothing to compare")
	}
	if got := fromCP.Snapshot(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay from checkpoint\n%+v\nwant\n%+v", got, want)
	}
	if got := full.Snapshot(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay through checkpoint\n%+v\nwant\n%+v", got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// Deletion markers live until a checkpoint covers them, then go: deleting thousands of offsets in
// turns leaves no more markers than the deletions since the last checkpoint.
func TestDeletionMarkersBounded(t *testing.T) {
	s := NewState()
	off := uint64(0)
	next := func(r Record) { s.Apply(off, r); off++ }
	next(claimRec(1, 1))
	maxMarkers := 0
	for round := range 50 {
		for i := range 100 {
			g := fmt.Sprintf("g%d-%d", round, i)
			next(commitRec(1, g, "t", 0, 1))
			next(Record{Type: TypeOffsetDeleted, Claim: 1, OffsetDeleted: &OffsetDeleted{Group: g, Topic: "t", Partition: 0}})
			next(Record{Type: TypeGroupDeleted, Claim: 1, GroupDeleted: &GroupDeleted{Group: g + "x"}})
		}
		if !s.OffsetDeleted(fmt.Sprintf("g%d-0", round), "t", 0) || !s.GroupDeleted(fmt.Sprintf("g%d-0x", round)) {
			t.Fatal("markers missing before the checkpoint")
		}
		maxMarkers = max(maxMarkers, s.Counts().Markers)
		cp := s.Snapshot(off - 1)
		if len(cp.Offsets) != 0 || len(cp.Groups) != 0 {
			t.Fatalf("checkpoint of an empty state holds %d offsets", len(cp.Offsets))
		}
		next(Record{Type: TypeCheckpoint, Claim: 1, Checkpoint: &cp})
		if c := s.Counts(); c.Markers != 0 || c.Groups != 0 || c.Offsets != 0 {
			t.Fatalf("after checkpoint: %+v", c)
		}
	}
	if maxMarkers != 200 {
		t.Fatalf("at most %d markers between checkpoints, want 200", maxMarkers)
	}
}

func TestCheckpointDue(t *testing.T) {
	s := NewState()
	start := t0
	if s.CheckpointDue(3, time.Hour, start, start.Add(2*time.Hour)) {
		t.Fatal("due with nothing applied")
	}
	s.Apply(0, claimRec(1, 1))
	s.Apply(1, commitRec(1, "g", "t", 0, 1))
	if s.CheckpointDue(3, time.Hour, start, start.Add(time.Minute)) {
		t.Fatal("due after 2 records")
	}
	if !s.CheckpointDue(3, time.Hour, start, start.Add(time.Hour)) {
		t.Fatal("not due after the age bound")
	}
	s.Apply(2, commitRec(1, "g", "t", 0, 2))
	if !s.CheckpointDue(3, time.Hour, start, start) {
		t.Fatal("not due after 3 records")
	}
}

func cgRec(claim uint64, c ConsumerGroup) Record {
	return Record{Type: TypeConsumerGroup, Claim: claim, ConsumerGroup: &c}
}

func cmember(id string, epoch int32) ConsumerMember {
	return ConsumerMember{MemberID: id, Epoch: epoch, SubscribedTopics: []string{"t"},
		Target: Assignment{{TopicID: [16]byte{1}, Partitions: []int32{epoch}}}}
}

// Consumer-group records are changes: members named replace or join, members removed go, the
// others stay as they were; the epochs are the newest record's.
func TestConsumerGroupFold(t *testing.T) {
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(1, 1), true},
		{1, cgRec(1, ConsumerGroup{Name: "cg", Epoch: 1, AssignmentEpoch: 1, Members: []ConsumerMember{cmember("b", 1)}}), true},
		{2, cgRec(1, ConsumerGroup{Name: "cg", Epoch: 2, AssignmentEpoch: 1, Members: []ConsumerMember{cmember("a", 2), cmember("c", 2)}}), true},
		{3, cgRec(1, ConsumerGroup{Name: "cg", Epoch: 3, AssignmentEpoch: 3, Members: []ConsumerMember{cmember("a", 3)}, Removed: []string{"b", "zz"}}), true},
		{4, cgRec(0, ConsumerGroup{Name: "cg", Epoch: 99}), false},
	})
	g, ok := s.ConsumerGroup("cg")
	if !ok {
		t.Fatal("no consumer group")
	}
	want := ConsumerGroup{Name: "cg", Epoch: 3, AssignmentEpoch: 3, Members: []ConsumerMember{cmember("a", 3), cmember("c", 2)}}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("folded\n%+v\nwant\n%+v", g, want)
	}
	// What the state hands out is its own: changing it changes nothing inside.
	g.Members[0].Epoch = 77
	if again, _ := s.ConsumerGroup("cg"); again.Members[0].Epoch != 3 {
		t.Fatal("ConsumerGroup returned the state's own members")
	}
	if _, ok := s.Group("cg"); ok {
		t.Fatal("a consumer group shows as a classic one")
	}
}

// A name is one kind of group at a time: a consumer-group record replaces a classic snapshot and
// the other way round, the offsets stay; a group deletion drops the consumer group too.
func TestConsumerGroupReplacesClassic(t *testing.T) {
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(1, 1), true},
		{1, groupRec(1, "g", 4), true},
		{2, commitRec(1, "g", "t", 0, 10), true},
		{3, cgRec(1, ConsumerGroup{Name: "g", Epoch: 1, AssignmentEpoch: 1}), true},
	})
	if _, ok := s.Group("g"); ok {
		t.Fatal("classic snapshot kept after the consumer group")
	}
	if _, ok := s.ConsumerGroup("g"); !ok {
		t.Fatal("consumer group missing")
	}
	if o, ok := s.Offset("g", "t", 0); !ok || o.Offset != 10 {
		t.Fatalf("offset %+v %v after the conversion", o, ok)
	}
	fold(t, s, []applied{{4, groupRec(1, "g", 5), true}})
	if _, ok := s.ConsumerGroup("g"); ok {
		t.Fatal("consumer group kept after a classic snapshot")
	}
	fold(t, s, []applied{
		{5, cgRec(1, ConsumerGroup{Name: "g", Epoch: 2}), true},
		{6, Record{Type: TypeGroupDeleted, Claim: 1, GroupDeleted: &GroupDeleted{Group: "g"}}, true},
	})
	if _, ok := s.ConsumerGroup("g"); ok || len(s.GroupNames()) != 0 {
		t.Fatalf("groups %v after the deletion", s.GroupNames())
	}
	// Offsets deleted one by one leave an empty consumer group in place.
	fold(t, s, []applied{
		{7, cgRec(1, ConsumerGroup{Name: "h", Epoch: 1}), true},
		{8, commitRec(1, "h", "t", 0, 1), true},
		{9, Record{Type: TypeOffsetDeleted, Claim: 1, OffsetDeleted: &OffsetDeleted{Group: "h", Topic: "t", Partition: 0}}, true},
	})
	if _, ok := s.ConsumerGroup("h"); !ok {
		t.Fatal("the consumer group went with its last offset")
	}
}

// A checkpoint holds consumer groups whole, and a reader that starts at it ends where a reader of
// the whole log does.
func TestConsumerGroupCheckpoint(t *testing.T) {
	log := []Record{claimRec(1, 1)}
	for i := range 40 {
		c := ConsumerGroup{Name: fmt.Sprintf("cg%d", i%3), Epoch: int32(i), AssignmentEpoch: int32(i)}
		c.Members = []ConsumerMember{cmember(fmt.Sprintf("m%d", i%5), int32(i))}
		if i%4 == 0 {
			c.Removed = []string{fmt.Sprintf("m%d", (i+2)%5)}
		}
		log = append(log, cgRec(1, c), commitRec(1, c.Name, "t", int32(i%2), int64(i)))
	}
	mid := NewState()
	for i := range 41 {
		mid.Apply(uint64(i), log[i])
	}
	cp := mid.Snapshot(40)
	if len(cp.ConsumerGroups) != 3 {
		t.Fatalf("checkpoint holds %d consumer groups, want 3", len(cp.ConsumerGroups))
	}
	b, err := Encode(Record{Type: TypeCheckpoint, Claim: 1, Checkpoint: &cp})
	if err != nil {
		t.Fatal(err)
	}
	cpRec, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	full, fromCP := NewState(), NewState()
	fromCP.Apply(41, cpRec)
	for i, r := range log {
		full.Apply(uint64(i), r)
		if i > 40 {
			fromCP.Apply(uint64(i+1), r)
		}
	}
	if got, want := fromCP.Snapshot(0), full.Snapshot(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("from checkpoint\n%+v\nwant\n%+v", got, want)
	}
}

// Transaction records fold to the last state of each id; a Dead one is forgotten; a checkpoint
// carries them, and a state started at that checkpoint holds the same transactions.
func TestTransactionFold(t *testing.T) {
	st := NewState()
	claim := Record{Type: TypeClaim, Claim: 1, ClaimInfo: &Claim{Number: 1, Node: 1}}
	st.Apply(0, claim)
	a := goldenTransaction()
	a.State = TxnOngoing
	b := Transaction{ID: "other", ProducerID: 9, Timeout: time.Minute, State: TxnEmpty}
	recs := []Transaction{a, b}
	a2 := a
	a2.State = TxnPrepareCommit
	recs = append(recs, a2)
	dead := b
	dead.State = TxnDead
	recs = append(recs, dead)
	for i := range recs {
		if !st.Apply(uint64(i+1), Record{Type: TypeTransaction, Claim: 1, Transaction: &recs[i]}) {
			t.Fatalf("record %d void", i)
		}
	}
	// A fenced writer's transaction record changes nothing.
	stale := a
	stale.State = TxnCompleteAbort
	if st.Apply(9, Record{Type: TypeTransaction, Claim: 0, Transaction: &stale}) {
		t.Fatal("a record under no claim was valid")
	}
	got, ok := st.Transaction("etl-1")
	if !ok || !reflect.DeepEqual(got, a2) {
		t.Fatalf("etl-1 = %+v, %v; want %+v", got, ok, a2)
	}
	if _, ok := st.Transaction("other"); ok {
		t.Fatal("a Dead transaction is still held")
	}
	if n := st.Counts().Transactions; n != 1 {
		t.Fatalf("Counts().Transactions = %d, want 1", n)
	}
	cp := st.Snapshot(9)
	if len(cp.Transactions) != 1 || cp.Transactions[0].ID != "etl-1" {
		t.Fatalf("checkpoint transactions %+v", cp.Transactions)
	}
	enc, err := Encode(Record{Type: TypeCheckpoint, Claim: 1, Checkpoint: &cp})
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != 3 {
		t.Fatalf("a checkpoint with transactions is written in version %d, want 3", enc[0])
	}
	dec, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	from := NewState()
	if !from.Apply(10, dec) {
		t.Fatal("checkpoint void as the first record")
	}
	if !reflect.DeepEqual(from.Transactions(), st.Transactions()) {
		t.Fatalf("from checkpoint %+v, want %+v", from.Transactions(), st.Transactions())
	}
	// Without transactions a checkpoint stays version 2, readable by older gateways.
	enc2, _ := Encode(Record{Type: TypeCheckpoint, Claim: 1, Checkpoint: &Checkpoint{Through: 1}})
	if enc2[0] != 2 {
		t.Fatalf("a checkpoint without transactions is written in version %d, want 2", enc2[0])
	}
}

// Pending txn-offsets are kept by group and producer id, replaced by a later record of the
// same producer, dropped by its end, carried by a checkpoint (version 5) and restored from it.
func TestTxnOffsetsFold(t *testing.T) {
	st := NewState()
	st.Apply(0, Record{Type: TypeClaim, Claim: 1, ClaimInfo: &Claim{Number: 1, Node: 1}})
	a := goldenPendingOffsets()
	b := TxnOffsets{Group: "etl", TransactionalID: "etl-2", ProducerID: 4002, Offsets: []TxnOffset{{Group: "etl", Topic: "orders", Partition: 1, Offset: 3, LeaderEpoch: -1}}}
	c := TxnOffsets{Group: "other", TransactionalID: "etl-1", ProducerID: 4001, Epoch: 12, Offsets: []TxnOffset{{Group: "other", Topic: "t", Offset: 1, LeaderEpoch: -1}}}
	a2 := a
	a2.Offsets = []TxnOffset{{Group: "etl", Topic: "orders", Partition: 0, Offset: 130, LeaderEpoch: -1}}
	endB := TxnOffsets{Group: "etl", ProducerID: 4002, End: TxnOffsetsAbort}
	recs := []TxnOffsets{a, b, c, a2, endB}
	for i := range recs {
		if !st.Apply(uint64(i+1), Record{Type: TypeTxnOffsets, Claim: 1, TxnOffsets: &recs[i]}) {
			t.Fatalf("record %d void", i)
		}
	}
	if st.Apply(9, Record{Type: TypeTxnOffsets, Claim: 0, TxnOffsets: &TxnOffsets{Group: "other", ProducerID: 4001, End: TxnOffsetsCommit}}) {
		t.Fatal("a record under no claim was valid")
	}
	want := []TxnOffsets{a2, c}
	if got := st.TxnOffsets(); !reflect.DeepEqual(got, want) {
		t.Fatalf("TxnOffsets = %+v\nwant %+v", got, want)
	}
	cp := st.Snapshot(9)
	enc, err := Encode(Record{Type: TypeCheckpoint, Claim: 1, Checkpoint: &cp})
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != 5 {
		t.Fatalf("a checkpoint with txn-offsets is written in version %d, want 5", enc[0])
	}
	dec, err := Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	from := NewState()
	if !from.Apply(10, dec) {
		t.Fatal("checkpoint void as the first record")
	}
	if got := from.TxnOffsets(); !reflect.DeepEqual(got, want) {
		t.Fatalf("from checkpoint %+v\nwant %+v", got, want)
	}
	// An end record holding offsets, or offsets of another group, is refused by Encode.
	bad := []TxnOffsets{{Group: "etl", End: TxnOffsetsCommit, Offsets: a.Offsets}, {Group: "x", Offsets: a.Offsets}, {Group: "etl", End: 3}}
	for i := range bad {
		if _, err := Encode(Record{Type: TypeTxnOffsets, Claim: 1, TxnOffsets: &bad[i]}); err == nil {
			t.Errorf("bad txn-offsets %d encoded", i)
		}
	}
}

func topicRec(claim uint64, name string, id uint32, created uint64) Record {
	return Record{Type: TypeTopic, Claim: claim, Topic: &TopicIncarnation{Name: name, ID: id, Created: created}}
}

// Topic records fold to the incarnation each topic's offsets belong to: a later one replaces an
// earlier, a gone one removes it, a void one changes nothing, and a checkpoint carries them to a
// reader that starts there.
func TestTopicIncarnationFold(t *testing.T) {
	s := NewState()
	fold(t, s, []applied{
		{0, claimRec(1, 1), true},
		{1, topicRec(1, "orders", 3, 100), true},
		{2, topicRec(1, "totals", 4, 100), true},
		{3, topicRec(1, "orders", 3, 200), true},
		{4, topicRec(1, "totals", 0, 0), true},
		{5, claimRec(2, 2), true},
		{6, topicRec(1, "orders", 9, 900), false},
	})
	want := []TopicIncarnation{{Name: "orders", ID: 3, Created: 200}}
	if got := s.Topics(); !reflect.DeepEqual(got, want) {
		t.Fatalf("topics %+v, want %+v", got, want)
	}
	cp := s.Snapshot(6)
	b, err := Encode(Record{Type: TypeCheckpoint, Claim: 2, Time: t0, Checkpoint: &cp})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewState()
	fold(t, fresh, []applied{{7, r, true}})
	if got := fresh.Topics(); !reflect.DeepEqual(got, want) {
		t.Fatalf("topics from the checkpoint %+v, want %+v", got, want)
	}
	// A checkpoint replaces what a reader held, topics too.
	fold(t, s, []applied{{8, topicRec(2, "other", 1, 1), true}, {9, Record{Type: TypeCheckpoint, Claim: 2, Time: t0, Checkpoint: &cp}, true}})
	if got := s.Topics(); !reflect.DeepEqual(got, want) {
		t.Fatalf("topics after a checkpoint %+v, want %+v", got, want)
	}
}
