package message

import (
	"encoding/binary"
	"fmt"
)

// Frame is one message of a batch record, decoded in place: Payload and
// UserHeaders alias the record's bytes.
type Frame struct {
	Checksum       uint64
	ID             [16]byte // a u128 in little-endian byte order
	OffsetDelta    uint32   // the message offset is the batch base_offset plus this
	TimestampDelta uint32   // the origin timestamp is the batch origin_timestamp plus this
	Payload        []byte
	UserHeaders    []byte

	raw []byte
}

// Size is the frame's length in the record, header included.
func (f Frame) Size() int { return len(f.raw) }

// Valid reports whether the frame's checksum matches its bytes.
func (f Frame) Valid() bool {
	return len(f.raw) >= FrameHeaderSize && frameChecksum(f.raw) == f.Checksum
}

func decodeFrameInto(b []byte, f *Frame) {
	le := binary.LittleEndian
	hl := le.Uint32(b[offUserHeadersLen:])
	pl := le.Uint32(b[offPayloadLen:])
	f.Checksum = le.Uint64(b[offFrameChecksum:])
	f.OffsetDelta = le.Uint32(b[offOffsetDelta:])
	f.TimestampDelta = le.Uint32(b[offTimestampDelta:])
	f.raw = b
	copy(f.ID[:], b[offFrameID:offFrameID+16])
	p := FrameHeaderSize + int(pl)
	f.Payload = b[FrameHeaderSize:p:p]
	f.UserHeaders = b[p : p+int(hl) : p+int(hl)]
}

// Iter walks the frames of one batch record. It checks layout only (frames
// fit, their number matches message_count), not checksums: use Validate or
// Frame.Valid for those. It never panics on corrupt bytes and allocates
// nothing while walking.
type Iter struct {
	rest []byte
	want uint32
	seen uint32
	err  error
}

// Frames returns an iterator over the frames of the batch record at the start
// of batch. Bytes past batch_length are ignored, so batch may be the rest of a
// buffer of back-to-back records.
func Frames(batch []byte) Iter {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return Iter{err: err}
	}
	if h.BatchLength < BatchHeaderSize || h.BatchLength > uint64(len(batch)) {
		return Iter{err: fmt.Errorf("%w: batch_length %d, %d bytes present", ErrInvalidFormat, h.BatchLength, len(batch))}
	}
	return Iter{rest: batch[BatchHeaderSize:h.BatchLength], want: h.Count}
}

// Next returns the next frame, or false at the end of the record or at the
// first malformed frame (then Err says why).
func (it *Iter) Next() (Frame, bool) {
	var f Frame
	ok := it.NextInto(&f)
	return f, ok
}

// NextInto is Next writing the frame into f, for loops that walk many small frames.
func (it *Iter) NextInto(f *Frame) bool {
	if it.err != nil {
		return false
	}
	if len(it.rest) == 0 {
		if it.seen != it.want {
			it.err = fmt.Errorf("%w: header says %d, batch holds %d frames", ErrInvalidMessagesCount, it.want, it.seen)
		}
		return false
	}
	n, ok := frameSize(it.rest)
	if !ok {
		it.err = fmt.Errorf("%w: frame %d does not fit in the %d bytes left", ErrInvalidFormat, it.seen, len(it.rest))
		it.rest = nil
		return false
	}
	decodeFrameInto(it.rest[:n:n], f)
	it.rest = it.rest[n:]
	it.seen++
	return true
}

// Err is the reason the walk stopped early, or nil after a clean walk.
func (it *Iter) Err() error { return it.err }

// Each calls fn for every frame of the batch record at the start of batch
// until fn returns false, and returns the layout error that stopped the walk,
// if any.
func Each(batch []byte, fn func(Frame) bool) error {
	it := Frames(batch)
	for {
		f, ok := it.Next()
		if !ok {
			return it.Err()
		}
		if !fn(f) {
			return nil
		}
	}
}

// RecordIter walks batch records laid back to back, as in a poll reply body.
type RecordIter struct {
	rest []byte
	err  error
}

// Records returns an iterator over the batch records of body.
func Records(body []byte) RecordIter { return RecordIter{rest: body} }

// Next returns the next whole record (header and frames, exactly
// batch_length bytes), or false at the end of body or at a record that does
// not fit (then Err says why).
func (r *RecordIter) Next() ([]byte, bool) {
	if r.err != nil || len(r.rest) == 0 {
		return nil, false
	}
	h, err := ParseBatchHeader(r.rest)
	if err != nil {
		r.err = err
		return nil, false
	}
	if h.BatchLength < BatchHeaderSize || h.BatchLength > uint64(len(r.rest)) {
		r.err = fmt.Errorf("%w: batch_length %d, %d bytes left", ErrInvalidFormat, h.BatchLength, len(r.rest))
		return nil, false
	}
	rec := r.rest[:h.BatchLength:h.BatchLength]
	r.rest = r.rest[h.BatchLength:]
	return rec, true
}

// Err is the reason the walk stopped early, or nil after a clean walk.
func (r *RecordIter) Err() error { return r.err }
