package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame geometry.
const (
	HeaderSize   = 256
	MaxFrameSize = 64 << 20
)

// Header command bytes (offset 60). A client sends only CommandRequest and
// receives CommandReply or CommandEviction; the rest are replica traffic.
const (
	CommandRequest  uint8 = 5
	CommandReply    uint8 = 8
	CommandEviction uint8 = 13
	// MaxCommandByte is the highest command byte the protocol defines; a
	// frame with a larger one is a framing error.
	MaxCommandByte uint8 = 29
)

// Byte offsets inside the 256-byte header.
const (
	offChecksum     = 0
	offChecksumBody = 16
	offCluster      = 32
	offSize         = 48
	offView         = 52
	offRelease      = 56
	offCommand      = 60
	offReplica      = 61

	offReqClient          = 128
	offReqRequestChecksum = 144
	offReqTimestamp       = 160
	offReqRequest         = 168
	offReqOperation       = 176
	offReqSession         = 184
	offReqUserID          = 192
	offReqCode            = 196

	offRepRequestChecksum = 128
	offRepContext         = 144
	offRepClient          = 160
	offRepOp              = 176
	offRepCommit          = 184
	offRepTimestamp       = 192
	offRepRequest         = 200
	offRepOperation       = 208
	offRepStatus          = 216

	offEvClient     = 128
	offEvVersion    = 144
	offEvVersionMin = 148
	offEvReason     = 255
)

// Uint128 is a little-endian 128-bit value as the protocol carries client
// ids and checksums: the low half comes first on the wire.
type Uint128 struct {
	Lo, Hi uint64
}

// IsZero reports whether u is 0.
func (u Uint128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

func (u Uint128) String() string { return fmt.Sprintf("%016x%016x", u.Hi, u.Lo) }

func putU128(b []byte, u Uint128) {
	binary.LittleEndian.PutUint64(b, u.Lo)
	binary.LittleEndian.PutUint64(b[8:], u.Hi)
}

func getU128(b []byte) Uint128 {
	return Uint128{Lo: binary.LittleEndian.Uint64(b), Hi: binary.LittleEndian.Uint64(b[8:])}
}

// FrameHeader is the 128-byte prefix every header kind shares.
type FrameHeader struct {
	Checksum     Uint128
	ChecksumBody Uint128
	Cluster      Uint128
	Size         uint32 // whole frame length, header included
	View         uint32
	Release      uint32
	Command      uint8
	Replica      uint8
}

func (h *FrameHeader) encode(dst *[HeaderSize]byte, command uint8) {
	*dst = [HeaderSize]byte{}
	putU128(dst[offChecksum:], h.Checksum)
	putU128(dst[offChecksumBody:], h.ChecksumBody)
	putU128(dst[offCluster:], h.Cluster)
	binary.LittleEndian.PutUint32(dst[offSize:], h.Size)
	binary.LittleEndian.PutUint32(dst[offView:], h.View)
	binary.LittleEndian.PutUint32(dst[offRelease:], h.Release)
	dst[offCommand] = command
	dst[offReplica] = h.Replica
}

func (h *FrameHeader) decode(src []byte, want uint8, kind string) error {
	if len(src) < HeaderSize {
		return &DecodeError{What: kind + " header", Offset: len(src), Reason: "shorter than 256 bytes"}
	}
	if src[offCommand] != want {
		return &DecodeError{What: kind + " header", Offset: offCommand,
			Reason: fmt.Sprintf("command byte %d, want %d", src[offCommand], want)}
	}
	h.Checksum = getU128(src[offChecksum:])
	h.ChecksumBody = getU128(src[offChecksumBody:])
	h.Cluster = getU128(src[offCluster:])
	h.Size = binary.LittleEndian.Uint32(src[offSize:])
	h.View = binary.LittleEndian.Uint32(src[offView:])
	h.Release = binary.LittleEndian.Uint32(src[offRelease:])
	h.Command = src[offCommand]
	h.Replica = src[offReplica]
	return nil
}

// RequestHeader is the header of a client request (command byte 5).
type RequestHeader struct {
	FrameHeader
	Client Uint128
	// RequestChecksum, when non-zero, must equal XXH3-64 of the body in the
	// low half; zero means the client did not stamp it.
	RequestChecksum Uint128
	Timestamp       uint64
	Request         uint64
	Operation       Operation
	Session         uint64
	UserID          uint32
	// Code is the command code; meaningful only with OpNonReplicated.
	Code Command
}

// Encode writes h into dst, zeroing every reserved byte. The command byte is
// always CommandRequest, whatever h.Command says.
func (h *RequestHeader) Encode(dst *[HeaderSize]byte) {
	h.FrameHeader.encode(dst, CommandRequest)
	putU128(dst[offReqClient:], h.Client)
	putU128(dst[offReqRequestChecksum:], h.RequestChecksum)
	binary.LittleEndian.PutUint64(dst[offReqTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(dst[offReqRequest:], h.Request)
	dst[offReqOperation] = uint8(h.Operation)
	binary.LittleEndian.PutUint64(dst[offReqSession:], h.Session)
	binary.LittleEndian.PutUint32(dst[offReqUserID:], h.UserID)
	binary.LittleEndian.PutUint32(dst[offReqCode:], uint32(h.Code))
}

// Decode parses the first 256 bytes of src as a request header. It checks
// only the command byte; Validate applies the server's session rules.
func (h *RequestHeader) Decode(src []byte) error {
	if err := h.FrameHeader.decode(src, CommandRequest, "request"); err != nil {
		return err
	}
	h.Client = getU128(src[offReqClient:])
	h.RequestChecksum = getU128(src[offReqRequestChecksum:])
	h.Timestamp = binary.LittleEndian.Uint64(src[offReqTimestamp:])
	h.Request = binary.LittleEndian.Uint64(src[offReqRequest:])
	h.Operation = Operation(src[offReqOperation])
	h.Session = binary.LittleEndian.Uint64(src[offReqSession:])
	h.UserID = binary.LittleEndian.Uint32(src[offReqUserID:])
	h.Code = Command(binary.LittleEndian.Uint32(src[offReqCode:]))
	return nil
}

// Validate applies the rules the official server checks before it looks at
// a request: a non-zero client id, a known client operation, Register with
// session and request 0, and every replicated operation with both non-zero.
// The official server silently drops a request that fails them.
func (h *RequestHeader) Validate() error {
	bad := func(reason string) error {
		return &DecodeError{What: "request header", Offset: offReqOperation, Reason: reason}
	}
	switch {
	case h.Client.IsZero():
		return bad("client id is zero")
	case !h.Operation.ClientSendable():
		return bad("operation " + h.Operation.String() + " is not a client operation")
	case h.Operation == OpRegister && (h.Session != 0 || h.Request != 0):
		return bad("register must carry session 0 and request 0")
	case h.Operation != OpRegister && h.Operation != OpNonReplicated && (h.Session == 0 || h.Request == 0):
		return bad("replicated operation needs a session and a request number")
	}
	return nil
}

// ReplyHeader is the header of a server reply (command byte 8).
type ReplyHeader struct {
	FrameHeader
	RequestChecksum Uint128
	Context         Uint128
	Client          Uint128
	Op              uint64
	Commit          uint64
	Timestamp       uint64
	// Request must echo the request number being answered.
	Request uint64
	// Operation must echo the request's operation; it decides body framing.
	Operation Operation
	// Status is non-zero for an error decided before commit; the body is
	// then empty.
	Status Code
}

// Encode writes h into dst; the command byte is always CommandReply.
func (h *ReplyHeader) Encode(dst *[HeaderSize]byte) {
	h.FrameHeader.encode(dst, CommandReply)
	putU128(dst[offRepRequestChecksum:], h.RequestChecksum)
	putU128(dst[offRepContext:], h.Context)
	putU128(dst[offRepClient:], h.Client)
	binary.LittleEndian.PutUint64(dst[offRepOp:], h.Op)
	binary.LittleEndian.PutUint64(dst[offRepCommit:], h.Commit)
	binary.LittleEndian.PutUint64(dst[offRepTimestamp:], h.Timestamp)
	binary.LittleEndian.PutUint64(dst[offRepRequest:], h.Request)
	dst[offRepOperation] = uint8(h.Operation)
	binary.LittleEndian.PutUint32(dst[offRepStatus:], uint32(h.Status))
}

// Decode parses the first 256 bytes of src as a reply header.
func (h *ReplyHeader) Decode(src []byte) error {
	if err := h.FrameHeader.decode(src, CommandReply, "reply"); err != nil {
		return err
	}
	h.RequestChecksum = getU128(src[offRepRequestChecksum:])
	h.Context = getU128(src[offRepContext:])
	h.Client = getU128(src[offRepClient:])
	h.Op = binary.LittleEndian.Uint64(src[offRepOp:])
	h.Commit = binary.LittleEndian.Uint64(src[offRepCommit:])
	h.Timestamp = binary.LittleEndian.Uint64(src[offRepTimestamp:])
	h.Request = binary.LittleEndian.Uint64(src[offRepRequest:])
	h.Operation = Operation(src[offRepOperation])
	h.Status = Code(binary.LittleEndian.Uint32(src[offRepStatus:]))
	return nil
}

// ReplyTo returns a reply header answering req: it echoes the fields the
// client checks (request number, operation) and the ones it expects back
// (cluster, view, release, replica, timestamp, request checksum, client).
// Size is left for the caller (see PutFrameSize).
func ReplyTo(req *RequestHeader, status Code) ReplyHeader {
	return ReplyHeader{
		FrameHeader: FrameHeader{
			Cluster: req.Cluster,
			Size:    HeaderSize,
			View:    req.View,
			Release: req.Release,
			Command: CommandReply,
			Replica: req.Replica,
		},
		RequestChecksum: req.RequestChecksum,
		Client:          req.Client,
		Timestamp:       req.Timestamp,
		Request:         req.Request,
		Operation:       req.Operation,
		Status:          status,
	}
}

// EvictionHeader ends a session (command byte 13); it is always a whole
// 256-byte frame with no body.
type EvictionHeader struct {
	FrameHeader
	Client Uint128
	// ServerProtocolVersion and ServerProtocolVersionMin carry the accepted
	// version window with EvictIncompatibleProtocol and are zero otherwise.
	ServerProtocolVersion    uint32
	ServerProtocolVersionMin uint32
	Reason                   EvictionReason
}

// Encode writes h into dst; the command byte is always CommandEviction and
// the size always HeaderSize.
func (h *EvictionHeader) Encode(dst *[HeaderSize]byte) {
	fh := h.FrameHeader
	fh.Size = HeaderSize
	fh.encode(dst, CommandEviction)
	putU128(dst[offEvClient:], h.Client)
	binary.LittleEndian.PutUint32(dst[offEvVersion:], h.ServerProtocolVersion)
	binary.LittleEndian.PutUint32(dst[offEvVersionMin:], h.ServerProtocolVersionMin)
	dst[offEvReason] = uint8(h.Reason)
}

// Decode parses the first 256 bytes of src as an eviction header.
func (h *EvictionHeader) Decode(src []byte) error {
	if err := h.FrameHeader.decode(src, CommandEviction, "eviction"); err != nil {
		return err
	}
	h.Client = getU128(src[offEvClient:])
	h.ServerProtocolVersion = binary.LittleEndian.Uint32(src[offEvVersion:])
	h.ServerProtocolVersionMin = binary.LittleEndian.Uint32(src[offEvVersionMin:])
	h.Reason = EvictionReason(src[offEvReason])
	return nil
}

// Code is the error a client reports for this eviction. An incompatible
// protocol eviction whose version window is empty or inverted is reported
// as Unauthenticated, as the official Go SDK does.
func (h *EvictionHeader) Code() Code {
	if h.Reason == EvictIncompatibleProtocol &&
		(h.ServerProtocolVersion == 0 || h.ServerProtocolVersionMin == 0 ||
			h.ServerProtocolVersionMin > h.ServerProtocolVersion) {
		return Unauthenticated
	}
	return h.Reason.Code()
}

// FrameCommand returns the command byte of a frame that ReadFrame returned.
func FrameCommand(frame []byte) uint8 {
	if len(frame) <= offCommand {
		return 0
	}
	return frame[offCommand]
}

// PutFrameSize stores len(frame) in the header's size field, for frames
// built by appending the body after an encoded header.
func PutFrameSize(frame []byte) {
	if len(frame) >= offSize+4 {
		binary.LittleEndian.PutUint32(frame[offSize:], uint32(len(frame)))
	}
}

// ErrFrame is matched by errors.Is for every framing error ReadFrame reports:
// a size outside HeaderSize..MaxFrameSize or an undefined command byte. After
// one the stream position is lost and the connection must be closed.
var ErrFrame = errors.New("iggy wire: framing error")

type frameError struct{ reason string }

func (e *frameError) Error() string { return "iggy wire: framing error: " + e.reason }

func (e *frameError) Is(target error) bool { return target == ErrFrame || target == InvalidCommand }

// ReadFrame reads one whole frame from r into buf, growing it when needed,
// and returns the frame (header and body). It returns io.EOF only when r ends
// cleanly before the first header byte, io.ErrUnexpectedEOF for a frame cut
// short, and an error matching ErrFrame (and InvalidCommand) when the size or
// command byte is invalid, before any body byte is read.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) < HeaderSize {
		buf = make([]byte, HeaderSize, 4096)
	}
	buf = buf[:HeaderSize]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint32(buf[offSize:])
	if size < HeaderSize || size > MaxFrameSize {
		return nil, &frameError{fmt.Sprintf("size %d outside %d..%d", size, HeaderSize, MaxFrameSize)}
	}
	if buf[offCommand] > MaxCommandByte {
		return nil, &frameError{fmt.Sprintf("command byte %d above %d", buf[offCommand], MaxCommandByte)}
	}
	if int(size) > cap(buf) {
		grown := make([]byte, size)
		copy(grown, buf)
		buf = grown
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf[HeaderSize:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
