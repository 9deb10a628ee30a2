package wire

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// Reader decodes little-endian fields from a byte slice without ever
// reading out of bounds. The first failure sticks: later reads return zero
// values and Err reports the first problem, so a decoder can read a whole
// body and check once.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader returns a Reader over b.
func NewReader(b []byte) Reader { return Reader{b: b} }

// Err returns the first decoding failure, or nil.
func (r *Reader) Err() error { return r.err }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Len is the number of bytes left.
func (r *Reader) Len() int { return len(r.b) - r.off }

// Fail records a failure at the current offset unless one is already
// recorded, and returns the recorded one.
func (r *Reader) Fail(what, reason string) error {
	if r.err == nil {
		r.err = &DecodeError{What: what, Offset: r.off, Reason: reason}
	}
	return r.err
}

func (r *Reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.Fail(what, "truncated")
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

// U8 reads one byte.
func (r *Reader) U8(what string) uint8 {
	p := r.take(1, what)
	if p == nil {
		return 0
	}
	return p[0]
}

// Bool reads a one-byte boolean; any non-zero value is true.
func (r *Reader) Bool(what string) bool { return r.U8(what) != 0 }

// U16 reads a little-endian uint16.
func (r *Reader) U16(what string) uint16 {
	p := r.take(2, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(p)
}

// U32 reads a little-endian uint32.
func (r *Reader) U32(what string) uint32 {
	p := r.take(4, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// U64 reads a little-endian uint64.
func (r *Reader) U64(what string) uint64 {
	p := r.take(8, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

// F32 reads a little-endian IEEE 754 float32.
func (r *Reader) F32(what string) float32 { return math.Float32frombits(r.U32(what)) }

// Bytes reads n bytes; the result aliases the input.
func (r *Reader) Bytes(n int, what string) []byte { return r.take(n, what) }

// Rest returns every remaining byte (aliasing the input) and consumes them.
func (r *Reader) Rest() []byte {
	if r.err != nil {
		return nil
	}
	p := r.b[r.off:len(r.b):len(r.b)]
	r.off = len(r.b)
	return p
}

// String8 reads a u8 length prefix and that many bytes as a string,
// accepting an empty string (passwords, tokens).
func (r *Reader) String8(what string) string {
	n := int(r.U8(what))
	return string(r.take(n, what))
}

// String32 reads a u32 length prefix and that many bytes. Unlike names, these
// strings (host names, addresses, descriptions) are not checked for UTF-8,
// so an odd host name on a server never makes its whole reply unreadable.
func (r *Reader) String32(what string) string {
	n := r.U32(what)
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(r.Len()) {
		r.Fail(what, "truncated")
		return ""
	}
	return string(r.take(int(n), what))
}

// Name reads a Name: a u8 length of 1..255 and UTF-8 bytes.
func (r *Reader) Name(what string) string {
	n := int(r.U8(what))
	if r.err != nil {
		return ""
	}
	if n == 0 {
		r.Fail(what, "empty name")
		return ""
	}
	p := r.take(n, what)
	if r.err != nil {
		return ""
	}
	if !utf8.Valid(p) {
		r.Fail(what, "name is not valid UTF-8")
		return ""
	}
	return string(p)
}

// Count reads a u32 element count and rejects one that cannot fit in the
// remaining bytes at minSize bytes per element, so that a decoder never
// allocates for elements that are not there.
func (r *Reader) Count(minSize int, what string) int {
	n := r.U32(what)
	if r.err != nil {
		return 0
	}
	if minSize > 0 && uint64(n)*uint64(minSize) > uint64(r.Len()) {
		r.Fail(what, "count exceeds remaining bytes")
		return 0
	}
	return int(n)
}

func appendU16(dst []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// appendString8 writes a u8-length-prefixed string, cut at 255 bytes so the
// frame stays well formed; callers validate lengths before encoding.
func appendString8(dst []byte, s string) []byte {
	if len(s) > 255 {
		s = s[:255]
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

func appendString32(dst []byte, s string) []byte {
	dst = appendU32(dst, uint32(len(s)))
	return append(dst, s...)
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }
