package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden records under testdata/golden")

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// goldensV1 are one record of each type of format version 1, with every field set, as the log
// keeps them; testdata/golden/v1 holds them as version 1 wrote them, which Decode still reads.
func goldensV1() map[string]Record {
	member := func(id string) Member {
		return Member{
			MemberID: id, InstanceID: "inst-" + id, ClientID: "client", ClientHost: "/10.0.0.7",
			SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute,
			Protocols: []Protocol{
				{Name: "cooperative-sticky", Metadata: []byte{0, 3, 0, 0, 0, 1, 0, 1, 't'}},
				{Name: "range", Metadata: []byte{}},
				{Name: "roundrobin", Metadata: nil},
			},
			Assignment: []byte{0, 3, 0, 0, 0, 1},
		}
	}
	g := Group{Name: "g1", Generation: 7, ProtocolType: "consumer", Protocol: "cooperative-sticky",
		Leader: "m-1", State: "Stable", Members: []Member{member("m-1"), member("m-2")}}
	oc := OffsetCommit{Group: "g1", Topic: "orders", Partition: 3, Offset: 1234567, LeaderEpoch: 4,
		Metadata: "meta", Expire: t0.Add(24 * time.Hour)}
	return map[string]Record{
		"claim":          {Type: TypeClaim, Claim: 3, Time: t0, ClaimInfo: &Claim{Number: 3, Node: 2, Addr: "10.0.0.2:9092"}},
		"group":          {Type: TypeGroup, Claim: 3, Time: t0, Group: &g},
		"offset-commit":  {Type: TypeOffsetCommit, Claim: 3, Time: t0, OffsetCommit: &oc},
		"group-deleted":  {Type: TypeGroupDeleted, Claim: 3, Time: t0, GroupDeleted: &GroupDeleted{Group: "g1"}},
		"offset-deleted": {Type: TypeOffsetDeleted, Claim: 3, Time: t0, OffsetDeleted: &OffsetDeleted{Group: "g1", Topic: "orders", Partition: 3}},
		"checkpoint": {Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &Checkpoint{
			Through: 99, Groups: []Group{g, {Name: "g2", Generation: 0, ProtocolType: "consumer", State: "Empty"}},
			Offsets: []OffsetCommit{oc, {Group: "g1", Topic: "orders", Partition: 4, Offset: 9, LeaderEpoch: -1},
				{Group: "g2", Topic: "orders", Partition: 0, Offset: 0, LeaderEpoch: -1}},
		}},
	}
}

func goldenConsumerGroup() ConsumerGroup {
	t1 := [16]byte{0x1f, 0x2e, 0x3d, 0x4c, 0x5b, 0x6a, 0x79, 0x88, 0x97, 0xa6, 0xb5, 0xc4, 0xd3, 0xe2, 0xf1, 0x00}
	t2 := [16]byte{0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	return ConsumerGroup{
		Name: "cg1", Epoch: 12, AssignmentEpoch: 11,
		Topics: []TopicMeta{{Name: "orders", ID: t1, Partitions: 3}, {Name: "orders-eu", ID: t2, Partitions: 1}},
		Members: []ConsumerMember{{
			MemberID: "m-1", InstanceID: "inst-1", RackID: "rack-a", ClientID: "client", ClientHost: "/10.0.0.7",
			RebalanceTimeout: 45 * time.Second, SubscribedTopics: []string{"orders"}, ServerAssignor: "uniform",
			Epoch: 11, PreviousEpoch: 9, State: MemberUnrevokedPartitions,
			Assigned:          Assignment{{TopicID: t1, Partitions: []int32{0, 2}, Epochs: []int32{9, 11}}},
			PendingRevocation: Assignment{{TopicID: t1, Partitions: []int32{1}}},
			Target:            Assignment{{TopicID: t1, Partitions: []int32{0, 2}}},
		}, {
			MemberID: "m-2", ClientID: "client", ClientHost: "/10.0.0.8", RebalanceTimeout: time.Minute,
			SubscribedRegex: "orders.*", Epoch: 11, PreviousEpoch: 11, State: MemberUnreleasedPartitions,
			Assigned: Assignment{{TopicID: t2, Partitions: []int32{0}, Epochs: []int32{11}}},
			Target:   Assignment{{TopicID: t1, Partitions: []int32{1}}, {TopicID: t2, Partitions: []int32{0}}},
		}},
		Removed: []string{"m-0"},
	}
}

// goldens are one record of each type, with every field set, as the log keeps them.
func goldens() map[string]Record {
	g := goldensV1()
	cg := goldenConsumerGroup()
	g["consumer-group"] = Record{Type: TypeConsumerGroup, Claim: 3, Time: t0, ConsumerGroup: &cg}
	whole := goldenConsumerGroup()
	whole.Removed = nil
	cp := *g["checkpoint"].Checkpoint
	cp.ConsumerGroups = []ConsumerGroup{whole, {Name: "cg2", Epoch: 3, AssignmentEpoch: 3}}
	g["checkpoint"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cp}
	tx := goldenTransaction()
	g["transaction"] = Record{Type: TypeTransaction, Claim: 3, Time: t0, Transaction: &tx}
	cpt := cp
	cpt.Transactions = []Transaction{tx, {ID: "tx-idle", ProducerID: 7, Epoch: 0, Timeout: time.Minute, State: TxnCompleteAbort, Updated: t0}}
	g["checkpoint-transactions"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cpt}
	txo := goldenTransaction()
	txo.State, txo.Offsets = TxnOngoing, goldenTxnOffsets()
	g["transaction-offsets"] = Record{Type: TypeTransaction, Claim: 3, Time: t0, Transaction: &txo}
	cpo := cp
	cpo.Transactions = []Transaction{txo, {ID: "tx-idle", ProducerID: 7, Epoch: 0, Timeout: time.Minute, State: TxnCompleteAbort, Updated: t0}}
	g["checkpoint-transaction-offsets"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cpo}
	pend := goldenPendingOffsets()
	g["txn-offsets"] = Record{Type: TypeTxnOffsets, Claim: 3, Time: t0, TxnOffsets: &pend}
	g["txn-offsets-commit"] = Record{Type: TypeTxnOffsets, Claim: 3, Time: t0,
		TxnOffsets: &TxnOffsets{Group: "etl", TransactionalID: "etl-1", ProducerID: 4001, Epoch: 12, End: TxnOffsetsCommit}}
	cpp := cp
	cpp.TxnOffsets = []TxnOffsets{pend, {Group: "etl", TransactionalID: "etl-2", ProducerID: 4002, Epoch: 0,
		Offsets: []TxnOffset{{Group: "etl", Topic: "orders", Partition: 1, Offset: 9, LeaderEpoch: -1}}}}
	g["checkpoint-txn-offsets"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cpp}
	g["topic"] = Record{Type: TypeTopic, Claim: 3, Time: t0, Topic: &TopicIncarnation{Name: "orders", ID: 7, Created: 1_790_000_000_123_456}}
	g["topic-gone"] = Record{Type: TypeTopic, Claim: 3, Time: t0, Topic: &TopicIncarnation{Name: "orders"}}
	cptp := cpp
	cptp.Topics = []TopicIncarnation{{Name: "orders", ID: 7, Created: 1_790_000_000_123_456}, {Name: "totals", ID: 1, Created: 5}}
	g["checkpoint-topics"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cptp}
	cpn := cp
	cpn.Topics = []TopicIncarnation{{Name: "orders", ID: 7, Created: 9}}
	g["checkpoint-topics-no-transactions"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cpn}
	txp := goldenTransactionProducers()
	g["transaction-producers"] = Record{Type: TypeTransaction, Claim: 3, Time: t0, Transaction: &txp}
	cpl := cp
	cpl.Transactions = []Transaction{tx, {ID: "tx-retried", ProducerID: 7, Epoch: 4, Timeout: time.Minute, State: TxnEmpty, Updated: t0,
		Last: &ProducerEpoch{ProducerID: 7, Epoch: 3}}}
	g["checkpoint-transaction-producers"] = Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &cpl}
	return g
}

// goldenTransactionProducers is a transactions-v2 commit that spent its producer id's epochs: the
// markers go out at epoch 32767, the Complete record takes producer id 5002 at epoch 0, and the
// EndTxn retried at 32766 is recognised by Last.
func goldenTransactionProducers() Transaction {
	tx := goldenTransaction()
	tx.Epoch = 32767
	tx.Last = &ProducerEpoch{ProducerID: 4001, Epoch: 32766}
	tx.Next = &ProducerEpoch{ProducerID: 5002, Epoch: 0}
	return tx
}

// goldenPendingOffsets is one producer's pending offsets in group etl.
func goldenPendingOffsets() TxnOffsets {
	return TxnOffsets{Group: "etl", TransactionalID: "etl-1", ProducerID: 4001, Epoch: 12, Offsets: goldenTxnOffsets()}
}

func goldenTxnOffsets() []TxnOffset {
	return []TxnOffset{
		{Group: "etl", Topic: "orders", Partition: 0, Offset: 120, LeaderEpoch: -1, Metadata: ""},
		{Group: "etl", Topic: "orders", Partition: 2, Offset: 7, LeaderEpoch: 3, Metadata: "m"},
	}
}

func goldenTransaction() Transaction {
	return Transaction{
		ID: "etl-1", ProducerID: 4001, Epoch: 12, Timeout: 10 * time.Second, State: TxnPrepareCommit,
		Partitions: []TxnTopic{{Topic: "orders", Partitions: []int32{0, 2}}, {Topic: "totals", Partitions: []int32{1}}},
		Groups:     []string{"etl"},
		Started:    t0.Add(-2 * time.Second), Updated: t0,
	}
}

// Records that format version 1 wrote decode as they were written: a gateway of version 2 reads
// a log an older fleet wrote.
func TestGoldenRecordsV1(t *testing.T) {
	for name, r := range goldensV1() {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", "v1", name+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != 1 {
			t.Fatalf("%s: version %d in the v1 golden", name, b[0])
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: decode v1 golden: %v", name, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: decoded\n%+v\nwant\n%+v", name, got, r)
		}
	}
}

// Every golden record encodes to the stored bytes exactly and decodes back to itself: a change
// of the format shows here, and needs a new version byte.
func TestGoldenRecords(t *testing.T) {
	for name, r := range goldens() {
		path := filepath.Join("testdata", "golden", name+".bin")
		b, err := Encode(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update once to create it)", name, err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: encoding changed\n got %x\nwant %x", name, b, want)
		}
		got, err := Decode(want)
		if err != nil {
			t.Fatalf("%s: decode golden: %v", name, err)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("%s: decoded\n%+v\nwant\n%+v", name, got, r)
		}
	}
}

// The claim record spelled out byte by byte, as the package doc of gateway/coordinator
// documents the layout.
func TestClaimLayout(t *testing.T) {
	b, err := Encode(goldens()["claim"])
	if err != nil {
		t.Fatal(err)
	}
	want := "02" + "01" + // version 2, type claim
		"0300000000000000" + // claim 3, u64 LE
		hex.EncodeToString(le64(uint64(t0.UnixNano()))) + // time, unix ns i64 LE
		"04" + // node 2, zigzag varint
		"0d" + hex.EncodeToString([]byte("10.0.0.2:9092")) // addr, uvarint length + bytes
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("claim bytes\n got %s\nwant %s", got, want)
	}
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

// cgWith is the golden consumer-group record with change applied, encoded.
func cgWith(t *testing.T, change func(*ConsumerGroup)) []byte {
	t.Helper()
	g := goldenConsumerGroup()
	change(&g)
	b, err := Encode(Record{Type: TypeConsumerGroup, Claim: 3, Time: t0, ConsumerGroup: &g})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cpRemoving is a checkpoint whose consumer group removes members, which Encode refuses: the
// bytes are a checkpoint of the group's members followed by a removal written by hand.
func cpRemoving(t *testing.T) []byte {
	t.Helper()
	whole := goldenConsumerGroup()
	whole.Removed = nil
	b, err := Encode(Record{Type: TypeCheckpoint, Claim: 3, Time: t0, Checkpoint: &Checkpoint{Through: 1, ConsumerGroups: []ConsumerGroup{whole}}})
	if err != nil {
		t.Fatal(err)
	}
	// The last byte is the group's removed count, 0: make it one removal of "x".
	return append(b[:len(b)-1], 1, 1, 'x')
}

func TestDecodeErrors(t *testing.T) {
	good, _ := Encode(goldens()["group"])
	cg, _ := Encode(goldens()["consumer-group"])
	tx, _ := Encode(goldens()["transaction"])
	txo, _ := Encode(goldens()["transaction-offsets"])
	txp, _ := Encode(goldens()["transaction-producers"])
	// The golden transaction with producers ends with its last producer (1, varint 4001, varint
	// 32766) and its next (1, varint 5002, varint 0).
	next := bytes.LastIndexByte(txp[:len(txp)-4], 1)
	txpPatch := func(pos int, with ...byte) []byte {
		b := append([]byte{}, txp...)
		copy(b[pos:], with)
		return b
	}
	// In the golden transaction the state byte (2, PrepareCommit) comes right before the topic
	// count (2) and the first topic, "orders", whose partitions are 0 and 2.
	at := bytes.Index(tx, []byte("\x02\x06orders"))
	txPatch := func(pos int, with ...byte) []byte {
		b := append([]byte{}, tx...)
		copy(b[pos:], with)
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"future version", append([]byte{Version + 1}, good[1:]...), ErrVersion},
		{"version 0", append([]byte{0}, good[1:]...), ErrVersion},
		{"short header", good[:10], ErrTruncated},
		{"unknown type", append([]byte{2, 99}, good[2:]...), ErrType},
		{"consumer group in version 1", append([]byte{1}, cg[1:]...), ErrType},
		{"member state past the known ones", cgWith(t, func(g *ConsumerGroup) { g.Members[0].State = 3 }), ErrCorrupt},
		{"assignment topic without partitions", cgWith(t, func(g *ConsumerGroup) { g.Members[0].Target[0].Partitions = nil }), ErrCorrupt},
		{"assignment epochs not one per partition", cgWith(t, func(g *ConsumerGroup) { g.Members[0].Assigned[0].Epochs = []int32{9} }), ErrCorrupt},
		{"truncated consumer group", cg[:len(cg)-5], ErrTruncated},
		{"checkpoint consumer group that removes", cpRemoving(t), ErrCorrupt},
		{"truncated body", good[:len(good)-3], ErrTruncated},
		{"transaction in version 2", append([]byte{2}, tx[1:]...), ErrType},
		{"transaction state past the known ones", txPatch(at-1, 7), ErrCorrupt},
		{"transaction partitions out of order", txPatch(at+8, 2, 4, 0), ErrCorrupt},
		{"transaction topic without partitions", txPatch(at+8, 0), ErrCorrupt},
		{"truncated transaction", tx[:len(tx)-4], ErrTruncated},
		{"staged offsets out of order", txoOutOfOrder(t), ErrCorrupt},
		{"truncated staged offsets", txo[:len(txo)-3], ErrTruncated},
		{"transaction with offsets in version 3", append([]byte{3}, txo[1:]...), ErrCorrupt},
		{"transaction with producers in version 6", append([]byte{6}, txp[1:]...), ErrCorrupt},
		{"next producer flag past 1", txpPatch(next, 2), ErrCorrupt},
		{"negative next producer id", txpPatch(next+1, 0x01), ErrCorrupt},
		{"truncated producers", txp[:len(txp)-2], ErrTruncated},
		{"trailing bytes", append(append([]byte{}, good...), 0), ErrCorrupt},
		{"huge member count", append(append([]byte{}, good[:HeaderSize]...), 2, 'g', '1', 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f), ErrCorrupt},
	}
	for _, c := range cases {
		_, err := Decode(c.in)
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want a *DecodeError wrapping %v", c.name, err, c.want)
		}
	}
}

func TestEncodeRefusesMismatch(t *testing.T) {
	bad := []Record{
		{Type: TypeClaim, Claim: 2, ClaimInfo: &Claim{Number: 3}},
		{Type: TypeGroup},
		{Type: TypeCheckpoint, Group: &Group{}},
		{Type: Type(42)},
		{Type: TypeConsumerGroup},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{ConsumerGroups: []ConsumerGroup{{Name: "g", Removed: []string{"m"}}}}},
		{Type: TypeTransaction},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", State: TxnDead + 1}},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", Partitions: []TxnTopic{{Topic: "a"}}}},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", Partitions: []TxnTopic{{Topic: "b", Partitions: []int32{0}}, {Topic: "a", Partitions: []int32{0}}}}},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", Groups: []string{"g", "g"}}},
		{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Transactions: []Transaction{{ID: "t", Partitions: []TxnTopic{{Topic: "a", Partitions: []int32{1, 1}}}}}}},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", Last: &ProducerEpoch{ProducerID: 1, Epoch: -1}}},
		{Type: TypeTransaction, Transaction: &Transaction{ID: "t", Next: &ProducerEpoch{ProducerID: -1}}},
	}
	for _, r := range bad {
		if _, err := Encode(r); err == nil {
			t.Errorf("Encode(%+v) succeeded", r)
		}
	}
}

// Whatever Decode accepts, Encode writes back to something that decodes the same; Decode never
// panics and fails only with a *DecodeError.
func FuzzDecode(f *testing.F) {
	for _, r := range goldens() {
		b, _ := Encode(r)
		f.Add(b)
	}
	for name := range goldensV1() {
		if b, err := os.ReadFile(filepath.Join("testdata", "golden", "v1", name+".bin")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		again, err := Encode(r)
		if err != nil {
			t.Fatalf("re-encode of a decoded record: %v", err)
		}
		r2, err := Decode(again)
		if err != nil {
			t.Fatalf("decode of a re-encoded record: %v", err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the record\n%+v\n%+v", r, r2)
		}
		NewState().Apply(0, r)
	})
}

// txoOutOfOrder is the golden transaction with staged offsets whose two offsets are swapped.
func txoOutOfOrder(t *testing.T) []byte {
	t.Helper()
	r := goldens()["transaction-offsets"]
	tx := *r.Transaction
	good, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	// Encode refuses the swapped order, so the bytes are built from the sorted record: the
	// first staged offset's group "etl" and topic "orders" begin the offsets section.
	first, second := tx.Offsets[0], tx.Offsets[1]
	enc := func(o TxnOffset) []byte {
		var w writer
		w.str(o.Group)
		w.str(o.Topic)
		w.varint(int64(o.Partition))
		w.varint(o.Offset)
		w.varint(int64(o.LeaderEpoch))
		w.str(o.Metadata)
		return w.b
	}
	a, b := enc(first), enc(second)
	tail := append(append([]byte{}, a...), b...)
	if !bytes.HasSuffix(good, tail) {
		t.Fatal("staged offsets are not the end of the record")
	}
	out := append([]byte{}, good[:len(good)-len(tail)]...)
	return append(append(out, b...), a...)
}
