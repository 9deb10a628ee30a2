package wire

import "encoding/binary"

// The result section opens the body of every framed reply (see
// Operation.ReplyFramed): [count u32] then count {index u32, result u32}
// entries. Success is count 0 followed by the typed payload; a rejection
// decided while applying the operation is one entry carrying the error code
// and no payload.

// AppendResultOK appends an empty result section; the payload follows.
func AppendResultOK(dst []byte) []byte { return append(dst, 0, 0, 0, 0) }

// AppendResultError appends a result section with one entry for code.
func AppendResultError(dst []byte, code Code) []byte {
	dst = appendU32(dst, 1)
	dst = appendU32(dst, 0)
	return appendU32(dst, uint32(code))
}

// StripResult removes the result section from a framed reply body and
// returns the payload. A non-zero result in the first entry is returned as
// that Code, the way the official Go SDK reports it.
func StripResult(body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, &DecodeError{What: "result section", Offset: 0, Reason: "truncated count"}
	}
	n := binary.LittleEndian.Uint32(body)
	if uint64(n)*8 > uint64(len(body)-4) {
		return nil, &DecodeError{What: "result section", Offset: 0, Reason: "count exceeds body"}
	}
	if n > 0 {
		if c := Code(binary.LittleEndian.Uint32(body[8:])); c != OK {
			return nil, c
		}
	}
	return body[4+8*int(n):], nil
}
