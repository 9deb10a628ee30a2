package message

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Builder writes one batch record. It is reusable: after Reset it keeps its
// buffers, so once they have grown to the largest batch built, adding a
// message allocates nothing. The zero Builder is ready to use. A Builder is
// not safe for concurrent use.
//
// The header fields a server stamps (partition_id, base_offset,
// base_timestamp) are left zero, as producers send them. Message ids are
// written as given; the Builder does not invent ids for zero ones.
type Builder struct {
	buf     []byte
	origins []uint64
	err     error
}

// Reset discards the messages added so far and keeps the buffers.
func (b *Builder) Reset() {
	b.buf = slices.Grow(b.buf[:0], BatchHeaderSize)[:BatchHeaderSize]
	clear(b.buf)
	b.origins = b.origins[:0]
	b.err = nil
}

// Add appends a message with the given id, origin timestamp (microseconds
// since the Unix epoch), payload and user-header block (a TLV block, or nil).
// Both slices are copied.
func (b *Builder) Add(id [16]byte, originTimestamp uint64, payload, userHeaders []byte) {
	p, h := b.reserve(id, originTimestamp, len(payload), len(userHeaders), false)
	copy(p, payload)
	copy(h, userHeaders)
}

// Reserve appends a message whose payload and user headers the caller writes
// in place into the returned slices, avoiding an intermediate copy. The
// slices are zeroed and stay valid until the next Add, Reserve or Reset.
func (b *Builder) Reserve(id [16]byte, originTimestamp uint64, payloadLen, userHeadersLen int) (payload, userHeaders []byte) {
	return b.reserve(id, originTimestamp, payloadLen, userHeadersLen, true)
}

func (b *Builder) reserve(id [16]byte, origin uint64, pl, hl int, zero bool) ([]byte, []byte) {
	if len(b.buf) < BatchHeaderSize {
		b.Reset()
	}
	if pl < 0 || hl < 0 || uint64(pl) > math.MaxUint32 || uint64(hl) > math.MaxUint32 {
		if b.err == nil {
			b.err = fmt.Errorf("%w: message %d has a %d-byte payload and %d bytes of user headers", ErrMessageTooLarge, len(b.origins), pl, hl)
		}
		return nil, nil
	}
	start := len(b.buf)
	size := FrameHeaderSize + pl + hl
	b.buf = slices.Grow(b.buf, size)[:start+size]
	frame := b.buf[start:]
	le := binary.LittleEndian
	le.PutUint64(frame[offFrameChecksum:], 0)
	copy(frame[offFrameID:offFrameID+16], id[:])
	le.PutUint32(frame[offOffsetDelta:], uint32(len(b.origins)))
	le.PutUint32(frame[offTimestampDelta:], 0)
	le.PutUint32(frame[offUserHeadersLen:], uint32(hl))
	le.PutUint32(frame[offPayloadLen:], uint32(pl))
	le.PutUint64(frame[offFrameReserved:], 0)
	if zero {
		clear(frame[FrameHeaderSize:])
	}
	b.origins = append(b.origins, origin)
	p := FrameHeaderSize + pl
	return frame[FrameHeaderSize:p:p], frame[p:size:size]
}

// Len is the number of messages added since the last Reset.
func (b *Builder) Len() int { return len(b.origins) }

// Size is the length in bytes of the record Finish returns.
func (b *Builder) Size() int {
	if len(b.buf) < BatchHeaderSize {
		return BatchHeaderSize
	}
	return len(b.buf)
}

// Finish completes the record: the batch origin timestamp (the smallest of
// the messages), each frame's timestamp delta and checksum, batch_length,
// message_count and the batch checksum. The returned slice aliases the
// Builder's buffer and is valid until the next Add, Reserve or Reset. Finish
// may be called again after more messages are added.
//
// It fails when no message was added (ErrInvalidMessagesCount), when a
// message was too large (ErrMessageTooLarge), or when the origin timestamps
// span more than a u32 of microseconds (ErrInvalidTimestampDelta).
func (b *Builder) Finish() ([]byte, error) {
	if b.err != nil {
		return nil, b.err
	}
	if len(b.origins) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrInvalidMessagesCount)
	}
	minTS, maxTS := b.origins[0], b.origins[0]
	for _, o := range b.origins[1:] {
		minTS = min(minTS, o)
		maxTS = max(maxTS, o)
	}
	if maxTS-minTS > math.MaxUint32 {
		return nil, fmt.Errorf("%w: origin timestamps span %d µs", ErrInvalidTimestampDelta, maxTS-minTS)
	}
	BatchHeader{
		OriginTimestamp: minTS,
		BatchLength:     uint64(len(b.buf)),
		Count:           uint32(len(b.origins)),
	}.Put(b.buf)

	le := binary.LittleEndian
	var sum batchSum
	sum.start(b.buf)
	pos := BatchHeaderSize
	for _, o := range b.origins {
		frame := b.buf[pos:]
		size := FrameHeaderSize + int(le.Uint32(frame[offUserHeadersLen:])) + int(le.Uint32(frame[offPayloadLen:]))
		frame = frame[:size]
		le.PutUint32(frame[offTimestampDelta:], uint32(o-minTS))
		le.PutUint64(frame[offFrameChecksum:], frameChecksum(frame))
		sum.add(frame)
		pos += size
	}
	le.PutUint64(b.buf[offBatchChecksum:], sum.sum())
	return b.buf, nil
}

// MakeID returns the 16-byte message id of the u128 hi<<64 | lo.
func MakeID(lo, hi uint64) [16]byte {
	var id [16]byte
	binary.LittleEndian.PutUint64(id[:8], lo)
	binary.LittleEndian.PutUint64(id[8:], hi)
	return id
}
