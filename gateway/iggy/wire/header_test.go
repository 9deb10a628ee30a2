package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// The ping-before-login example: a request that is all zero except size,
// command, client id, request number, operation and command code.
func TestPingRequestGolden(t *testing.T) {
	client := Uint128{Lo: 0x0102030405060708, Hi: 0x1112131415161718}
	var want [HeaderSize]byte
	copy(want[48:], []byte{0x00, 0x01, 0x00, 0x00})
	want[60] = 0x05
	copy(want[128:], []byte{8, 7, 6, 5, 4, 3, 2, 1, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11})
	copy(want[168:], []byte{1, 0, 0, 0, 0, 0, 0, 0})
	want[176] = 0x02
	copy(want[196:], []byte{1, 0, 0, 0})

	h := RequestHeader{FrameHeader: FrameHeader{Size: HeaderSize}, Client: client, Request: 1,
		Operation: OpNonReplicated, Code: CmdPing}
	var got [HeaderSize]byte
	for i := range got {
		got[i] = 0xAA // Encode must clear every reserved byte
	}
	h.Encode(&got)
	if got != want {
		t.Fatalf("ping request:\n got %x\nwant %x", got, want)
	}
	var back RequestHeader
	if err := back.Decode(got[:]); err != nil {
		t.Fatal(err)
	}
	h.Command = CommandRequest
	if back != h {
		t.Fatalf("decode: got %+v want %+v", back, h)
	}
	if err := back.Validate(); err != nil {
		t.Fatalf("ping before login must validate: %v", err)
	}
}

func TestPingReplyGolden(t *testing.T) {
	req := RequestHeader{FrameHeader: FrameHeader{Size: HeaderSize}, Client: Uint128{Lo: 9}, Request: 1,
		Operation: OpNonReplicated, Code: CmdPing}
	rep := ReplyTo(&req, OK)
	var got [HeaderSize]byte
	rep.Encode(&got)
	var want [HeaderSize]byte
	copy(want[48:], []byte{0x00, 0x01, 0x00, 0x00})
	want[60] = 0x08
	want[160] = 9 // client echo at 160
	copy(want[200:], []byte{1, 0, 0, 0, 0, 0, 0, 0})
	want[208] = 0x02
	if got != want {
		t.Fatalf("ping reply:\n got %x\nwant %x", got, want)
	}
}

func TestHeaderOffsets(t *testing.T) {
	rep := ReplyHeader{FrameHeader: FrameHeader{Cluster: Uint128{Lo: 0xC1}, Size: 300, View: 0x56, Release: 0x57, Command: CommandReply, Replica: 3},
		RequestChecksum: Uint128{Lo: 0xA0}, Context: Uint128{Lo: 0xA1}, Client: Uint128{Lo: 0xA2, Hi: 0xA3},
		Op: 0xB0, Commit: 0xB1, Timestamp: 0xB2, Request: 0xB3, Operation: OpCreateTopic, Status: TopicNameAlreadyExists}
	var b [HeaderSize]byte
	rep.Encode(&b)
	checks := []struct {
		off  int
		size int
		want uint64
	}{
		{32, 8, 0xC1}, {48, 4, 300}, {52, 4, 0x56}, {56, 4, 0x57}, {60, 1, 8}, {61, 1, 3},
		{128, 8, 0xA0}, {144, 8, 0xA1}, {160, 8, 0xA2}, {168, 8, 0xA3}, {176, 8, 0xB0}, {184, 8, 0xB1},
		{192, 8, 0xB2}, {200, 8, 0xB3}, {208, 1, 132}, {216, 4, 2013},
	}
	for _, c := range checks {
		var got uint64
		switch c.size {
		case 1:
			got = uint64(b[c.off])
		case 4:
			got = uint64(binary.LittleEndian.Uint32(b[c.off:]))
		case 8:
			got = binary.LittleEndian.Uint64(b[c.off:])
		}
		if got != c.want {
			t.Errorf("reply offset %d: got %#x want %#x", c.off, got, c.want)
		}
	}
	var back ReplyHeader
	if err := back.Decode(b[:]); err != nil || back != rep {
		t.Fatalf("reply round trip: %v\n got %+v\nwant %+v", err, back, rep)
	}

	ev := EvictionHeader{Client: Uint128{Lo: 5}, ServerProtocolVersion: ProtocolVersion,
		ServerProtocolVersionMin: MinCompatibleVersion(ProtocolVersion), Reason: EvictIncompatibleProtocol}
	ev.Encode(&b)
	if b[60] != 13 || binary.LittleEndian.Uint32(b[48:]) != 256 || b[255] != 14 ||
		binary.LittleEndian.Uint32(b[144:]) != 11264 || binary.LittleEndian.Uint32(b[148:]) != 11264 || b[128] != 5 {
		t.Fatalf("eviction layout wrong: %x", b)
	}
	var evBack EvictionHeader
	if err := evBack.Decode(b[:]); err != nil {
		t.Fatal(err)
	}
	if evBack.Code() != IncompatibleProtocolVersion {
		t.Fatalf("eviction code %v", evBack.Code())
	}
	evBack.ServerProtocolVersion = 0
	if evBack.Code() != Unauthenticated {
		t.Fatalf("eviction with empty window: %v", evBack.Code())
	}
	// A header of one kind must not decode as another.
	if err := back.Decode(b[:]); !errors.Is(err, InvalidFormat) {
		t.Fatalf("eviction decoded as reply: %v", err)
	}
}

func TestRequestHeaderValidate(t *testing.T) {
	ok := RequestHeader{Client: Uint128{Lo: 1}, Operation: OpCreateStream, Session: 3, Request: 2}
	cases := []struct {
		name string
		mod  func(*RequestHeader)
		good bool
	}{
		{"metadata", func(*RequestHeader) {}, true},
		{"zero client", func(h *RequestHeader) { h.Client = Uint128{} }, false},
		{"reserved op", func(h *RequestHeader) { h.Operation = 0 }, false},
		{"undefined op", func(h *RequestHeader) { h.Operation = 99 }, false},
		{"internal op", func(h *RequestHeader) { h.Operation = OpTruncatePartition }, false},
		{"register", func(h *RequestHeader) { h.Operation, h.Session, h.Request = OpRegister, 0, 0 }, true},
		{"register with session", func(h *RequestHeader) { h.Operation, h.Request = OpRegister, 0 }, false},
		{"register with request", func(h *RequestHeader) { h.Operation, h.Session = OpRegister, 0 }, false},
		{"nr without session", func(h *RequestHeader) { h.Operation, h.Session = OpNonReplicated, 0 }, true},
		{"write without session", func(h *RequestHeader) { h.Session = 0 }, false},
		{"write without request", func(h *RequestHeader) { h.Request = 0 }, false},
	}
	for _, c := range cases {
		h := ok
		c.mod(&h)
		if err := h.Validate(); (err == nil) != c.good {
			t.Errorf("%s: Validate() = %v, want ok=%v", c.name, err, c.good)
		}
	}
}

func frameBytes(size uint32, command uint8, bodyLen int) []byte {
	b := make([]byte, HeaderSize+bodyLen)
	binary.LittleEndian.PutUint32(b[48:], size)
	b[60] = command
	for i := HeaderSize; i < len(b); i++ {
		b[i] = byte(i)
	}
	return b
}

func TestReadFrame(t *testing.T) {
	two := append(frameBytes(300, CommandReply, 44), frameBytes(256, CommandEviction, 0)...)
	r := bytes.NewReader(two)
	buf := make([]byte, 0, 16)
	f1, err := ReadFrame(r, buf)
	if err != nil || len(f1) != 300 || !bytes.Equal(f1, two[:300]) {
		t.Fatalf("first frame: len %d err %v", len(f1), err)
	}
	f2, err := ReadFrame(r, f1)
	if err != nil || len(f2) != 256 || FrameCommand(f2) != CommandEviction {
		t.Fatalf("second frame: len %d err %v", len(f2), err)
	}
	if _, err := ReadFrame(r, f2); err != io.EOF {
		t.Fatalf("clean end: %v", err)
	}

	bad := []struct {
		name string
		in   []byte
		want error
	}{
		{"size below header", frameBytes(255, CommandReply, 0), ErrFrame},
		{"size above max", frameBytes(MaxFrameSize+1, CommandReply, 0), ErrFrame},
		{"command above 29", frameBytes(256, 30, 0), ErrFrame},
		{"short header", frameBytes(256, 8, 0)[:100], io.ErrUnexpectedEOF},
		{"short body", frameBytes(400, 8, 10), io.ErrUnexpectedEOF},
	}
	for _, c := range bad {
		_, err := ReadFrame(bytes.NewReader(c.in), nil)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v want %v", c.name, err, c.want)
		}
	}
	if _, err := ReadFrame(bytes.NewReader(frameBytes(256, 30, 0)), nil); !errors.Is(err, InvalidCommand) {
		t.Errorf("framing error must match InvalidCommand: %v", err)
	}
	// Exactly the maximum size is accepted.
	max := frameBytes(MaxFrameSize, CommandRequest, MaxFrameSize-HeaderSize)
	if f, err := ReadFrame(bytes.NewReader(max), nil); err != nil || len(f) != MaxFrameSize {
		t.Fatalf("max frame: %v", err)
	}
}

func TestPutFrameSize(t *testing.T) {
	var h [HeaderSize]byte
	rep := ReplyHeader{Operation: OpNonReplicated}
	rep.Encode(&h)
	frame := append(h[:], 1, 2, 3)
	PutFrameSize(frame)
	if binary.LittleEndian.Uint32(frame[48:]) != 259 {
		t.Fatal("size not stored")
	}
}

func TestAppendFrames(t *testing.T) {
	req := RequestHeader{Client: Uint128{Lo: 1}, Request: 2, Operation: OpCreateStream, Session: 3}
	body := (&CreateStream{Name: "s"}).AppendTo(nil)
	frame := AppendRequest([]byte("pre"), req, body)
	frame = frame[3:]
	got, err := ReadFrame(bytes.NewReader(frame), nil)
	if err != nil || len(got) != HeaderSize+len(body) {
		t.Fatalf("request frame: %v", err)
	}
	var back RequestHeader
	if err := back.Decode(got); err != nil || back.Operation != OpCreateStream || back.Size != uint32(len(got)) {
		t.Fatalf("%+v %v", back, err)
	}
	rep := AppendReply(nil, ReplyTo(&back, OK), AppendResultOK(nil))
	var rh ReplyHeader
	if err := rh.Decode(rep); err != nil || rh.Size != 260 || rh.Request != 2 || len(rep) != 260 {
		t.Fatalf("reply frame %+v %v", rh, err)
	}
	ev := AppendEviction(nil, EvictionHeader{Client: Uint128{Lo: 1}, Reason: EvictNoSession})
	var eh EvictionHeader
	if err := eh.Decode(ev); err != nil || len(ev) != HeaderSize || eh.Code() != Unauthenticated {
		t.Fatalf("eviction frame %+v %v", eh, err)
	}
	buf := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(50, func() { buf = AppendReply(buf[:0], rh, body) }); n != 0 {
		t.Errorf("AppendReply allocates %v times", n)
	}
}
