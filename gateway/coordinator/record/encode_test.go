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

// goldens are one record of each type, with every field set, as the log keeps them.
func goldens() map[string]Record {
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
	want := "01" + "01" + // version 1, type claim
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

func TestDecodeErrors(t *testing.T) {
	good, _ := Encode(goldens()["group"])
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"future version", append([]byte{2}, good[1:]...), ErrVersion},
		{"short header", good[:10], ErrTruncated},
		{"unknown type", append([]byte{1, 99}, good[2:]...), ErrType},
		{"truncated body", good[:len(good)-3], ErrTruncated},
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
