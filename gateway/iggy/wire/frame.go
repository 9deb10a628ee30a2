package wire

// Whole-frame builders. Each appends the 256-byte header with its size set
// from the body, then the body, so callers never compute sizes by hand.
// None allocates when dst has room.

func beginFrame(dst []byte) ([]byte, *[HeaderSize]byte) {
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	return dst, (*[HeaderSize]byte)(dst[start : start+HeaderSize])
}

// AppendRequest appends a request frame carrying body.
func AppendRequest(dst []byte, h RequestHeader, body []byte) []byte {
	h.Size = uint32(HeaderSize + len(body))
	dst, hdr := beginFrame(dst)
	h.Encode(hdr)
	return append(dst, body...)
}

// AppendReply appends a reply frame carrying body.
func AppendReply(dst []byte, h ReplyHeader, body []byte) []byte {
	h.Size = uint32(HeaderSize + len(body))
	dst, hdr := beginFrame(dst)
	h.Encode(hdr)
	return append(dst, body...)
}

// AppendEviction appends an eviction frame (a header alone).
func AppendEviction(dst []byte, h EvictionHeader) []byte {
	dst, hdr := beginFrame(dst)
	h.Encode(hdr)
	return dst
}
