package bridge

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// codecXerial is a test-only pseudo codec: snappy with the Java xerial framing.
const codecXerial = 100

// trec is a record as a test wants it: nil Key/Value with the Null flags are
// Kafka nulls, a non-nil empty slice is an empty value.
type trec struct {
	Key, Value []byte
	Headers    []kmsg.Header
	TS         int64
}

func compressFor(t testing.TB, codec int, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch codec {
	case codecNone:
		return raw
	case codecGzip:
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case codecSnappy:
		return snappy.Encode(nil, raw)
	case codecXerial:
		buf.Write(xerialMagic)
		buf.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for len(raw) > 0 {
			n := min(len(raw), 1000)
			blk := snappy.Encode(nil, raw[:n])
			buf.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			buf.Write(blk)
			raw = raw[n:]
		}
	case codecLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case codecZstd:
		w, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw)
		w.Close()
	default:
		t.Fatalf("codec %d", codec)
	}
	return buf.Bytes()
}

// kafkaBatch encodes recs as one magic-2 batch with kmsg, the way a producer
// would, so the bridge's own encoder is not used to test its decoder.
func kafkaBatch(t testing.TB, codec int, recs []trec, pid int64, epoch int16, seq int32) []byte {
	t.Helper()
	first := recs[0].TS
	maxTS := first
	var raw []byte
	for i, r := range recs {
		kr := kmsg.Record{TimestampDelta64: r.TS - first, OffsetDelta: int32(i), Key: r.Key, Value: r.Value, Headers: r.Headers}
		body := kr.AppendTo(nil)
		_, n := binary.Varint(body)
		kr.Length = int32(len(body) - n)
		raw = kr.AppendTo(raw)
		maxTS = max(maxTS, r.TS)
	}
	attrs := int16(codec)
	if codec == codecXerial {
		attrs = codecSnappy
	}
	rb := kmsg.RecordBatch{
		FirstOffset:     0,
		Magic:           2,
		Attributes:      attrs,
		LastOffsetDelta: int32(len(recs) - 1),
		FirstTimestamp:  first,
		MaxTimestamp:    maxTS,
		ProducerID:      pid,
		ProducerEpoch:   epoch,
		FirstSequence:   seq,
		NumRecords:      int32(len(recs)),
		Records:         compressFor(t, codec, raw),
	}
	rb.Length = int32(49 + len(rb.Records))
	out := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32c))
	return out
}

// fetched is one record read back from fetch output.
type fetched struct {
	Offset int64
	trec
}

// readBatches decodes magic-2 batches with kmsg and checks their CRCs.
func readBatches(t testing.TB, b []byte) []fetched {
	t.Helper()
	out, _ := readBatchesCodecs(t, b)
	return out
}

// readBatchesCodecs is readBatches that also reports each batch's codec.
func readBatchesCodecs(t testing.TB, b []byte) ([]fetched, []int) {
	t.Helper()
	var out []fetched
	var codecs []int
	for len(b) > 0 {
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(b); err != nil {
			t.Fatalf("decode fetched batch: %v", err)
		}
		end := 12 + int(rb.Length)
		if got := crc32.Checksum(b[21:end], crc32c); got != uint32(rb.CRC) {
			t.Fatalf("fetched batch CRC %08x, want %08x", uint32(rb.CRC), got)
		}
		if rb.Magic != 2 || rb.Attributes&^7 != 0 {
			t.Fatalf("fetched batch magic %d attrs %d", rb.Magic, rb.Attributes)
		}
		codecs = append(codecs, int(rb.Attributes&7))
		raw, err := decompress(nil, int(rb.Attributes&7), rb.Records)
		if err != nil {
			t.Fatalf("fetched batch does not decompress: %v", err)
		}
		for i := int32(0); i < rb.NumRecords; i++ {
			var kr kmsg.Record
			l, n := binary.Varint(raw)
			if n <= 0 {
				t.Fatalf("record length")
			}
			if err := kr.ReadFrom(raw[:n+int(l)]); err != nil {
				t.Fatalf("record: %v", err)
			}
			raw = raw[n+int(l):]
			out = append(out, fetched{Offset: rb.FirstOffset + int64(kr.OffsetDelta), trec: trec{Key: kr.Key, Value: kr.Value, Headers: kr.Headers, TS: rb.FirstTimestamp + kr.TimestampDelta64}})
			if ts := rb.FirstTimestamp + kr.TimestampDelta64; ts > rb.MaxTimestamp {
				t.Fatalf("record ts %d above batch max %d", ts, rb.MaxTimestamp)
			}
		}
		if len(raw) != 0 {
			t.Fatalf("%d bytes after the records", len(raw))
		}
		b = b[end:]
	}
	return out, codecs
}

func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

func checkRecords(t testing.TB, got []fetched, want []trec, base int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Offset != base+int64(i) {
			t.Errorf("record %d offset %d, want %d", i, g.Offset, base+int64(i))
		}
		if !sameBytes(g.Key, w.Key) {
			t.Errorf("record %d key %q (nil %v), want %q (nil %v)", i, g.Key, g.Key == nil, w.Key, w.Key == nil)
		}
		if !sameBytes(g.Value, w.Value) {
			t.Errorf("record %d value of %d bytes (nil %v), want %d (nil %v)", i, len(g.Value), g.Value == nil, len(w.Value), w.Value == nil)
		}
		if g.TS != w.TS {
			t.Errorf("record %d timestamp %d, want %d", i, g.TS, w.TS)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Errorf("record %d has %d headers, want %d", i, len(g.Headers), len(w.Headers))
			continue
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !sameBytes(g.Headers[j].Value, w.Headers[j].Value) {
				t.Errorf("record %d header %d = %q:%q, want %q:%q", i, j, g.Headers[j].Key, g.Headers[j].Value, w.Headers[j].Key, w.Headers[j].Value)
			}
		}
	}
}
