package wire

import (
	"strconv"
	"unicode/utf8"
)

// MaxNameLength is the longest Name: its length travels in one byte.
const MaxNameLength = 255

// ValidName reports whether s can travel as a Name: 1..255 bytes of UTF-8.
func ValidName(s string) bool {
	return len(s) >= 1 && len(s) <= MaxNameLength && utf8.ValidString(s)
}

// AppendName appends a Name ([len u8][bytes]). The caller checks ValidName;
// a longer string is cut at 255 bytes rather than corrupting the frame.
func AppendName(dst []byte, s string) []byte { return appendString8(dst, s) }

// IdentifierKind tells how an Identifier names its resource.
type IdentifierKind uint8

// Identifier kinds.
const (
	IdentifierNumeric IdentifierKind = 1
	IdentifierString  IdentifierKind = 2
)

// Identifier names a stream, topic, consumer group or user, either by its
// server-assigned 0-based id or by its name. The zero value is invalid.
type Identifier struct {
	Kind IdentifierKind
	ID   uint32 // when Kind is IdentifierNumeric
	Name string // when Kind is IdentifierString
}

// NumericID returns an Identifier for a numeric id.
func NumericID(id uint32) Identifier { return Identifier{Kind: IdentifierNumeric, ID: id} }

// NamedID returns an Identifier for a name; see ValidName for its limits.
func NamedID(name string) Identifier { return Identifier{Kind: IdentifierString, Name: name} }

// IsNumeric reports whether i names its resource by id.
func (i Identifier) IsNumeric() bool { return i.Kind == IdentifierNumeric }

// Valid reports whether i can be encoded as it is.
func (i Identifier) Valid() bool {
	switch i.Kind {
	case IdentifierNumeric:
		return true
	case IdentifierString:
		return ValidName(i.Name)
	}
	return false
}

func (i Identifier) String() string {
	switch i.Kind {
	case IdentifierNumeric:
		return strconv.FormatUint(uint64(i.ID), 10)
	case IdentifierString:
		return strconv.Quote(i.Name)
	}
	return "invalid"
}

// EncodedLen is the number of bytes AppendTo writes.
func (i Identifier) EncodedLen() int {
	if i.Kind == IdentifierString {
		return 2 + min(len(i.Name), MaxNameLength)
	}
	return 6
}

// AppendTo appends [kind u8][len u8][value]. Anything but a string
// identifier is encoded as numeric.
func (i Identifier) AppendTo(dst []byte) []byte {
	if i.Kind == IdentifierString {
		dst = append(dst, byte(IdentifierString))
		return appendString8(dst, i.Name)
	}
	dst = append(dst, byte(IdentifierNumeric), 4)
	return appendU32(dst, i.ID)
}

// Decode parses an identifier that fills b exactly or is followed by other
// fields; trailing bytes are ignored.
func (i *Identifier) Decode(b []byte) error {
	r := NewReader(b)
	*i = r.Identifier("identifier")
	return r.Err()
}

// Identifier reads an Identifier. A numeric one decodes without allocating.
func (r *Reader) Identifier(what string) Identifier {
	kind := IdentifierKind(r.U8(what))
	n := int(r.U8(what))
	if r.err != nil {
		return Identifier{}
	}
	switch kind {
	case IdentifierNumeric:
		if n != 4 {
			r.Fail(what, "numeric identifier length "+strconv.Itoa(n)+", want 4")
			return Identifier{}
		}
		return Identifier{Kind: IdentifierNumeric, ID: r.U32(what)}
	case IdentifierString:
		if n == 0 {
			r.Fail(what, "empty string identifier")
			return Identifier{}
		}
		p := r.take(n, what)
		if r.err != nil {
			return Identifier{}
		}
		if !utf8.Valid(p) {
			r.Fail(what, "string identifier is not valid UTF-8")
			return Identifier{}
		}
		return Identifier{Kind: IdentifierString, Name: string(p)}
	}
	r.Fail(what, "unknown identifier kind "+strconv.Itoa(int(kind)))
	return Identifier{}
}

// ConsumerKind tells whether offsets belong to one consumer or a group.
type ConsumerKind uint8

// Consumer kinds.
const (
	ConsumerKindSingle ConsumerKind = 1
	ConsumerKindGroup  ConsumerKind = 2
)

// Consumer is the reader a poll or an offset request speaks for.
type Consumer struct {
	Kind ConsumerKind
	ID   Identifier
}

// AppendTo appends [kind u8][Identifier].
func (c Consumer) AppendTo(dst []byte) []byte {
	return c.ID.AppendTo(append(dst, byte(c.Kind)))
}

// Consumer reads a Consumer.
func (r *Reader) Consumer(what string) Consumer {
	k := ConsumerKind(r.U8(what))
	if r.err == nil && k != ConsumerKindSingle && k != ConsumerKindGroup {
		r.Fail(what, "unknown consumer kind "+strconv.Itoa(int(k)))
		return Consumer{}
	}
	return Consumer{Kind: k, ID: r.Identifier(what)}
}

// PartitioningKind tells how SendMessages picks its partition.
type PartitioningKind uint8

// Partitioning kinds.
const (
	PartitionBalanced     PartitioningKind = 1
	PartitionByID         PartitioningKind = 2
	PartitionByMessageKey PartitioningKind = 3
)

// Partitioning is the target partition rule of a SendMessages request.
type Partitioning struct {
	Kind        PartitioningKind
	PartitionID uint32 // with PartitionByID
	Key         []byte // with PartitionByMessageKey, 1..255 bytes
}

// PartitionIDPartitioning returns explicit partitioning to id.
func PartitionIDPartitioning(id uint32) Partitioning {
	return Partitioning{Kind: PartitionByID, PartitionID: id}
}

// AppendTo appends [kind u8][len u8][value].
func (p Partitioning) AppendTo(dst []byte) []byte {
	switch p.Kind {
	case PartitionByID:
		dst = append(dst, byte(PartitionByID), 4)
		return appendU32(dst, p.PartitionID)
	case PartitionByMessageKey:
		k := p.Key
		if len(k) > 255 {
			k = k[:255]
		}
		dst = append(dst, byte(PartitionByMessageKey), byte(len(k)))
		return append(dst, k...)
	}
	return append(dst, byte(PartitionBalanced), 0)
}

// Partitioning reads a Partitioning. The key aliases the input.
func (r *Reader) Partitioning(what string) Partitioning {
	k := PartitioningKind(r.U8(what))
	n := int(r.U8(what))
	if r.err != nil {
		return Partitioning{}
	}
	switch k {
	case PartitionBalanced:
		if n != 0 {
			r.Fail(what, "balanced partitioning with a value")
			return Partitioning{}
		}
		return Partitioning{Kind: k}
	case PartitionByID:
		if n != 4 {
			r.Fail(what, "partition id length "+strconv.Itoa(n)+", want 4")
			return Partitioning{}
		}
		return Partitioning{Kind: k, PartitionID: r.U32(what)}
	case PartitionByMessageKey:
		if n == 0 {
			r.Fail(what, "empty message key")
			return Partitioning{}
		}
		return Partitioning{Kind: k, Key: r.take(n, what)}
	}
	r.Fail(what, "unknown partitioning kind "+strconv.Itoa(int(k)))
	return Partitioning{}
}

// PollingKind tells where a poll starts.
type PollingKind uint8

// Polling strategies.
const (
	PollOffset    PollingKind = 1
	PollTimestamp PollingKind = 2
	PollFirst     PollingKind = 3
	PollLast      PollingKind = 4
	PollNext      PollingKind = 5
)

// PollingStrategy is [kind u8][value u64]; the value is an offset or a
// timestamp in microseconds and is ignored by the other kinds.
type PollingStrategy struct {
	Kind  PollingKind
	Value uint64
}

// AppendTo appends the 9-byte strategy.
func (s PollingStrategy) AppendTo(dst []byte) []byte {
	return appendU64(append(dst, byte(s.Kind)), s.Value)
}

// PollingStrategy reads a PollingStrategy.
func (r *Reader) PollingStrategy(what string) PollingStrategy {
	k := PollingKind(r.U8(what))
	v := r.U64(what)
	if r.err == nil && (k < PollOffset || k > PollNext) {
		r.Fail(what, "unknown polling kind "+strconv.Itoa(int(k)))
		return PollingStrategy{}
	}
	return PollingStrategy{Kind: k, Value: v}
}

// OptionalPartition is the 5-byte partition field of poll and offset
// requests: [flag u8][partition u32]. Only flag 1 means present.
type OptionalPartition struct {
	Present bool
	ID      uint32
}

// SomePartition returns a present partition id.
func SomePartition(id uint32) OptionalPartition { return OptionalPartition{Present: true, ID: id} }

// AppendTo appends the 5-byte field; an absent partition is sent as zeros.
func (p OptionalPartition) AppendTo(dst []byte) []byte {
	if !p.Present {
		return append(dst, 0, 0, 0, 0, 0)
	}
	return appendU32(append(dst, 1), p.ID)
}

// OptionalPartition reads the 5-byte field. An absent partition decodes
// with ID 0 whatever the value bytes hold.
func (r *Reader) OptionalPartition(what string) OptionalPartition {
	flag := r.U8(what)
	id := r.U32(what)
	if flag != 1 {
		return OptionalPartition{}
	}
	return OptionalPartition{Present: true, ID: id}
}

// AckLevel says when an offset write is answered.
type AckLevel uint8

// Ack levels.
const (
	AckNone   AckLevel = 0 // answered once applied locally
	AckQuorum AckLevel = 1 // answered after commit; what typed clients send
)
