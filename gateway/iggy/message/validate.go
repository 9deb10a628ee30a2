package message

import (
	"encoding/binary"
	"fmt"
)

// Validate performs the admission checks of a server on one batch record that
// must span batch exactly. It returns the message count, or an error wrapping
// the sentinel of the first check that failed, in this order: header present
// and batch_length equal to len(batch) (ErrInvalidFormat), zero reserved
// header bytes (ErrInvalidReservedField), non-zero count
// (ErrInvalidMessagesCount), then per frame: fits (ErrInvalidFormat), zero
// reserved field (ErrInvalidReservedField), offset delta equal to its index
// (ErrInvalidFormat), checksum (ErrInvalidMessageChecksum); then frame count
// equal to message_count (ErrInvalidMessagesCount) and the batch checksum
// (ErrInvalidBatchChecksum).
//
// The offset-delta rule is stricter than the official server, which stores
// whatever deltas it is sent. Every known producer writes 0..n-1, and the
// store relies on it: a message's offset is base_offset + offset_delta, and a
// batch must cover exactly the offsets it was assigned.
func Validate(batch []byte) (uint32, error) { return validate(batch, true) }

// ValidateBuilt is Validate without recomputing each message's checksum (the batch checksum
// over them is still checked): for a batch that a Builder in this same process has just
// finished, whose message checksums it computed itself. Everything else Validate checks,
// ValidateBuilt checks too.
func ValidateBuilt(batch []byte) (uint32, error) { return validate(batch, false) }

func validate(batch []byte, frameSums bool) (uint32, error) {
	h, err := ParseBatchHeader(batch)
	if err != nil {
		return 0, err
	}
	if h.BatchLength != uint64(len(batch)) {
		return 0, fmt.Errorf("%w: batch_length %d, record has %d bytes", ErrInvalidFormat, h.BatchLength, len(batch))
	}
	for i := offHeaderReserved; i < BatchHeaderSize; i++ {
		if batch[i] != 0 {
			return 0, fmt.Errorf("%w: batch header byte %d is %#x", ErrInvalidReservedField, i, batch[i])
		}
	}
	if h.Count == 0 {
		return 0, fmt.Errorf("%w: empty batch", ErrInvalidMessagesCount)
	}
	le := binary.LittleEndian
	var sum batchSum
	sum.start(batch)
	rest := batch[BatchHeaderSize:]
	var i uint32
	for len(rest) > 0 {
		n, ok := frameSize(rest)
		if !ok {
			return 0, fmt.Errorf("%w: frame %d does not fit in the %d bytes left", ErrInvalidFormat, i, len(rest))
		}
		frame := rest[:n]
		if r := le.Uint64(frame[offFrameReserved:]); r != 0 {
			return 0, fmt.Errorf("%w: frame %d reserved is %#x", ErrInvalidReservedField, i, r)
		}
		if d := le.Uint32(frame[offOffsetDelta:]); d != i {
			return 0, fmt.Errorf("%w: frame %d has offset delta %d", ErrInvalidFormat, i, d)
		}
		if frameSums {
			if stored, computed := le.Uint64(frame), frameChecksum(frame); stored != computed {
				return 0, fmt.Errorf("%w: frame %d stores %#x, bytes hash to %#x", ErrInvalidMessageChecksum, i, stored, computed)
			}
		}
		sum.add(frame)
		i++
		rest = rest[n:]
	}
	if i != h.Count {
		return 0, fmt.Errorf("%w: header says %d, batch holds %d frames", ErrInvalidMessagesCount, h.Count, i)
	}
	if computed := sum.sum(); computed != h.Checksum {
		return 0, fmt.Errorf("%w: header stores %#x, computed %#x", ErrInvalidBatchChecksum, h.Checksum, computed)
	}
	return h.Count, nil
}
