package bridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

func TestRefusedPartitionStoresNothing(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "atomic", true)
	good := kafkaBatch(t, codecNone, valueRecs("good", 3), -1, -1, -1)
	bad := kafkaBatch(t, codecNone, valueRecs("bad", 2), -1, -1, -1)
	bad[len(bad)-1] ^= 0xff // breaks the CRC
	tooMany := kafkaBatch(t, codecNone, valueRecs("many", 2), -1, -1, -1)
	binary.BigEndian.PutUint32(tooMany[57:], 9) // more records claimed than held, CRC kept valid
	fixCRC(tooMany)
	for name, in := range map[string][]byte{
		"bad CRC after a valid batch":         append(append([]byte(nil), good...), bad...),
		"truncated batch after a valid batch": append(append([]byte(nil), good...), good[:40]...),
		"bad records after a valid batch":     append(append([]byte(nil), good...), tooMany...),
	} {
		if _, err := b.produce(ctx, m, "atomic", 0, in); !errors.Is(err, kerr.CorruptMessage) {
			t.Errorf("%s: %v, want CORRUPT_MESSAGE", name, err)
		}
	}
	if got, _ := fetchAll(t, b, m, "atomic", 0, 0); len(got) != 0 {
		t.Fatalf("refused produces stored %d records", len(got))
	}
	// Two valid batches are both stored, in order.
	two := append(append([]byte(nil), good...), kafkaBatch(t, codecZstd, valueRecs("next", 2), -1, -1, -1)...)
	res, err := b.produce(ctx, m, "atomic", 0, two)
	if err != nil || res.BaseOffset != 0 {
		t.Fatalf("two batches: base %d err %v", res.BaseOffset, err)
	}
	if got, _ := fetchAll(t, b, m, "atomic", 0, 0); len(got) != 5 {
		t.Fatalf("%d records stored, want 5", len(got))
	}
}

func TestIdempotentBatchesOfOneRequestMustFollow(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b := newMemBridge(t, m)
	b.topicInfo(ctx, m, "idem", true)
	pid, epoch, err := b.initProducerID(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	gap := append(kafkaBatch(t, codecNone, valueRecs("a", 2), pid, epoch, 0), kafkaBatch(t, codecNone, valueRecs("b", 2), pid, epoch, 5)...)
	if _, err := b.produce(ctx, m, "idem", 0, gap); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap within a request: %v", err)
	}
	if got, _ := fetchAll(t, b, m, "idem", 0, 0); len(got) != 0 {
		t.Fatalf("refused request stored %d records", len(got))
	}
	next := append(kafkaBatch(t, codecNone, valueRecs("a", 2), pid, epoch, 0), kafkaBatch(t, codecNone, valueRecs("b", 2), pid, epoch, 2)...)
	if _, err := b.produce(ctx, m, "idem", 0, next); err != nil {
		t.Fatalf("consecutive batches: %v", err)
	}
}

// fixCRC recomputes a batch's CRC after a test edited it.
func fixCRC(b []byte) {
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[kbCRCStart:], crc32c))
}

// allocatedBy reports the bytes f allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestMultiFrameZstdStopsAtTheCap(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	frame := enc.EncodeAll(make([]byte, maxDecompressed/10), nil)
	var src []byte
	for range 20 {
		src = append(src, frame...)
	}
	// With room for the cap given, decoding allocates next to nothing more: the output stops
	// at the cap instead of growing through all twenty frames.
	dst := make([]byte, 0, maxDecompressed+128<<10)
	var out []byte
	var derr error
	n := allocatedBy(func() { out, derr = decompress(dst, codecZstd, src) })
	if !errors.Is(derr, kerr.MessageTooLarge) {
		t.Fatalf("err %v, want MESSAGE_TOO_LARGE", derr)
	}
	if n > 16<<20 || len(out) > maxDecompressed+1 {
		t.Fatalf("decoding a %d-byte bomb allocated %d MiB and produced %d bytes", len(src), n>>20, len(out))
	}
	// Within the cap, several frames decode to their concatenation.
	out, err = decompress(nil, codecZstd, append(enc.EncodeAll([]byte("one "), nil), enc.EncodeAll([]byte("two"), nil)...))
	if err != nil || string(out) != "one two" {
		t.Fatalf("two frames: %q %v", out, err)
	}
}

func TestLyingSnappyAllocatesNothing(t *testing.T) {
	// A snappy block whose preamble claims 64 MiB, followed by a few bytes.
	src := binary.AppendUvarint(nil, maxDecompressed)
	src = append(src, make([]byte, 126)...)
	var derr error
	n := allocatedBy(func() { _, derr = decompress(nil, codecSnappy, src) })
	if !errors.Is(derr, kerr.CorruptMessage) {
		t.Fatalf("err %v, want CORRUPT_MESSAGE", derr)
	}
	if n > 1<<20 {
		t.Fatalf("a %d-byte payload allocated %d bytes", len(src), n)
	}
	// Xerial chunks that together exceed the cap are refused before the chunk that would.
	chunk := snappy.Encode(nil, make([]byte, 8<<20))
	x := append([]byte(nil), xerialMagic...)
	x = append(x, 0, 0, 0, 1, 0, 0, 0, 1)
	for range 9 {
		x = binary.BigEndian.AppendUint32(x, uint32(len(chunk)))
		x = append(x, chunk...)
	}
	out, err := decompress(nil, codecSnappy, x)
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("xerial over the cap: %v", err)
	}
	if len(out) > maxDecompressed {
		t.Fatalf("decoded %d bytes, past the cap", len(out))
	}
	// A genuine highly compressible block still decodes.
	zeros := make([]byte, 1<<20)
	if got, err := decompress(nil, codecSnappy, snappy.Encode(nil, zeros)); err != nil || !bytes.Equal(got, zeros) {
		t.Fatalf("genuine block: %d bytes, %v", len(got), err)
	}
}

func TestPoisonedNativeHeadersAreDropped(t *testing.T) {
	poisons := map[string][]byte{
		"huge count":           binary.AppendVarint(nil, 1<<30),
		"key past the end":     append(binary.AppendVarint(binary.AppendVarint(nil, 1), 50), 'k'),
		"trailing bytes":       append(binary.AppendVarint(nil, 0), 1, 2, 3),
		"negative value len":   append(append(binary.AppendVarint(binary.AppendVarint(nil, 1), 1), 'k'), binary.AppendVarint(nil, -5)...),
		"bad varint":           {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"value past the end":   append(append(binary.AppendVarint(binary.AppendVarint(nil, 1), 1), 'k'), binary.AppendVarint(nil, 9)...),
		"second header absent": append(append(binary.AppendVarint(binary.AppendVarint(nil, 2), 1), 'k'), binary.AppendVarint(nil, -1)...),
	}
	for name, poison := range poisons {
		t.Run(name, func(t *testing.T) {
			var h []byte
			h = appendChunked(h, hdrHeaders, poison)
			var mb message.Builder
			mb.Reset()
			mb.Add(message.MakeID(1, 0), 1_700_000_000_000_000, []byte("served anyway"), h)
			batch, err := mb.Finish()
			if err != nil {
				t.Fatal(err)
			}
			var counts Metrics
			c := getConverter(&counts)
			defer putConverter(c)
			out, n, _, err := c.appendKafka(nil, storeLike(t, batch, 0), 0)
			if err != nil || n != 1 {
				t.Fatalf("appendKafka n %d err %v", n, err)
			}
			checkRecords(t, readBatches(t, out), []trec{{Value: []byte("served anyway"), TS: 1_700_000_000_000}}, 0)
			if n := counts.DroppedHeaders(); n != 1 {
				t.Fatalf("%d dropped headers counted, want 1", n)
			}
		})
	}
	// A valid section is kept.
	good := binary.AppendVarint(nil, 1)
	good = append(binary.AppendVarint(good, 1), 'k')
	good = append(binary.AppendVarint(good, 2), 'v', 'w')
	if !validKafkaHeaders(good) || !validKafkaHeaders([]byte{0}) {
		t.Fatal("a valid header section was refused")
	}
}
