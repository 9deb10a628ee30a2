package wire

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Kind is the type tag of a TLV key or value, used by message user headers
// and by resource options.
type Kind uint8

// TLV kinds. Kind 0 is invalid; kinds above KindFloat64 are passed through
// unchanged because a newer peer may define them.
const (
	KindRaw     Kind = 1
	KindString  Kind = 2
	KindBool    Kind = 3
	KindInt8    Kind = 4
	KindInt16   Kind = 5
	KindInt32   Kind = 6
	KindInt64   Kind = 7
	KindInt128  Kind = 8
	KindUint8   Kind = 9
	KindUint16  Kind = 10
	KindUint32  Kind = 11
	KindUint64  Kind = 12
	KindUint128 Kind = 13
	KindFloat32 Kind = 14
	KindFloat64 Kind = 15
)

var kindNames = [...]string{"", "raw", "string", "bool", "int8", "int16", "int32", "int64",
	"int128", "uint8", "uint16", "uint32", "uint64", "uint128", "float32", "float64"}

func (k Kind) String() string {
	if k >= 1 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// FixedSize returns the length a value of kind k must have, or 0 for the
// variable-length kinds (raw, string) and unknown kinds.
func (k Kind) FixedSize() int {
	switch k {
	case KindBool, KindInt8, KindUint8:
		return 1
	case KindInt16, KindUint16:
		return 2
	case KindInt32, KindUint32, KindFloat32:
		return 4
	case KindInt64, KindUint64, KindFloat64:
		return 8
	case KindInt128, KindUint128:
		return 16
	}
	return 0
}

// TLV limits.
const (
	MaxTLVFieldLength = 255
	// MaxUserHeadersSize caps a message's user-header block.
	MaxUserHeadersSize = 100_000
	// MaxOptions and MaxOptionsSize cap an options block.
	MaxOptions     = 1024
	MaxOptionsSize = 100_000
)

// TLVEntry is one key/value pair of a TLV block. Decoded slices alias the
// block.
type TLVEntry struct {
	KeyKind   Kind
	Key       []byte
	ValueKind Kind
	Value     []byte
}

// EncodedLen is the number of bytes AppendTLV writes for e.
func (e TLVEntry) EncodedLen() int { return 10 + len(e.Key) + len(e.Value) }

// AppendTLV appends entries as a TLV block. Each entry is written as
// [key kind u8][key len u32][key][value kind u8][value len u32][value].
func AppendTLV(dst []byte, entries ...TLVEntry) []byte {
	for _, e := range entries {
		dst = append(dst, byte(e.KeyKind))
		dst = appendU32(dst, uint32(len(e.Key)))
		dst = append(dst, e.Key...)
		dst = append(dst, byte(e.ValueKind))
		dst = appendU32(dst, uint32(len(e.Value)))
		dst = append(dst, e.Value...)
	}
	return dst
}

// ValidateTLV checks the structure of a TLV block, as the official server
// does, and returns its number of pairs: every field has a non-zero kind and
// a length of 1..255, fields come in key/value pairs, and the block ends
// exactly at its last field. An empty block is valid. Sizes of fixed-size
// kinds are left to the meaning of each value (an options value of the wrong
// size is an invalid option value, not a malformed request).
func ValidateTLV(b []byte) (int, error) { return validateTLV(b, false) }

// ValidateTLVStrict is ValidateTLV plus the official Go SDK decoder's rule
// that a value of a fixed-size kind has exactly that size. A client uses it
// on blocks it is about to hand to callers.
func ValidateTLVStrict(b []byte) (int, error) { return validateTLV(b, true) }

func validateTLV(b []byte, strict bool) (int, error) {
	off, fields := 0, 0
	for off < len(b) {
		if b[off] == 0 {
			return 0, &DecodeError{What: "tlv", Offset: off, Reason: "kind 0"}
		}
		kind := Kind(b[off])
		if len(b)-off < 5 {
			return 0, &DecodeError{What: "tlv", Offset: off, Reason: "truncated length"}
		}
		n := binary.LittleEndian.Uint32(b[off+1:])
		if n == 0 || n > MaxTLVFieldLength {
			return 0, &DecodeError{What: "tlv", Offset: off + 1, Reason: "field length " + strconv.FormatUint(uint64(n), 10) + " outside 1..255"}
		}
		if fs := kind.FixedSize(); strict && fs != 0 && int(n) != fs {
			return 0, &DecodeError{What: "tlv", Offset: off + 1, Reason: kind.String() + " field of " + strconv.FormatUint(uint64(n), 10) + " bytes"}
		}
		off += 5
		if int(n) > len(b)-off {
			return 0, &DecodeError{What: "tlv", Offset: off, Reason: "truncated field"}
		}
		off += int(n)
		fields++
	}
	if fields%2 != 0 {
		return 0, &DecodeError{What: "tlv", Offset: off, Reason: "odd number of fields"}
	}
	return fields / 2, nil
}

// ValidateUserHeaders checks a message user-header block: ValidateTLV plus
// the size cap.
func ValidateUserHeaders(b []byte) (int, error) {
	if len(b) > MaxUserHeadersSize {
		return 0, &DecodeError{What: "user headers", Reason: "block larger than 100000 bytes"}
	}
	return ValidateTLV(b)
}

// ValidateOptions checks an options block: ValidateTLV plus the size and
// count caps, string keys of valid UTF-8 and no duplicate key.
func ValidateOptions(b []byte) (int, error) {
	if len(b) > MaxOptionsSize {
		return 0, &DecodeError{What: "options", Reason: "block larger than 100000 bytes"}
	}
	pairs, err := ValidateTLV(b)
	if err != nil || pairs == 0 {
		return pairs, err
	}
	if pairs > MaxOptions {
		return 0, &DecodeError{What: "options", Reason: "more than 1024 entries"}
	}
	keys := make([]string, 0, pairs)
	it := TLVIter{b: b}
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		if e.KeyKind != KindString {
			return 0, &DecodeError{What: "options", Offset: it.off, Reason: "key kind " + e.KeyKind.String() + ", want string"}
		}
		if !utf8.Valid(e.Key) {
			return 0, &DecodeError{What: "options", Offset: it.off, Reason: "key is not valid UTF-8"}
		}
		keys = append(keys, string(e.Key))
	}
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return 0, &DecodeError{What: "options", Reason: "duplicate key " + strconv.Quote(keys[i])}
		}
	}
	return pairs, nil
}

// TLVIter walks a block that ValidateTLV accepted. On a block it did not
// accept, Next stops at the first malformed field instead of panicking.
type TLVIter struct {
	b   []byte
	off int
}

// NewTLVIter returns an iterator over block b.
func NewTLVIter(b []byte) TLVIter { return TLVIter{b: b} }

// Next returns the next pair, or false at the end of the block.
func (it *TLVIter) Next() (TLVEntry, bool) {
	var e TLVEntry
	var ok bool
	if e.KeyKind, e.Key, ok = it.field(); !ok {
		return TLVEntry{}, false
	}
	if e.ValueKind, e.Value, ok = it.field(); !ok {
		return TLVEntry{}, false
	}
	return e, true
}

func (it *TLVIter) field() (Kind, []byte, bool) {
	b := it.b
	if len(b)-it.off < 5 {
		it.off = len(b)
		return 0, nil, false
	}
	k := Kind(b[it.off])
	n := binary.LittleEndian.Uint32(b[it.off+1:])
	start := it.off + 5
	if uint64(n) > uint64(len(b)-start) {
		it.off = len(b)
		return 0, nil, false
	}
	it.off = start + int(n)
	return k, b[start:it.off:it.off], true
}

// DecodeTLV validates a block and returns its pairs.
func DecodeTLV(b []byte) ([]TLVEntry, error) {
	pairs, err := ValidateTLV(b)
	if err != nil {
		return nil, err
	}
	out := make([]TLVEntry, 0, pairs)
	it := TLVIter{b: b}
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		out = append(out, e)
	}
	return out, nil
}

// LookupTLV returns the value of the first pair whose key is a string equal
// to key.
func LookupTLV(block []byte, key string) (TLVEntry, bool) {
	it := TLVIter{b: block}
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		if e.KeyKind == KindString && string(e.Key) == key {
			return e, true
		}
	}
	return TLVEntry{}, false
}

// Typed entry constructors with string keys, the shape options use.

// StringEntry returns key = string value.
func StringEntry(key, value string) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindString, Value: []byte(value)}
}

// BoolEntry returns key = bool value.
func BoolEntry(key string, v bool) TLVEntry {
	b := []byte{0}
	if v {
		b[0] = 1
	}
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindBool, Value: b}
}

// Uint8Entry returns key = uint8 value.
func Uint8Entry(key string, v uint8) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindUint8, Value: []byte{v}}
}

// Uint32Entry returns key = uint32 value.
func Uint32Entry(key string, v uint32) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindUint32, Value: appendU32(nil, v)}
}

// Uint64Entry returns key = uint64 value.
func Uint64Entry(key string, v uint64) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindUint64, Value: appendU64(nil, v)}
}

// Int64Entry returns key = int64 value.
func Int64Entry(key string, v int64) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindInt64, Value: appendU64(nil, uint64(v))}
}

// Float64Entry returns key = float64 value.
func Float64Entry(key string, v float64) TLVEntry {
	return TLVEntry{KeyKind: KindString, Key: []byte(key), ValueKind: KindFloat64, Value: appendU64(nil, math.Float64bits(v))}
}

// Typed value accessors; each reports false when the value has another kind
// or size.

// AsString returns a string value.
func (e TLVEntry) AsString() (string, bool) {
	if e.ValueKind != KindString {
		return "", false
	}
	return string(e.Value), true
}

// AsBool returns a bool value; only 0 and 1 are booleans.
func (e TLVEntry) AsBool() (bool, bool) {
	if e.ValueKind != KindBool || len(e.Value) != 1 || e.Value[0] > 1 {
		return false, false
	}
	return e.Value[0] == 1, true
}

// AsUint returns an unsigned integer value of 8 to 64 bits, widened.
func (e TLVEntry) AsUint() (uint64, bool) {
	switch {
	case e.ValueKind == KindUint8 && len(e.Value) == 1:
		return uint64(e.Value[0]), true
	case e.ValueKind == KindUint16 && len(e.Value) == 2:
		return uint64(binary.LittleEndian.Uint16(e.Value)), true
	case e.ValueKind == KindUint32 && len(e.Value) == 4:
		return uint64(binary.LittleEndian.Uint32(e.Value)), true
	case e.ValueKind == KindUint64 && len(e.Value) == 8:
		return binary.LittleEndian.Uint64(e.Value), true
	}
	return 0, false
}

// AsInt returns a signed integer value of 8 to 64 bits, widened.
func (e TLVEntry) AsInt() (int64, bool) {
	switch {
	case e.ValueKind == KindInt8 && len(e.Value) == 1:
		return int64(int8(e.Value[0])), true
	case e.ValueKind == KindInt16 && len(e.Value) == 2:
		return int64(int16(binary.LittleEndian.Uint16(e.Value))), true
	case e.ValueKind == KindInt32 && len(e.Value) == 4:
		return int64(int32(binary.LittleEndian.Uint32(e.Value))), true
	case e.ValueKind == KindInt64 && len(e.Value) == 8:
		return int64(binary.LittleEndian.Uint64(e.Value)), true
	}
	return 0, false
}

// AsFloat returns a float32 or float64 value, widened.
func (e TLVEntry) AsFloat() (float64, bool) {
	switch {
	case e.ValueKind == KindFloat32 && len(e.Value) == 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(e.Value))), true
	case e.ValueKind == KindFloat64 && len(e.Value) == 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(e.Value)), true
	}
	return 0, false
}

// Reader helpers for the two ways a block travels.

// OptionsTail reads an options block that runs to the end of the body, as
// requests carry it, and validates it.
func (r *Reader) OptionsTail(what string) []byte {
	b := r.Rest()
	if r.err != nil {
		return nil
	}
	if _, err := ValidateOptions(b); err != nil {
		r.err = err
		return nil
	}
	return b
}

// OptionsPrefixed reads a [len u32][TLV] options block, as replies carry it.
func (r *Reader) OptionsPrefixed(what string) []byte {
	n := r.U32(what)
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(r.Len()) {
		r.Fail(what, "truncated options block")
		return nil
	}
	b := r.take(int(n), what)
	if _, err := ValidateOptions(b); err != nil {
		r.err = err
		return nil
	}
	return b
}

// AppendOptionsPrefixed appends [len u32][block].
func AppendOptionsPrefixed(dst, block []byte) []byte {
	return append(appendU32(dst, uint32(len(block))), block...)
}
