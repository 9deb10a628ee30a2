package message

import (
	"encoding/binary"
	"math"
)

// AppendSlice appends to dst a batch record holding the frames of batch whose
// offset (base_offset + offset_delta) is at least fromOffset, at most
// maxCount of them, and returns the extended dst and the number of frames
// appended. As in an Iggy poll reply, the slice keeps the stored base_offset,
// timestamps and frame deltas, while batch_length, message_count and the
// batch checksum describe the frames included. When every frame is included
// the record is appended unchanged. Nothing is appended when no frame
// qualifies.
//
// batch is expected to be a stored, valid record; on corrupt bytes AppendSlice
// stops at the first frame that does not fit, never panics, and never reads
// past batch_length or the slice.
func AppendSlice(dst, batch []byte, fromOffset uint64, maxCount uint32) ([]byte, uint32) {
	region, ok := recordFrames(batch)
	if !ok || maxCount == 0 {
		return dst, 0
	}
	le := binary.LittleEndian
	base := le.Uint64(batch[offBaseOffset:])
	count := le.Uint32(batch[offMessageCount:])

	start, end := -1, 0
	var n uint32
	pos := 0
	for pos < len(region) && n < maxCount {
		size, ok := frameSize(region[pos:])
		if !ok {
			break
		}
		if start < 0 {
			delta := uint64(le.Uint32(region[pos+offOffsetDelta:]))
			if delta > math.MaxUint64-base || base+delta >= fromOffset {
				start = pos
			}
		}
		if start >= 0 {
			n++
			end = pos + size
		}
		pos += size
	}
	if n == 0 {
		return dst, 0
	}
	if start == 0 && end == len(region) && n == count && le.Uint64(batch[offBatchLength:]) == uint64(BatchHeaderSize+end) {
		return append(dst, batch[:BatchHeaderSize+end]...), n
	}

	at := len(dst)
	dst = append(dst, batch[:BatchHeaderSize]...)
	hdr := dst[at : at+BatchHeaderSize]
	le.PutUint64(hdr[offBatchLength:], uint64(BatchHeaderSize+end-start))
	le.PutUint32(hdr[offMessageCount:], n)
	clear(hdr[offHeaderReserved:])
	frames := region[start:end]
	le.PutUint64(hdr[offBatchChecksum:], checksumFrames(hdr, frames))
	dst = append(dst, frames...)
	return dst, n
}
