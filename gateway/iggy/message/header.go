package message

import (
	"encoding/binary"
	"fmt"
)

// Sizes of the two fixed headers of the batch layout.
const (
	BatchHeaderSize = 256
	FrameHeaderSize = 48
)

// Field offsets inside the batch header.
const (
	offPartitionID     = 0
	offBaseOffset      = 8
	offBaseTimestamp   = 16
	offOriginTimestamp = 24
	offBatchLength     = 32
	offBatchChecksum   = 40
	offMessageCount    = 48
	offHeaderReserved  = 52
)

// Field offsets inside a frame header.
const (
	offFrameChecksum    = 0
	offFrameID          = 8
	offOffsetDelta      = 24
	offTimestampDelta   = 28
	offUserHeadersLen   = 32
	offPayloadLen       = 36
	offFrameReserved    = 40
	frameChecksumCover0 = 8
)

// BatchHeader is the decoded form of the 256-byte batch header. The reserved
// tail is not represented: Put always writes it as zeros.
type BatchHeader struct {
	PartitionID     uint64
	BaseOffset      uint64
	BaseTimestamp   uint64 // append time, microseconds since the Unix epoch
	OriginTimestamp uint64 // smallest origin timestamp of the messages, microseconds
	BatchLength     uint64 // whole record length, header included
	Checksum        uint64
	Count           uint32
}

// ParseBatchHeader decodes the first BatchHeaderSize bytes of b. It checks only
// that they are there; Validate performs the admission checks.
func ParseBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, fmt.Errorf("%w: batch header needs %d bytes, have %d", ErrInvalidFormat, BatchHeaderSize, len(b))
	}
	le := binary.LittleEndian
	return BatchHeader{
		PartitionID:     le.Uint64(b[offPartitionID:]),
		BaseOffset:      le.Uint64(b[offBaseOffset:]),
		BaseTimestamp:   le.Uint64(b[offBaseTimestamp:]),
		OriginTimestamp: le.Uint64(b[offOriginTimestamp:]),
		BatchLength:     le.Uint64(b[offBatchLength:]),
		Checksum:        le.Uint64(b[offBatchChecksum:]),
		Count:           le.Uint32(b[offMessageCount:]),
	}, nil
}

// Put encodes h into b[:BatchHeaderSize], zeroing the reserved bytes. b must
// hold at least BatchHeaderSize bytes.
func (h BatchHeader) Put(b []byte) {
	b = b[:BatchHeaderSize]
	le := binary.LittleEndian
	le.PutUint64(b[offPartitionID:], h.PartitionID)
	le.PutUint64(b[offBaseOffset:], h.BaseOffset)
	le.PutUint64(b[offBaseTimestamp:], h.BaseTimestamp)
	le.PutUint64(b[offOriginTimestamp:], h.OriginTimestamp)
	le.PutUint64(b[offBatchLength:], h.BatchLength)
	le.PutUint64(b[offBatchChecksum:], h.Checksum)
	le.PutUint32(b[offMessageCount:], h.Count)
	clear(b[offHeaderReserved:])
}

// LastOffset is the offset of the last message of a batch whose frames carry
// the deltas 0..Count-1, as every admitted batch does. It equals BaseOffset
// for an empty batch.
func (h BatchHeader) LastOffset() uint64 {
	if h.Count == 0 {
		return h.BaseOffset
	}
	return h.BaseOffset + uint64(h.Count) - 1
}
