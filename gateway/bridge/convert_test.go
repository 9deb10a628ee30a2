package bridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"testing"
	"weak"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// storeLike runs a produced Iggy batch through what a store does to it:
// admission check, then stamping the base offset and append time.
func storeLike(t testing.TB, batch []byte, base uint64) []byte {
	t.Helper()
	if _, err := message.Validate(batch); err != nil {
		t.Fatalf("Iggy batch fails admission: %v", err)
	}
	out := append([]byte(nil), batch...)
	message.Stamp(out, 0, base, 1_700_000_000_000_000)
	return out
}

func mixedRecords() []trec {
	long := bytes.Repeat([]byte("k"), 700)
	return []trec{
		{Key: []byte("key-1"), Value: []byte("value-1"), TS: 1_700_000_000_000},
		{Key: nil, Value: []byte("no key"), TS: 1_700_000_000_001},
		{Key: []byte{}, Value: []byte("empty key"), TS: 1_700_000_000_002},
		{Key: []byte("null value"), Value: nil, TS: 1_700_000_000_003},
		{Key: []byte("empty value"), Value: []byte{}, TS: 1_700_000_000_004},
		{Key: long, Value: []byte("long key"), TS: 1_700_000_000_005},
		{Value: []byte("headers"), TS: 1_700_000_000_006, Headers: []kmsg.Header{
			{Key: "a", Value: []byte("1")}, {Key: "a", Value: []byte("2")}, {Key: "null", Value: nil},
			{Key: "", Value: []byte{}}, {Key: string(long), Value: bytes.Repeat([]byte("v"), 600)},
		}},
		{Value: []byte("an hour later"), TS: 1_700_000_000_000 + 3_600_000*5},
		{Value: []byte("before epoch"), TS: -1},
		{Value: []byte("earlier"), TS: 1_600_000_000_000},
	}
}

func convertRoundTrip(t testing.TB, in []byte, base uint64) []fetched {
	t.Helper()
	kb, rest, err := nextBatch(in)
	if err != nil {
		t.Fatalf("nextBatch: %v", err)
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left after the batch", len(rest))
	}
	c := getConverter(new(Metrics))
	defer putConverter(c)
	ids := &idGen{hi: 42}
	batch, err := c.toIggy(&kb, ids, 4<<20)
	if err != nil {
		t.Fatalf("toIggy: %v", err)
	}
	stored := storeLike(t, batch, base)
	out, n, next, err := c.appendKafka(nil, stored, 0)
	if err != nil {
		t.Fatalf("appendKafka: %v", err)
	}
	if n != int(kb.NumRecords) || next != int64(base)+int64(n) {
		t.Fatalf("appendKafka wrote %d records, next %d", n, next)
	}
	got, codecs := readBatchesCodecs(t, out)
	if len(codecs) != 1 || codecs[0] != kb.codec() {
		t.Fatalf("fetched codecs %v, produced with %d", codecs, kb.codec())
	}
	return got
}

func TestRoundTripEveryCodec(t *testing.T) {
	for _, codec := range []int{codecNone, codecGzip, codecSnappy, codecXerial, codecLZ4, codecZstd} {
		t.Run(fmt.Sprint(codec), func(t *testing.T) {
			recs := mixedRecords()
			got := convertRoundTrip(t, kafkaBatch(t, codec, recs, -1, -1, -1), 1000)
			checkRecords(t, got, recs, 1000)
		})
	}
}

func TestRoundTripLargeRecord(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (1<<20+100)/16)
	recs := []trec{{Key: []byte("big"), Value: big, TS: 5}, {Value: []byte("small"), TS: 6}}
	got := convertRoundTrip(t, kafkaBatch(t, codecZstd, recs, -1, -1, -1), 0)
	checkRecords(t, got, recs, 0)
}

func TestFetchFromMidBatch(t *testing.T) {
	recs := mixedRecords()
	kb, _, err := nextBatch(kafkaBatch(t, codecNone, recs, -1, -1, -1))
	if err != nil {
		t.Fatal(err)
	}
	c := getConverter(new(Metrics))
	defer putConverter(c)
	batch, err := c.toIggy(&kb, &idGen{}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	stored := storeLike(t, batch, 50)
	out, n, next, err := c.appendKafka(nil, stored, 53)
	if err != nil || n != len(recs)-3 || next != 50+int64(len(recs)) {
		t.Fatalf("appendKafka: n %d next %d err %v", n, next, err)
	}
	checkRecords(t, readBatches(t, out), recs[3:], 53)
}

func TestProduceRejects(t *testing.T) {
	good := kafkaBatch(t, codecNone, []trec{{Value: []byte("x"), TS: 1}}, -1, -1, -1)
	badCRC := append([]byte(nil), good...)
	badCRC[len(badCRC)-1] ^= 0xff
	magic1 := append([]byte(nil), good...)
	magic1[16] = 1
	short := good[:len(good)-1]
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"crc", badCRC, kerr.CorruptMessage},
		{"magic", magic1, kerr.UnsupportedForMessageFormat},
		{"short", short, kerr.CorruptMessage},
		{"header only", good[:20], kerr.CorruptMessage},
	}
	for _, tc := range cases {
		_, _, err := nextBatch(tc.in)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}

	big := kafkaBatch(t, codecNone, []trec{{Value: make([]byte, 2000), TS: 1}}, -1, -1, -1)
	kb, _, err := nextBatch(big)
	if err != nil {
		t.Fatal(err)
	}
	c := getConverter(new(Metrics))
	defer putConverter(c)
	if _, err := c.toIggy(&kb, &idGen{}, 1000); !errors.Is(err, kerr.MessageTooLarge) {
		t.Errorf("oversized record: err %v, want MessageTooLarge", err)
	}

	// A batch that claims more records than it holds.
	lying := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(lying[57:], 2)
	binary.BigEndian.PutUint32(lying[23:], 1)
	binary.BigEndian.PutUint32(lying[17:], crc32.Checksum(lying[21:], crc32c))
	kb, _, err = nextBatch(lying)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.toIggy(&kb, &idGen{}, 1000); !errors.Is(err, kerr.CorruptMessage) {
		t.Errorf("record count lie: err %v, want CorruptMessage", err)
	}
}

func TestNativeIggyMessageReadable(t *testing.T) {
	var b message.Builder
	b.Reset()
	b.Add(message.MakeID(1, 0), 1_700_000_000_123_456, []byte("native payload"), nil)
	// Foreign user headers, including one under our prefix with a wrong kind,
	// must not disturb the record.
	var h []byte
	h = appendTLVKey(h, "app.trace")
	h = appendTLVHead(h, kindRaw, 3)
	h = append(h, "abc"...)
	h = appendTLVKey(h, hdrKey)
	h = appendTLVHead(h, kindInt64, 8)
	h = binary.LittleEndian.AppendUint64(h, 7)
	b.Add(message.MakeID(2, 0), 1_700_000_000_124_000, []byte("second"), h)
	batch, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	stored := storeLike(t, batch, 7)
	c := getConverter(new(Metrics))
	defer putConverter(c)
	out, n, _, err := c.appendKafka(nil, stored, 0)
	if err != nil || n != 2 {
		t.Fatalf("appendKafka n %d err %v", n, err)
	}
	checkRecords(t, readBatches(t, out), []trec{
		{Value: []byte("native payload"), TS: 1_700_000_000_123},
		{Value: []byte("second"), TS: 1_700_000_000_124},
	}, 7)
}

func TestLegacyDownConversion(t *testing.T) {
	recs := []trec{
		{Key: []byte("k"), Value: []byte("v"), TS: 1000},
		{Key: nil, Value: nil, TS: 1001},
		{Key: []byte{}, Value: []byte{}, TS: 1002},
	}
	kb, _, err := nextBatch(kafkaBatch(t, codecGzip, recs, -1, -1, -1))
	if err != nil {
		t.Fatal(err)
	}
	c := getConverter(new(Metrics))
	defer putConverter(c)
	batch, err := c.toIggy(&kb, &idGen{}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	stored := storeLike(t, batch, 10)
	for _, magic := range []int8{0, 1} {
		out, n, _, err := c.appendLegacy(nil, stored, 0, magic)
		if err != nil || n != 3 {
			t.Fatalf("magic %d: n %d err %v", magic, n, err)
		}
		for i := 0; len(out) > 0; i++ {
			size := int(binary.BigEndian.Uint32(out[8:]))
			msg := out[:12+size]
			out = out[12+size:]
			var key, val []byte
			var off, ts int64
			if magic == 0 {
				var m kmsg.MessageV0
				if err := m.ReadFrom(msg); err != nil {
					t.Fatal(err)
				}
				key, val, off = m.Key, m.Value, m.Offset
				if uint32(m.CRC) != crc32.ChecksumIEEE(msg[16:]) {
					t.Fatalf("message %d CRC mismatch", i)
				}
			} else {
				var m kmsg.MessageV1
				if err := m.ReadFrom(msg); err != nil {
					t.Fatal(err)
				}
				key, val, off, ts = m.Key, m.Value, m.Offset, m.Timestamp
				if ts != recs[i].TS {
					t.Errorf("message %d ts %d, want %d", i, ts, recs[i].TS)
				}
			}
			if off != int64(10+i) || !sameBytes(key, recs[i].Key) || !sameBytes(val, recs[i].Value) {
				t.Errorf("magic %d message %d: off %d key %q val %q", magic, i, off, key, val)
			}
		}
	}
}

func TestConvertAllocs(t *testing.T) {
	recs := make([]trec, 1000)
	for i := range recs {
		recs[i] = trec{Value: bytes.Repeat([]byte{byte(i)}, 100), TS: 1_700_000_000_000 + int64(i)}
	}
	in := kafkaBatch(t, codecNone, recs, 3, 0, 0)
	c := getConverter(new(Metrics))
	ids := &idGen{}
	var out []byte
	run := func() {
		kb, _, err := nextBatch(in)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := c.toIggy(&kb, ids, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		message.Stamp(batch, 0, 0, 1)
		out, _, _, err = c.appendKafka(out[:0], batch, 0)
		if err != nil {
			t.Fatal(err)
		}
	}
	run()
	if a := testing.AllocsPerRun(20, run); a > 0 {
		t.Errorf("%v allocations per 1000-record round trip, want 0", a)
	}
}

// TestConvertTimestampOrders covers the orders in which the produce path meets a batch's
// smallest timestamp: first, after other records (converted again), and after a first record
// whose timestamp cannot be an origin timestamp.
func TestConvertTimestampOrders(t *testing.T) {
	for name, ts := range map[string][]int64{
		"in order":      {1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_002},
		"smallest last": {1_700_000_000_005, 1_700_000_000_009, 1_700_000_000_001},
		"first invalid": {-1, 1_700_000_000_003, 1_700_000_000_002},
		"wide span":     {1_700_000_000_000, 1_700_000_000_000 + 10_000_000_000, 1_600_000_000_000},
	} {
		t.Run(name, func(t *testing.T) {
			recs := make([]trec, len(ts))
			for i := range recs {
				recs[i] = trec{Value: []byte{byte('a' + i)}, TS: ts[i]}
			}
			checkRecords(t, convertRoundTrip(t, kafkaBatch(t, codecSnappy, recs, -1, -1, -1), 7), recs, 7)
		})
	}
}

// TestVarlongMatchesBinary: the reader's inline one- and two-byte paths decode exactly what
// encoding/binary decodes, for every two-byte input and for encoded values of every length.
func TestVarlongMatchesBinary(t *testing.T) {
	check := func(in []byte) {
		t.Helper()
		want, n := binary.Varint(in)
		r := reader{b: in}
		got := r.varlong()
		if n <= 0 {
			if !r.bad {
				t.Fatalf("%x: decoded %d, binary refuses it", in, got)
			}
			return
		}
		if r.bad || got != want || len(r.b) != len(in)-n {
			t.Fatalf("%x: got %d (bad %v, %d left), want %d (%d left)", in, got, r.bad, len(r.b), want, len(in)-n)
		}
	}
	for i := range 1 << 16 {
		check([]byte{byte(i), byte(i >> 8)})
		check([]byte{byte(i), byte(i >> 8), 0x01})
	}
	for _, v := range []int64{0, -1, 63, -64, 64, 8191, -8192, 8192, 1 << 20, -(1 << 40), math.MaxInt64, math.MinInt64} {
		check(binary.AppendVarint(nil, v))
	}
	check(nil)
	check([]byte{0x80})
}

// TestConverterKeepsNoRequest: a converter handed back holds no view of the batch it converted,
// so a produce request's buffer, uncompressed records and all, is collected once released. The
// converters kept for reuse outlive collections; with views left in them, sixteen producers
// over 96 partitions kept 125 MB of requests alive at the memory limit.
func TestConverterKeepsNoRequest(t *testing.T) {
	src := kafkaBatch(t, codecNone, valueRecs("v", 200), -1, -1, -1)
	frame := make([]byte, len(src))
	copy(frame, src)
	gone := weak.Make(&frame[0])
	c := getConverter(new(Metrics))
	kb, _, err := nextBatch(frame)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.toIggy(&kb, &idGen{}, 1<<20); err != nil {
		t.Fatal(err)
	}
	putConverter(c)
	frame, kb = nil, kbatch{}
	runtime.GC()
	if gone.Value() != nil {
		t.Fatal("the converted request is still reachable after the converter was handed back")
	}
}
