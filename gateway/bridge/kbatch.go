package bridge

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Layout of a magic-2 Kafka RecordBatch header, all big-endian:
//
//	 0 baseOffset int64       8 batchLength int32     12 partitionLeaderEpoch int32
//	16 magic int8            17 crc uint32 (CRC-32C of bytes 21..end)
//	21 attributes int16      23 lastOffsetDelta int32  27 firstTimestamp int64
//	35 maxTimestamp int64    43 producerId int64       51 producerEpoch int16
//	53 baseSequence int32    57 recordCount int32      61 records
const (
	kbHeaderLen   = 61
	kbLengthStart = 12 // batchLength counts the bytes after this point
	kbCRCStart    = 21 // the CRC covers attributes through the last record

	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// kbatch is the decoded header of one magic-2 batch plus its record bytes,
// still compressed when the codec says so.
type kbatch struct {
	BaseOffset      int64
	LeaderEpoch     int32
	Attributes      int16
	LastOffsetDelta int32
	FirstTimestamp  int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	NumRecords      int32
	Records         []byte
}

func (b *kbatch) codec() int { return int(b.Attributes & attrCodecMask) }

// errCorrupt wraps kerr.CorruptMessage so the handler sees the Kafka code
// while logs still say what was wrong.
func errCorrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", kerr.CorruptMessage, fmt.Sprintf(format, args...))
}

// nextBatch splits the first batch off a produce request's Records bytes,
// checking magic and CRC. It returns the rest of the bytes after the batch.
func nextBatch(in []byte) (kbatch, []byte, error) {
	b, rest, err := splitBatch(in)
	if err != nil {
		return b, nil, err
	}
	end := len(in) - len(rest)
	if got, want := crc32.Checksum(in[kbCRCStart:end], crc32c), binary.BigEndian.Uint32(in[17:]); got != want {
		return kbatch{}, nil, errCorrupt("record batch CRC %08x, computed %08x", want, got)
	}
	return b, rest, nil
}

// splitBatch is nextBatch without the CRC check: the header read and the batch cut off, for
// bytes the gateway itself checked before (kept batches read back, keptdisk.go).
func splitBatch(in []byte) (kbatch, []byte, error) {
	var b kbatch
	if len(in) < kbHeaderLen {
		return b, nil, errCorrupt("record batch of %d bytes is shorter than its header", len(in))
	}
	be := binary.BigEndian
	length := int32(be.Uint32(in[8:]))
	if length < kbHeaderLen-kbLengthStart || int64(length) > int64(len(in)-kbLengthStart) {
		return b, nil, errCorrupt("record batch length %d does not fit %d bytes", length, len(in))
	}
	end := kbLengthStart + int(length)
	if magic := int8(in[16]); magic != 2 {
		return b, nil, fmt.Errorf("%w: record batch magic %d, only 2 is accepted", kerr.UnsupportedForMessageFormat, magic)
	}
	b.BaseOffset = int64(be.Uint64(in[0:]))
	b.LeaderEpoch = int32(be.Uint32(in[12:]))
	b.Attributes = int16(be.Uint16(in[21:]))
	b.LastOffsetDelta = int32(be.Uint32(in[23:]))
	b.FirstTimestamp = int64(be.Uint64(in[27:]))
	b.MaxTimestamp = int64(be.Uint64(in[35:]))
	b.ProducerID = int64(be.Uint64(in[43:]))
	b.ProducerEpoch = int16(be.Uint16(in[51:]))
	b.BaseSequence = int32(be.Uint32(in[53:]))
	b.NumRecords = int32(be.Uint32(in[57:]))
	b.Records = in[kbHeaderLen:end]
	return b, in[end:], nil
}

// krecord is one decoded record. Key and Value alias the record bytes; a nil
// slice with the Null flag set is a Kafka null. Headers holds the encoded
// header section exactly as Kafka writes it (count varint, then entries), so
// it can be stored and given back without re-encoding.
type krecord struct {
	TimestampDelta int64
	OffsetDelta    int32
	Key            []byte
	KeyNull        bool
	Value          []byte
	ValueNull      bool
	Headers        []byte
	NumHeaders     int
}

// reader is a bounds-checked cursor over Kafka's varint encodings. Every
// method reports failure through ok so a hot loop can check once per record.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) varlong() int64 {
	// Most varints in a record (attributes, deltas, short lengths) are one
	// byte; decoding those inline keeps the per-record cost down.
	b := r.b
	if len(b) > 0 && b[0] < 0x80 {
		u := uint64(b[0])
		r.b = b[1:]
		return int64(u>>1) ^ -int64(u&1)
	}
	// Two bytes cover record lengths and timestamp deltas below 8192, the common rest.
	if len(b) > 1 && b[1] < 0x80 {
		u := uint64(b[0]&0x7f) | uint64(b[1])<<7
		r.b = b[2:]
		return int64(u>>1) ^ -int64(u&1)
	}
	v, n := binary.Varint(b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int32 {
	v := r.varlong()
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.bad = true
		return 0
	}
	return int32(v)
}

func (r *reader) span(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// nullable reads a varint length and that many bytes; -1 is null.
func (r *reader) nullable() ([]byte, bool) {
	n := r.varint()
	if n == -1 {
		return nil, true
	}
	if n < 0 {
		r.bad = true
		return nil, false
	}
	s := r.span(int(n))
	if s == nil && !r.bad {
		s = r.b[:0:0]
	}
	return s, false
}

// nextRecord decodes the first record of in and returns the bytes after it.
func nextRecord(in []byte, rec *krecord) ([]byte, error) {
	r := reader{b: in}
	length := r.varint()
	if r.bad || length < 0 || int(length) > len(r.b) {
		return nil, errCorrupt("record length %d invalid with %d bytes left", length, len(r.b))
	}
	rest := r.b[length:]
	r.b = r.b[:length]
	if len(r.b) < 1 {
		return nil, errCorrupt("record without attributes")
	}
	r.b = r.b[1:] // record attributes are unused in magic 2
	rec.TimestampDelta = r.varlong()
	rec.OffsetDelta = r.varint()
	rec.Key, rec.KeyNull = r.nullable()
	rec.Value, rec.ValueNull = r.nullable()
	hstart := r.b
	nh := r.varint()
	if r.bad || nh < 0 {
		return nil, errCorrupt("record header count invalid")
	}
	for i := int32(0); i < nh && !r.bad; i++ {
		kl := r.varint()
		if kl < 0 {
			r.bad = true
			break
		}
		r.span(int(kl))
		r.nullable()
	}
	if r.bad {
		return nil, errCorrupt("record fields overrun the record")
	}
	if len(r.b) != 0 {
		return nil, errCorrupt("record has %d trailing bytes", len(r.b))
	}
	rec.NumHeaders = int(nh)
	rec.Headers = hstart[:len(hstart)-len(r.b)]
	return rest, nil
}

// varintLen is the zig-zag varint size of v.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// appendKafkaRecord appends one record in Kafka's magic-2 record encoding.
// headers is the already encoded header section (nil means zero headers).
func appendKafkaRecord(dst []byte, tsDelta int64, offDelta int32, key []byte, keyNull bool, val []byte, valNull bool, headers []byte) []byte {
	size := 1 + varintLen(tsDelta) + varintLen(int64(offDelta))
	if keyNull {
		size += 1
	} else {
		size += varintLen(int64(len(key))) + len(key)
	}
	if valNull {
		size += 1
	} else {
		size += varintLen(int64(len(val))) + len(val)
	}
	if len(headers) == 0 {
		size++
	} else {
		size += len(headers)
	}
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, 0)
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(offDelta))
	if keyNull {
		dst = binary.AppendVarint(dst, -1)
	} else {
		dst = binary.AppendVarint(dst, int64(len(key)))
		dst = append(dst, key...)
	}
	if valNull {
		dst = binary.AppendVarint(dst, -1)
	} else {
		dst = binary.AppendVarint(dst, int64(len(val)))
		dst = append(dst, val...)
	}
	if len(headers) == 0 {
		dst = append(dst, 0)
	} else {
		dst = append(dst, headers...)
	}
	return dst
}

// kbatchWriter writes one magic-2 batch in place: begin reserves the header,
// the caller appends records, finish fills the header and the CRC.
type kbatchWriter struct {
	start int
}

func (w *kbatchWriter) begin(dst []byte) []byte {
	w.start = len(dst)
	return append(dst, make([]byte, kbHeaderLen)...)
}

func (w *kbatchWriter) finish(dst []byte, h *kbatch) []byte {
	b := dst[w.start:]
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(h.BaseOffset))
	be.PutUint32(b[8:], uint32(len(b)-kbLengthStart))
	be.PutUint32(b[12:], uint32(h.LeaderEpoch))
	b[16] = 2
	be.PutUint16(b[21:], uint16(h.Attributes))
	be.PutUint32(b[23:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[27:], uint64(h.FirstTimestamp))
	be.PutUint64(b[35:], uint64(h.MaxTimestamp))
	be.PutUint64(b[43:], uint64(h.ProducerID))
	be.PutUint16(b[51:], uint16(h.ProducerEpoch))
	be.PutUint32(b[53:], uint32(h.BaseSequence))
	be.PutUint32(b[57:], uint32(h.NumRecords))
	be.PutUint32(b[17:], crc32.Checksum(b[kbCRCStart:], crc32c))
	return dst
}
