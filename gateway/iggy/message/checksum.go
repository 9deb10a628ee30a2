package message

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// batchSum accumulates the batch checksum input (44 header bytes, then 8 bytes
// per frame) in a local buffer and feeds the hasher in large writes, so that a
// batch of thousands of frames costs a handful of hasher calls and no heap.
type batchSum struct {
	n       int
	flushed bool
	buf     [1024]byte
	h       xxh3.Hasher
}

// start takes the checksummed header fields from an encoded batch header.
func (s *batchSum) start(header []byte) {
	copy(s.buf[:offBatchChecksum], header[:offBatchChecksum])
	copy(s.buf[offBatchChecksum:offBatchChecksum+4], header[offMessageCount:offMessageCount+4])
	s.n = offBatchChecksum + 4
}

// add appends one frame's stored checksum field.
func (s *batchSum) add(frameChecksum []byte) {
	if s.n+8 > len(s.buf) {
		s.h.Write(s.buf[:s.n])
		s.n = 0
		s.flushed = true
	}
	copy(s.buf[s.n:s.n+8], frameChecksum[:8])
	s.n += 8
}

func (s *batchSum) sum() uint64 {
	if !s.flushed {
		return xxh3.Hash(s.buf[:s.n])
	}
	s.h.Write(s.buf[:s.n])
	return s.h.Sum64()
}

// frameChecksum is the checksum a frame must carry: it covers the frame from
// byte 8 (after the checksum field) to the end of its user headers.
func frameChecksum(frame []byte) uint64 {
	return xxh3.Hash(frame[frameChecksumCover0:])
}

// frameSize returns the length of the frame starting at b[0] and whether its
// header and declared contents fit in b.
func frameSize(b []byte) (int, bool) {
	if len(b) < FrameHeaderSize {
		return 0, false
	}
	size := uint64(FrameHeaderSize) +
		uint64(binary.LittleEndian.Uint32(b[offUserHeadersLen:])) +
		uint64(binary.LittleEndian.Uint32(b[offPayloadLen:]))
	if size > uint64(len(b)) {
		return 0, false
	}
	return int(size), true
}

// recordFrames returns the frame region of a batch record, bounded by both
// batch_length and the bytes present, or false when the header is missing or
// batch_length is below the header size.
func recordFrames(batch []byte) ([]byte, bool) {
	if len(batch) < BatchHeaderSize {
		return nil, false
	}
	length := binary.LittleEndian.Uint64(batch[offBatchLength:])
	if length < BatchHeaderSize {
		return nil, false
	}
	end := uint64(len(batch))
	if length < end {
		end = length
	}
	return batch[BatchHeaderSize:end], true
}

// checksumFrames computes the batch checksum for an encoded header and the
// frames in region, walking frames by their length fields and stopping at the
// first one that does not fit.
func checksumFrames(header, region []byte) uint64 {
	var s batchSum
	s.start(header)
	for len(region) > 0 {
		n, ok := frameSize(region)
		if !ok {
			break
		}
		s.add(region[:8])
		region = region[n:]
	}
	return s.sum()
}

// Stamp sets partition_id, base_offset and base_timestamp in the header of a
// batch record and recomputes its batch checksum, touching only the headers:
// payload bytes stay bound through the frame checksums. The batch should have
// passed Validate; on shorter input Stamp does nothing, and it never reads
// past batch_length or the slice.
func Stamp(batch []byte, partitionID, baseOffset, baseTimestamp uint64) {
	region, ok := recordFrames(batch)
	if !ok {
		return
	}
	le := binary.LittleEndian
	le.PutUint64(batch[offPartitionID:], partitionID)
	le.PutUint64(batch[offBaseOffset:], baseOffset)
	le.PutUint64(batch[offBaseTimestamp:], baseTimestamp)
	le.PutUint64(batch[offBatchChecksum:], checksumFrames(batch, region))
}
