package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// The cross-SDK options golden block: enforce_fsync = Bool true,
// segment_size = Uint64 1 GiB.
var goldenOptions = []byte{
	2, 13, 0, 0, 0, 'e', 'n', 'f', 'o', 'r', 'c', 'e', '_', 'f', 's', 'y', 'n', 'c',
	3, 1, 0, 0, 0, 1,
	2, 12, 0, 0, 0, 's', 'e', 'g', 'm', 'e', 'n', 't', '_', 's', 'i', 'z', 'e',
	12, 8, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0,
}

func TestOptionsGolden(t *testing.T) {
	got := AppendTLV(nil, BoolEntry(OptEnforceFsync, true), Uint64Entry(OptSegmentSize, 1<<30))
	if !bytes.Equal(got, goldenOptions) {
		t.Fatalf("options block:\n got %v\nwant %v", got, goldenOptions)
	}
	n, err := ValidateOptions(goldenOptions)
	if err != nil || n != 2 {
		t.Fatalf("ValidateOptions: %d %v", n, err)
	}
	e, ok := LookupTLV(goldenOptions, OptSegmentSize)
	if v, isU := e.AsUint(); !ok || !isU || v != 1<<30 {
		t.Fatalf("lookup segment_size: %v %v %d", ok, isU, v)
	}
	e, _ = LookupTLV(goldenOptions, OptEnforceFsync)
	if v, isB := e.AsBool(); !isB || !v {
		t.Fatal("enforce_fsync")
	}
}

func TestTLVMalformed(t *testing.T) {
	key := func(kind Kind, n int) []byte {
		return AppendTLV(nil, TLVEntry{KeyKind: kind, Key: bytes.Repeat([]byte{'k'}, n), ValueKind: KindString, Value: []byte("v")})
	}
	cases := []struct {
		name    string
		in      []byte
		options bool // the failure is specific to options blocks
	}{
		{"kind zero", key(0, 1), false},
		{"key length zero", key(KindString, 0), false},
		{"key length 256", key(KindString, 256), false},
		{"truncated length", goldenOptions[:3], false},
		{"truncated field", goldenOptions[:10], false},
		{"odd fields", goldenOptions[:18], false},
		{"trailing byte", append(append([]byte{}, goldenOptions...), 2), false},
		{"non-string key", AppendTLV(nil, TLVEntry{KeyKind: KindUint8, Key: []byte{1}, ValueKind: KindString, Value: []byte("v")}), true},
		{"duplicate key", AppendTLV(nil, StringEntry("a", "1"), StringEntry("a", "2")), true},
		{"invalid utf8 key", AppendTLV(nil, TLVEntry{KeyKind: KindString, Key: []byte{0xff}, ValueKind: KindString, Value: []byte("v")}), true},
	}
	for _, c := range cases {
		_, tlvErr := ValidateTLV(c.in)
		_, optErr := ValidateOptions(c.in)
		if !errors.Is(optErr, InvalidFormat) {
			t.Errorf("%s: ValidateOptions = %v", c.name, optErr)
		}
		if c.options != (tlvErr == nil) {
			t.Errorf("%s: ValidateTLV = %v", c.name, tlvErr)
		}
	}
	wrongSize := AppendTLV(nil, TLVEntry{KeyKind: KindString, Key: []byte("k"), ValueKind: KindUint64, Value: []byte{1, 2}})
	if _, err := ValidateTLV(wrongSize); err != nil {
		t.Errorf("structural validation must leave value sizes alone: %v", err)
	}
	if _, err := ValidateTLVStrict(wrongSize); err == nil {
		t.Error("strict validation must reject a 2-byte uint64")
	}
	unknownKind := AppendTLV(nil, TLVEntry{KeyKind: KindString, Key: []byte("k"), ValueKind: 200, Value: []byte("x")})
	if _, err := ValidateOptions(unknownKind); err != nil {
		t.Errorf("unknown value kinds are forwarded: %v", err)
	}
	if n, err := ValidateOptions(nil); n != 0 || err != nil {
		t.Error("empty block")
	}
	var many []TLVEntry
	for i := 0; i < MaxOptions+1; i++ {
		many = append(many, Uint32Entry(string(rune('a'+i%26))+string(rune('a'+i/26%26))+string(rune('a'+i/676)), uint32(i)))
	}
	if _, err := ValidateOptions(AppendTLV(nil, many...)); err == nil {
		t.Error("1025 options accepted")
	}
}

func TestTLVTypedValues(t *testing.T) {
	block := AppendTLV(nil, StringEntry("s", "x"), Uint8Entry("u8", 7), Uint32Entry("u32", 9),
		Int64Entry("i", -5), Float64Entry("f", 2.5))
	entries, err := DecodeTLV(block)
	if err != nil || len(entries) != 5 {
		t.Fatal(err)
	}
	if s, ok := entries[0].AsString(); !ok || s != "x" {
		t.Error("string")
	}
	if v, ok := entries[1].AsUint(); !ok || v != 7 {
		t.Error("uint8")
	}
	if v, ok := entries[2].AsUint(); !ok || v != 9 {
		t.Error("uint32")
	}
	if v, ok := entries[3].AsInt(); !ok || v != -5 {
		t.Error("int64")
	}
	if v, ok := entries[4].AsFloat(); !ok || v != 2.5 {
		t.Error("float64")
	}
	if _, ok := entries[0].AsUint(); ok {
		t.Error("string read as uint")
	}
}

func TestIdentifierEncoding(t *testing.T) {
	if got := NumericID(0x01020304).AppendTo(nil); !bytes.Equal(got, []byte{1, 4, 4, 3, 2, 1}) {
		t.Fatalf("numeric: %v", got)
	}
	if got := NamedID("ab").AppendTo(nil); !bytes.Equal(got, []byte{2, 2, 'a', 'b'}) {
		t.Fatalf("named: %v", got)
	}
	for _, bad := range [][]byte{{}, {1}, {1, 3, 0, 0, 0}, {1, 4, 0, 0, 0}, {2, 0}, {2, 3, 'a'}, {3, 1, 'a'}, {2, 1, 0xff}} {
		var id Identifier
		if err := id.Decode(bad); !errors.Is(err, InvalidFormat) {
			t.Errorf("Decode(%v) = %v", bad, err)
		}
	}
}

func TestPrimitiveEncodings(t *testing.T) {
	if got := (Consumer{ConsumerKindGroup, NumericID(3)}).AppendTo(nil); !bytes.Equal(got, []byte{2, 1, 4, 3, 0, 0, 0}) {
		t.Errorf("consumer %v", got)
	}
	if got := PartitionIDPartitioning(5).AppendTo(nil); !bytes.Equal(got, []byte{2, 4, 5, 0, 0, 0}) {
		t.Errorf("partitioning %v", got)
	}
	if got := (Partitioning{Kind: PartitionBalanced}).AppendTo(nil); !bytes.Equal(got, []byte{1, 0}) {
		t.Errorf("balanced %v", got)
	}
	if got := (PollingStrategy{PollOffset, 258}).AppendTo(nil); !bytes.Equal(got, []byte{1, 2, 1, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("strategy %v", got)
	}
	if got := SomePartition(7).AppendTo(nil); !bytes.Equal(got, []byte{1, 7, 0, 0, 0}) {
		t.Errorf("partition %v", got)
	}
	r := NewReader([]byte{2, 9, 0, 0, 0})
	if p := r.OptionalPartition("p"); p.Present || p.ID != 0 {
		t.Errorf("flag 2 means absent: %+v", p)
	}
}

func TestPermissionsRoundTrip(t *testing.T) {
	p := Permissions{
		Global: GlobalPermissions{ManageServers: true, ReadUsers: true, SendMessages: true},
		Streams: []StreamPermissions{
			{StreamID: 1, ReadStream: true, Topics: []TopicPermissions{{TopicID: 2, PollMessages: true}, {TopicID: 3, ManageTopic: true}}},
			{StreamID: 4, SendMessages: true},
		},
	}
	b := p.AppendTo(nil)
	// 10 globals + has_streams, stream 1 (4+6+1) + 2 topics (4+4+1 each) + next, stream 4 (4+6+1) + next.
	if len(b) != 11+11+18+1+11+1 {
		t.Fatalf("permissions length %d", len(b))
	}
	var back Permissions
	if err := back.Decode(b); err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, back, p)
	}
	for i := 0; i < len(b); i++ {
		if err := back.Decode(b[:i]); err == nil {
			t.Fatalf("truncated to %d bytes decoded", i)
		}
	}
	root := AllPermissions()
	if got := root.AppendTo(nil); !bytes.Equal(got, []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}) {
		t.Fatalf("root: %v", got)
	}
}

func TestRegisterShapes(t *testing.T) {
	pw := PasswordLogin{Version: OurClientVersion(), Username: "iggy", Password: "secret"}
	body := pw.AppendTo(nil)
	want := []byte{0x00, 0x2C, 0, 0, 10, 'i', 'g', 'g', 'y', '-', 'k', 'a', 'f', 'k', 'a', byte(len(SDKVersion))}
	if !bytes.HasPrefix(body, want) {
		t.Fatalf("prefix %v", body[:len(want)])
	}
	if !bytes.HasSuffix(body, []byte{4, 'i', 'g', 'g', 'y', 6, 's', 'e', 'c', 'r', 'e', 't', 0, 0, 0, 0}) {
		t.Fatalf("tail %v", body)
	}
	s, err := ParseRegister(body)
	if err != nil || !s.HasPassword || s.HasToken || s.Password != pw {
		t.Fatalf("password shape: %+v %v", s, err)
	}

	tok := TokenLogin{Version: OurClientVersion(), Token: "tok-123"}
	s, err = ParseRegister(tok.AppendTo(nil))
	if err != nil || s.HasPassword || !s.HasToken || s.Token != tok {
		t.Fatalf("token shape: %+v %v", s, err)
	}

	// A password body with an empty password also parses as a token body.
	empty := PasswordLogin{Version: OurClientVersion(), Username: "iggy"}
	s, err = ParseRegister(empty.AppendTo(nil))
	if err != nil || !s.HasPassword || !s.HasToken || s.Token.Token != "iggy" {
		t.Fatalf("ambiguous body: %+v %v", s, err)
	}

	if _, err := ParseRegister([]byte{0, 0x2C, 0, 0, 0}); !errors.Is(err, InvalidFormat) {
		t.Fatalf("bad prefix: %v", err)
	}
	s, err = ParseRegister(OurClientVersion().appendTo(nil))
	if err != nil || s.HasPassword || s.HasToken {
		t.Fatalf("prefix only: %+v %v", s, err)
	}
}
