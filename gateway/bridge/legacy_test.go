package bridge

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// legacyMessage encodes one magic 0 or 1 message with kmsg, size and CRC filled in, so the
// bridge's own layout is not used to test its decoder.
func legacyMessage(offset int64, magic, attrs int8, ts int64, key, value []byte) []byte {
	var b []byte
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		b = m.AppendTo(nil)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: magic, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
		b = m.AppendTo(nil)
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// legacyWrapper is a compressed magic 0/1 message holding the message set inner.
func legacyWrapper(t testing.TB, offset int64, magic int8, codec int, ts int64, inner []byte) []byte {
	attrs := int8(codec)
	if codec == codecXerial {
		attrs = codecSnappy
	}
	return legacyMessage(offset, magic, attrs, ts, nil, compressFor(t, codec, inner))
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Produce v0-2 carry magic 0/1 message sets: every message, and every inner message of a
// compressed wrapper, is stored as a record at the next offsets, and reads back as Kafka
// converts it (timestamps of magic 1 kept, -1 for magic 0, no headers).
func TestProduceLegacyMessageSets(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "old", true); err != nil {
		t.Fatal(err)
	}
	const t0 = int64(1_700_000_000_000)
	var want []trec
	produce := func(set []byte, recs ...trec) {
		t.Helper()
		res, err := b.produce(ctx, m, "old", 0, set)
		if err != nil || res.BaseOffset != int64(len(want)) {
			t.Fatalf("produce: base %d, %v; want base %d", res.BaseOffset, err, len(want))
		}
		want = append(want, recs...)
	}
	// Magic 0: no timestamps; keys and values null, empty and set.
	produce(concat(
		legacyMessage(0, 0, 0, 0, nil, []byte("v0")),
		legacyMessage(1, 0, 0, 0, []byte{}, []byte{}),
		legacyMessage(2, 0, 0, 0, []byte("k"), nil),
	), trec{Value: []byte("v0"), TS: -1}, trec{Key: []byte{}, Value: []byte{}, TS: -1}, trec{Key: []byte("k"), TS: -1})
	// Magic 1, uncompressed, timestamps out of order.
	produce(concat(
		legacyMessage(0, 1, 0, t0+5, []byte("a"), []byte("1")),
		legacyMessage(0, 1, 0, t0, []byte("b"), []byte("2")),
	), trec{Key: []byte("a"), Value: []byte("1"), TS: t0 + 5}, trec{Key: []byte("b"), Value: []byte("2"), TS: t0})
	// Compressed wrappers, inner offsets relative (magic 1) or absolute (magic 0), next to a
	// plain message in one set.
	for _, codec := range []int{codecGzip, codecSnappy, codecXerial, codecLZ4} {
		inner := concat(
			legacyMessage(0, 1, 0, t0+1, nil, []byte("x")),
			legacyMessage(1, 1, 0, t0+2, []byte("y"), []byte("yy")),
		)
		produce(concat(legacyWrapper(t, 1, 1, codec, t0+2, inner), legacyMessage(2, 1, 0, t0+3, nil, []byte("z"))),
			trec{Value: []byte("x"), TS: t0 + 1}, trec{Key: []byte("y"), Value: []byte("yy"), TS: t0 + 2}, trec{Value: []byte("z"), TS: t0 + 3})
	}
	inner0 := concat(legacyMessage(7, 0, 0, 0, nil, []byte("p")), legacyMessage(8, 0, 0, 0, nil, []byte("q")))
	produce(legacyWrapper(t, 8, 0, codecGzip, 0, inner0), trec{Value: []byte("p"), TS: -1}, trec{Value: []byte("q"), TS: -1})

	got, res := fetchAll(t, b, m, "old", 0, 0)
	if res.HighWatermark != int64(len(want)) {
		t.Fatalf("high watermark %d, want %d", res.HighWatermark, len(want))
	}
	checkRecords(t, got, want, 0)
}

func TestProduceLegacyMessageSetsRefused(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	if _, err := b.topicInfo(ctx, m, "old", true); err != nil {
		t.Fatal(err)
	}
	good := legacyMessage(0, 1, 0, 5, nil, []byte("ok"))
	badCRC := legacyMessage(0, 1, 0, 5, nil, []byte("ok"))
	badCRC[len(badCRC)-1] ^= 1
	wrapped := legacyWrapper(t, 0, 1, codecGzip, 5, good)
	cases := []struct {
		name string
		set  []byte
		want *kerr.Error
	}{
		{"bad CRC", concat(good, badCRC), kerr.CorruptMessage},
		{"truncated", concat(good, good[:len(good)-3]), kerr.CorruptMessage},
		{"size past the end", func() []byte {
			b := concat(good)
			binary.BigEndian.PutUint32(b[8:], 1<<20)
			return b
		}(), kerr.CorruptMessage},
		{"zstd", legacyMessage(0, 1, codecZstd, 5, nil, []byte("zz")), kerr.UnsupportedCompressionType},
		{"log-append time", legacyMessage(0, 1, attrLogAppendTime, 5, nil, []byte("t")), kerr.InvalidTimestamp},
		{"wrapper in a wrapper", legacyWrapper(t, 0, 1, codecGzip, 5, wrapped), kerr.InvalidRecord},
		{"magic 0 inside magic 1", legacyWrapper(t, 0, 1, codecGzip, 5, legacyMessage(0, 0, 0, 0, nil, []byte("m"))), kerr.InvalidRecord},
		{"magic 2 after magic 1", concat(good, kafkaBatch(t, codecNone, valueRecs("v", 1), -1, -1, -1)), kerr.InvalidRecord},
		{"compressed garbage", legacyMessage(0, 1, codecGzip, 5, nil, []byte("not gzip")), kerr.CorruptMessage},
		{"wrapper without value", legacyMessage(0, 1, codecGzip, 5, nil, nil), kerr.CorruptMessage},
	}
	for _, c := range cases {
		if _, err := b.produce(ctx, m, "old", 0, c.set); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, hw, err := b.offsets(ctx, m, "old", 0); err != nil || hw != 0 {
		t.Fatalf("refused sets stored something: high watermark %d, %v", hw, err)
	}
}
