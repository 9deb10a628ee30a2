package bridge

import (
	"encoding/binary"
	"strconv"
)

// Names of the Iggy user headers that carry what an Iggy message has no field
// for. They are part of the documented mapping (see doc.go); renaming one
// breaks every message already stored.
const (
	hdrKey     = "kafka.key"   // Raw, chunked: the record key
	hdrHeaders = "kafka.h"     // Raw, chunked: the Kafka header section, Kafka's own encoding
	hdrTS      = "kafka.ts"    // Int64: record timestamp in ms when the origin timestamp cannot hold it
	hdrFlags   = "kafka.flags" // Uint8: flagValueNull | flagValueEmpty | flagKeyEmpty
	hdrCodec   = "kafka.codec" // Uint8: compression codec the producer used (first message)
	hdrPID     = "kafka.pid"   // Int64: producer id (first message of an idempotent batch)
	hdrEpoch   = "kafka.epoch" // Int16: producer epoch
	hdrSeq     = "kafka.seq"   // Int32: base sequence of the Kafka batch
	hdrCount   = "kafka.n"     // Int32: records in the Kafka batch
	hdrTxn     = "kafka.txn"   // Uint8: txnData, txnCommit or txnAbort (first message)
)

// Values of kafka.txn: the first message of a transactional producer's batch, or a
// transaction marker (a message of its own: a Kafka control batch).
const (
	txnData   = 1
	txnCommit = 2
	txnAbort  = 3
)

const (
	flagValueNull  = 1 << 0
	flagValueEmpty = 1 << 1
	flagKeyEmpty   = 1 << 2
)

// TLV kinds of section 6.6 of the Iggy protocol.
const (
	kindRaw    = 1
	kindString = 2
	kindInt16  = 5
	kindInt32  = 6
	kindInt64  = 7
	kindUint8  = 9
)

// tlvMax is the longest key or value one TLV item may hold; longer values
// are split into items named name, name.1, name.2, ... in order.
const tlvMax = 255

// maxUserHeaders is the largest user-header block the official SDK accepts.
const maxUserHeaders = 100_000

// tlvItemLen is the encoded size of one item with a key of kl and a value of vl bytes.
func tlvItemLen(kl, vl int) int { return 1 + 4 + kl + 1 + 4 + vl }

func digits(i int) int {
	n := 1
	for i >= 10 {
		i /= 10
		n++
	}
	return n
}

// chunkedLen is the encoded size of value v stored under name, split in
// tlvMax pieces. An empty v takes no items: callers say "empty" with flags.
func chunkedLen(name string, v int) int {
	size := 0
	for i := 0; v > 0; i++ {
		n := min(v, tlvMax)
		kl := len(name)
		if i > 0 {
			kl += 1 + digits(i)
		}
		size += tlvItemLen(kl, n)
		v -= n
	}
	return size
}

func appendTLVHead(dst []byte, kind byte, n int) []byte {
	dst = append(dst, kind)
	return binary.LittleEndian.AppendUint32(dst, uint32(n))
}

func appendTLVKey(dst []byte, name string) []byte {
	dst = appendTLVHead(dst, kindString, len(name))
	return append(dst, name...)
}

func appendChunked(dst []byte, name string, v []byte) []byte {
	for i := 0; len(v) > 0; i++ {
		n := min(len(v), tlvMax)
		if i == 0 {
			dst = appendTLVKey(dst, name)
		} else {
			kl := len(name) + 1 + digits(i)
			dst = appendTLVHead(dst, kindString, kl)
			dst = append(dst, name...)
			dst = append(dst, '.')
			dst = strconv.AppendInt(dst, int64(i), 10)
		}
		dst = appendTLVHead(dst, kindRaw, n)
		dst = append(dst, v[:n]...)
		v = v[n:]
	}
	return dst
}

func appendInt(dst []byte, name string, kind byte, size int, v uint64) []byte {
	dst = appendTLVKey(dst, name)
	dst = appendTLVHead(dst, kind, size)
	switch size {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

// recMeta is what the kafka.* headers of one message say. The zero value
// (after reset) describes a message written by a native Iggy client: null
// key, no headers, timestamp from the origin timestamp.
type recMeta struct {
	key     []byte
	keyNull bool
	hdrs    []byte
	ts      int64
	hasTS   bool
	flags   uint8
	codec   uint8

	hasPID bool
	pid    int64
	epoch  int16
	seq    int32
	n      int32
	txn    uint8 // kafka.txn, 0 when absent

	keyBuf, hdrBuf []byte // hold values that arrived in several chunks
	keyParts       int
	hdrParts       int
}

func (m *recMeta) reset() {
	m.key, m.keyNull, m.hdrs = nil, true, nil
	m.ts, m.hasTS, m.flags, m.codec = 0, false, 0, 0
	m.hasPID, m.pid, m.epoch, m.seq, m.n, m.txn = false, 0, 0, 0, 0, 0
	m.keyBuf, m.hdrBuf = m.keyBuf[:0], m.hdrBuf[:0]
	m.keyParts, m.hdrParts = 0, 0
}

// continuation reports whether key is name.<want>.
func continuation(key []byte, name string, want int) bool {
	if len(key) <= len(name)+1 || string(key[:len(name)]) != name || key[len(name)] != '.' {
		return false
	}
	n := 0
	for _, c := range key[len(name)+1:] {
		if c < '0' || c > '9' || n > 1<<20 {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n == want
}

// addChunk records one piece of a chunked value. The first piece is aliased;
// later ones force a copy into buf so the whole value is contiguous.
func addChunk(out *[]byte, buf *[]byte, parts *int, val []byte) {
	switch *parts {
	case 0:
		*out = val
	case 1:
		*buf = append(append((*buf)[:0], *out...), val...)
		*out = *buf
	default:
		*buf = append(*buf, val...)
		*out = *buf
	}
	*parts++
}

// parse reads a user-header block. It never fails: a block that does not
// parse, or kafka.* items of the wrong kind, are ignored and the message reads
// as a native Iggy message, because a consumer must be able to read whatever
// other Iggy clients stored.
func (m *recMeta) parse(b []byte) {
	m.reset()
	eachTLV(b, func(key []byte, vk byte, val []byte) bool {
		if len(key) >= 6 && string(key[:6]) == "kafka." {
			m.item(key, vk, val)
		}
		return true
	})
}

// eachTLV is the one reader of an Iggy user-header block: each item is a key kind byte, the key's
// length (u32, little-endian) and bytes, a value kind byte, the value's length and bytes. It calls
// fn with each item in order and stops at fn's false, or at the first item that does not fit, so
// a cut or foreign block reads as far as it parses.
func eachTLV(b []byte, fn func(key []byte, kind byte, val []byte) bool) {
	le := binary.LittleEndian
	for len(b) >= 5 {
		kl := le.Uint32(b[1:])
		if uint64(kl) > uint64(len(b)-5) {
			return
		}
		key := b[5 : 5+kl]
		b = b[5+kl:]
		if len(b) < 5 {
			return
		}
		vk, vl := b[0], le.Uint32(b[1:])
		if uint64(vl) > uint64(len(b)-5) {
			return
		}
		val := b[5 : 5+vl]
		b = b[5+vl:]
		if !fn(key, vk, val) {
			return
		}
	}
}

func (m *recMeta) item(key []byte, vk byte, val []byte) {
	if vk == kindRaw {
		m.rawItem(key, val)
		return
	}
	m.typedItem(string(key), vk, val)
}

// rawItem reads a Raw item: the first piece of the key or of the header section, or the next
// piece of one of them.
func (m *recMeta) rawItem(key, val []byte) {
	switch {
	case string(key) == hdrKey:
		if m.keyParts == 0 {
			addChunk(&m.key, &m.keyBuf, &m.keyParts, val)
			m.keyNull = false
		}
	case string(key) == hdrHeaders:
		if m.hdrParts == 0 {
			addChunk(&m.hdrs, &m.hdrBuf, &m.hdrParts, val)
		}
	case m.keyParts > 0 && continuation(key, hdrKey, m.keyParts):
		addChunk(&m.key, &m.keyBuf, &m.keyParts, val)
	case m.hdrParts > 0 && continuation(key, hdrHeaders, m.hdrParts):
		addChunk(&m.hdrs, &m.hdrBuf, &m.hdrParts, val)
	}
}

// typedItem reads a fixed-size item of kind vk; one of another kind or size than its name says,
// or with a value out of its range, is ignored.
func (m *recMeta) typedItem(key string, vk byte, val []byte) {
	le := binary.LittleEndian
	switch key {
	case hdrTS:
		if fixedItem(vk, val, kindInt64, 8) {
			m.ts, m.hasTS = int64(le.Uint64(val)), true
		}
	case hdrFlags:
		if fixedItem(vk, val, kindUint8, 1) {
			m.flags = val[0]
		}
	case hdrCodec:
		if fixedItem(vk, val, kindUint8, 1) && val[0] <= codecZstd {
			m.codec = val[0]
		}
	case hdrTxn:
		if fixedItem(vk, val, kindUint8, 1) && val[0] >= txnData && val[0] <= txnAbort {
			m.txn = val[0]
		}
	default:
		m.producerItem(key, vk, val)
	}
}

// producerItem reads the items of an idempotent producer's batch: producer id and epoch, base
// sequence and record count.
func (m *recMeta) producerItem(key string, vk byte, val []byte) {
	le := binary.LittleEndian
	switch key {
	case hdrPID:
		if fixedItem(vk, val, kindInt64, 8) {
			m.pid, m.hasPID = int64(le.Uint64(val)), true
		}
	case hdrEpoch:
		if fixedItem(vk, val, kindInt16, 2) {
			m.epoch = int16(le.Uint16(val))
		}
	case hdrSeq:
		if fixedItem(vk, val, kindInt32, 4) {
			m.seq = int32(le.Uint32(val))
		}
	case hdrCount:
		if fixedItem(vk, val, kindInt32, 4) {
			m.n = int32(le.Uint32(val))
		}
	}
}

// fixedItem reports whether an item of kind vk holding val is of kind want and size bytes.
func fixedItem(vk byte, val []byte, want byte, size int) bool {
	return vk == want && len(val) == size
}

// validKafkaHeaders reports whether b is exactly one Kafka header section: a varint count, then
// per header a varint key length, the key, a varint value length (-1 for null) and the value.
// A Kafka client that meets anything else refuses or silently drops the whole record.
func validKafkaHeaders(b []byte) bool {
	r := reader{b: b}
	n := r.varint()
	if r.bad || n < 0 || int(n) > len(r.b)/2 {
		// Every header takes at least two bytes, so a larger count cannot be true.
		return false
	}
	for range n {
		kl := r.varint()
		if r.bad || kl < 0 {
			return false
		}
		r.span(int(kl))
		r.nullable()
		if r.bad {
			return false
		}
	}
	return len(r.b) == 0
}
