package message

import "errors"

// Sentinel errors of the batch layout. Validate and the Builder wrap them with
// the detail of what failed (frame index, values); test with errors.Is and map
// to an Iggy status with Code.
var (
	// ErrInvalidFormat: the record is shorter than its header, batch_length
	// disagrees with the bytes, a frame runs past the end, or the offset deltas
	// are not 0..n-1.
	ErrInvalidFormat = errors.New("invalid batch format")
	// ErrInvalidMessageChecksum: a frame's checksum does not match its bytes.
	ErrInvalidMessageChecksum = errors.New("invalid message checksum")
	// ErrInvalidBatchChecksum: every frame is intact but the batch checksum is not.
	ErrInvalidBatchChecksum = errors.New("invalid batch checksum")
	// ErrInvalidMessagesCount: message_count is zero or differs from the number
	// of frames.
	ErrInvalidMessagesCount = errors.New("invalid messages count")
	// ErrInvalidReservedField: a reserved byte of the batch or a frame header is
	// not zero.
	ErrInvalidReservedField = errors.New("invalid reserved field")
	// ErrInvalidTimestampDelta: the origin timestamps of one batch span more
	// than a u32 of microseconds (about 71 minutes), so a frame cannot encode
	// its delta.
	ErrInvalidTimestampDelta = errors.New("invalid message timestamp delta")
	// ErrMessageTooLarge: a payload or user-header block does not fit the u32
	// length field of a frame.
	ErrMessageTooLarge = errors.New("message too large")
)

// Iggy status codes for the sentinel errors (apache/iggy IggyError numbering).
const (
	CodeInvalidFormat          = 4
	CodeInvalidMessagesCount   = 4009
	CodeTooBigMessagePayload   = 4022
	CodeInvalidMessageChecksum = 4027
	CodeInvalidTimestampDelta  = 4038
	CodeInvalidBatchChecksum   = 4039
	CodeInvalidReservedField   = 4101
)

// Code returns the Iggy status code for an error of this package, and 0 for
// nil or any other error.
func Code(err error) uint32 {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrInvalidMessageChecksum):
		return CodeInvalidMessageChecksum
	case errors.Is(err, ErrInvalidBatchChecksum):
		return CodeInvalidBatchChecksum
	case errors.Is(err, ErrInvalidMessagesCount):
		return CodeInvalidMessagesCount
	case errors.Is(err, ErrInvalidReservedField):
		return CodeInvalidReservedField
	case errors.Is(err, ErrInvalidTimestampDelta):
		return CodeInvalidTimestampDelta
	case errors.Is(err, ErrMessageTooLarge):
		return CodeTooBigMessagePayload
	case errors.Is(err, ErrInvalidFormat):
		return CodeInvalidFormat
	}
	return 0
}
