package bridge

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// Layout of one magic 0 or 1 message of a message set (Produce v0-2, Fetch v0-3), all
// big-endian:
//
//	 0 offset int64    8 size int32 (the bytes after it)    12 crc uint32 (CRC-32 IEEE of 16..end)
//	16 magic int8     17 attributes int8 (codec in the low three bits, bit 3 log-append time)
//	18 timestamp int64, magic 1 only
//	   key bytes (int32 length, -1 null), value bytes (int32 length, -1 null)
//
// A compressed message (a codec in its attributes) is a wrapper: its value is a whole message
// set, compressed, and its offset is that of its last inner message.
const (
	legacyOverhead = 12 // offset and size
	legacyCRCStart = 16
	legacyMagicAt  = 16
	legacyAttrAt   = 17
	legacyV0Header = 18 // through the attributes
	legacyV1Header = 26 // through the timestamp
	legacyMinV0    = legacyV0Header - legacyOverhead + 8
	legacyMinV1    = legacyV1Header - legacyOverhead + 8
)

// legacyMessageSet reports whether records start with a magic 0 or 1 message rather than a
// magic-2 batch: the magic byte sits at the same place in both.
func legacyMessageSet(records []byte) bool {
	return len(records) > legacyMagicAt && records[legacyMagicAt] < 2
}

// legacyMsg is one decoded magic 0 or 1 message; key and value alias the message bytes.
type legacyMsg struct {
	magic     int8
	attrs     int8
	ts        int64 // -1 for magic 0, which has no timestamp
	key       []byte
	keyNull   bool
	value     []byte
	valueNull bool
}

func (m *legacyMsg) codec() int { return int(m.attrs & attrCodecMask) }

// nextLegacy splits the first message off a message set, checking its size and CRC, and
// returns the bytes after it.
func nextLegacy(in []byte) (legacyMsg, []byte, error) {
	var m legacyMsg
	if len(in) < legacyOverhead+legacyMinV0 {
		return m, nil, errCorrupt("message of %d bytes is shorter than its header", len(in))
	}
	be := binary.BigEndian
	size := int64(int32(be.Uint32(in[8:])))
	if size < legacyMinV0 || size > int64(len(in)-legacyOverhead) {
		return m, nil, errCorrupt("message size %d does not fit %d bytes", size, len(in))
	}
	end := legacyOverhead + int(size)
	msg := in[:end]
	m.magic, m.attrs, m.ts = int8(msg[legacyMagicAt]), int8(msg[legacyAttrAt]), -1
	if m.magic != 0 && m.magic != 1 {
		return m, nil, fmt.Errorf("%w: magic %d among magic 0/1 messages", kerr.InvalidRecord, m.magic)
	}
	if got, want := crc32.ChecksumIEEE(msg[legacyCRCStart:]), be.Uint32(msg[12:]); got != want {
		return m, nil, errCorrupt("message CRC %08x, computed %08x", want, got)
	}
	pos := legacyV0Header
	if m.magic == 1 {
		if size < legacyMinV1 {
			return m, nil, errCorrupt("magic 1 message of %d bytes is shorter than its header", size)
		}
		m.ts = int64(be.Uint64(msg[legacyV0Header:]))
		pos = legacyV1Header
	}
	var ok bool
	if m.key, m.keyNull, pos, ok = bytes32(msg, pos); !ok {
		return m, nil, errCorrupt("message key overruns the message")
	}
	if m.value, m.valueNull, pos, ok = bytes32(msg, pos); !ok {
		return m, nil, errCorrupt("message value overruns the message")
	}
	if pos != end {
		return m, nil, errCorrupt("message has %d trailing bytes", end-pos)
	}
	return m, in[end:], nil
}

// bytes32 reads an int32-length byte string at pos (-1: null) and returns the position after.
func bytes32(b []byte, pos int) ([]byte, bool, int, bool) {
	if pos+4 > len(b) {
		return nil, false, pos, false
	}
	n := int32(binary.BigEndian.Uint32(b[pos:]))
	pos += 4
	if n == -1 {
		return nil, true, pos, true
	}
	if n < 0 || int64(n) > int64(len(b)-pos) {
		return nil, false, pos, false
	}
	return b[pos : pos+int(n) : pos+int(n)], false, pos + int(n), true
}

// upconvert turns a magic 0/1 message set, as Produce v0-2 carry it, into one uncompressed
// magic-2 batch appended to dst, the way Kafka converts such a set for a magic-2 log: every
// message (every inner message of a compressed wrapper) becomes a record in order, with its
// key and value, no headers, and its timestamp (-1 for magic 0, which has none). The offsets
// the client wrote are ignored, as Kafka assigns its own. Refused: a bad CRC or size anywhere
// (CORRUPT_MESSAGE), a wrapper inside a wrapper or an inner message of another magic than its
// wrapper (INVALID_RECORD), zstd, which magic 0/1 cannot carry (UNSUPPORTED_COMPRESSION_TYPE),
// and a log-append-time timestamp set by the producer (INVALID_TIMESTAMP). Decompression is
// bounded as for magic-2 batches, in c.dec.
func (c *converter) upconvert(dst, in []byte) ([]byte, error) {
	var (
		w      kbatchWriter
		h      = kbatch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, LeaderEpoch: -1}
		n      int32
		start  = len(dst)
		record = func(m *legacyMsg) error {
			if n == math.MaxInt32 {
				return errCorrupt("message set of more than %d messages", n)
			}
			if n == 0 {
				h.FirstTimestamp, h.MaxTimestamp = m.ts, m.ts
			}
			h.MaxTimestamp = max(h.MaxTimestamp, m.ts)
			dst = appendKafkaRecord(dst, m.ts-h.FirstTimestamp, n, m.key, m.keyNull, m.value, m.valueNull, nil)
			n++
			return nil
		}
	)
	dst = w.begin(dst)
	for len(in) > 0 {
		m, rest, err := nextLegacy(in)
		if err != nil {
			return dst[:start], err
		}
		in = rest
		if m.magic == 1 && m.attrs&attrLogAppendTime != 0 {
			return dst[:start], fmt.Errorf("%w: a producer may not set log-append time", kerr.InvalidTimestamp)
		}
		switch codec := m.codec(); codec {
		case codecNone:
			if err := record(&m); err != nil {
				return dst[:start], err
			}
			continue
		case codecZstd:
			return dst[:start], fmt.Errorf("%w: zstd in a magic %d message", kerr.UnsupportedCompressionType, m.magic)
		default:
			if m.valueNull {
				return dst[:start], errCorrupt("compressed message without a value")
			}
			if c.dec, err = decompress(c.dec[:0], codec, m.value); err != nil {
				return dst[:start], err
			}
		}
		for inner := c.dec; len(inner) > 0; {
			im, rest, err := nextLegacy(inner)
			if err != nil {
				return dst[:start], err
			}
			inner = rest
			if im.codec() != codecNone || im.magic != m.magic {
				return dst[:start], fmt.Errorf("%w: inner message of magic %d, codec %d in a magic %d wrapper", kerr.InvalidRecord, im.magic, im.codec(), m.magic)
			}
			if err := record(&im); err != nil {
				return dst[:start], err
			}
		}
	}
	if n == 0 {
		return dst[:start], errCorrupt("message set without messages")
	}
	h.NumRecords, h.LastOffsetDelta = n, n-1
	return w.finish(dst, &h), nil
}

// appendLegacy appends one Iggy batch record as a magic 0 or 1 message set
// (Fetch v0-v3). Kafka headers have no place there and are dropped.
func (c *converter) appendLegacy(dst, rec []byte, from int64, magic int8) ([]byte, int, int64, error) {
	h, err := message.ParseBatchHeader(rec)
	if err != nil {
		return dst, 0, 0, err
	}
	it := message.Frames(rec)
	var (
		out   fetchOut
		n     int
		next  int64
		start = len(dst)
		be    = binary.BigEndian
	)
	for {
		f, ok := it.Next()
		if !ok {
			break
		}
		c.decodeFrame(h.BaseOffset, h.OriginTimestamp, &f, &out)
		if c.meta.txn == txnCommit || c.meta.txn == txnAbort {
			// Message sets have no control records: a marker is left out, as Kafka's
			// down-conversion leaves control batches out.
			next = out.offset + 1
			continue
		}
		if out.offset < from {
			continue
		}
		msgStart := len(dst)
		dst = be.AppendUint64(dst, uint64(out.offset))
		dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size and CRC, filled below
		if magic == 1 && c.out.logAppendTime {
			dst = append(dst, byte(magic), attrLogAppendTime)
			dst = be.AppendUint64(dst, h.BaseTimestamp/1000)
		} else {
			dst = append(dst, byte(magic), 0)
			if magic == 1 {
				dst = be.AppendUint64(dst, uint64(out.ts))
			}
		}
		dst = appendBytes32(dst, out.key, out.keyNull)
		dst = appendBytes32(dst, out.value, out.valueNull)
		be.PutUint32(dst[msgStart+8:], uint32(len(dst)-msgStart-legacyOverhead))
		be.PutUint32(dst[msgStart+12:], crc32.ChecksumIEEE(dst[msgStart+legacyCRCStart:]))
		n++
		next = out.offset + 1
	}
	if err := it.Err(); err != nil {
		return dst[:start], 0, 0, err
	}
	return dst, n, next, nil
}

func appendBytes32(dst, b []byte, null bool) []byte {
	if null {
		return binary.BigEndian.AppendUint32(dst, math.MaxUint32)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}
