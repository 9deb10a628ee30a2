package store

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func TestXXH32Vectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0xE2293B2F},
	} {
		if got := xxh32([]byte(tc.in)); got != tc.want {
			t.Errorf("xxh32(%q) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
}

func TestParseSizeAndDuration(t *testing.T) {
	sizes := map[string]uint64{"1048576": 1 << 20, "1 MiB": 1 << 20, "128MiB": 128 << 20, "4KiB": 4096,
		"1GB": 1e9, "unlimited": wire.Unlimited}
	for in, want := range sizes {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "ten", "1 XB", "-5"} {
		if _, ok := parseSize(bad); ok {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
	durs := map[string]uint64{"15s": 15_000_000, "1h 30m": 5_400_000_000, "2d": 172_800_000_000, "none": wire.Unlimited, "500": 500}
	for in, want := range durs {
		if got, ok := parseDurationMicros(in); !ok || got != want {
			t.Errorf("parseDurationMicros(%q) = %d %v, want %d", in, got, ok, want)
		}
	}
	if _, ok := parseDurationMicros("soon"); ok {
		t.Errorf("parseDurationMicros accepted garbage")
	}
}

func TestAdmitTopicOptions(t *testing.T) {
	block := wire.AppendTLV(nil,
		wire.StringEntry(wire.OptEnforceFsync, "true"),
		wire.StringEntry(wire.OptSegmentSize, "2 MiB"),
		wire.Uint8Entry(wire.OptCompressionAlgorithm, wire.CompressionGzip),
		wire.Uint64Entry(wire.OptMessageExpiry, 0),
	)
	o, err := admitTopicOptions(block, topicDefaults, false)
	if err != nil {
		t.Fatal(err)
	}
	if !o.EnforceFsync || o.SegmentSize != 2<<20 || o.Compression != wire.CompressionGzip || o.MessageExpiry != wire.Unlimited {
		t.Fatalf("resolved %+v", o)
	}
	e, ok := wire.LookupTLV(o.Explicit, wire.OptEnforceFsync)
	if !ok || e.ValueKind != wire.KindBool || e.Value[0] != 1 {
		t.Fatalf("enforce_fsync not canonical in explicit block: %+v", e)
	}
	if e, ok := wire.LookupTLV(o.Explicit, wire.OptCompressionAlgorithm); !ok || string(e.Value) != "gzip" {
		t.Fatalf("compression not canonical: %+v", e)
	}
	if _, ok := wire.LookupTLV(o.Explicit, wire.OptMessageExpiry); ok {
		t.Fatalf("a zero expiry must stay derived")
	}
	if _, ok := wire.LookupTLV(o.Derived, wire.OptMessageExpiry); !ok {
		t.Fatalf("message_expiry missing from the derived block")
	}
	for name, tc := range map[string]struct {
		block  []byte
		update bool
		want   wire.Code
	}{
		"unknown key":           {wire.AppendTLV(nil, wire.StringEntry("nope", "1")), false, wire.UnsupportedOptionKey},
		"zero messages to save": {wire.AppendTLV(nil, wire.Uint32Entry(wire.OptMessagesRequiredToSave, 0)), false, wire.InvalidOptionValue},
		"bool as string yes":    {wire.AppendTLV(nil, wire.StringEntry(wire.OptEnforceFsync, "yes")), false, wire.InvalidOptionValue},
		"segment too small":     {wire.AppendTLV(nil, wire.Uint64Entry(wire.OptSegmentSize, 4096)), false, wire.InvalidOptionValue},
		"update fixed key":      {wire.AppendTLV(nil, wire.BoolEntry(wire.OptEnforceFsync, true)), true, wire.UnsupportedOptionKey},
		"malformed block":       {[]byte{2, 1, 0}, false, wire.InvalidOptionValue},
	} {
		if _, err := admitTopicOptions(tc.block, topicDefaults, tc.update); err != tc.want {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
	}
}
