package store

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// requestFrame builds a whole request frame for raw writes.
func requestFrame(h wire.RequestHeader, body []byte) []byte {
	if h.Client.IsZero() {
		h.Client = wire.Uint128{Lo: 99}
	}
	h.Size = uint32(wire.HeaderSize + len(body))
	var hb [wire.HeaderSize]byte
	h.Encode(&hb)
	return append(hb[:], body...)
}

func TestMalformedFramesCloseOnlyTheirConnection(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	bystander := loggedIn(t, s)
	mustCreateStream(t, bystander, "s")

	ping := requestFrame(wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, nil)
	oversized := append([]byte(nil), ping...)
	binary.LittleEndian.PutUint32(oversized[48:], wire.MaxFrameSize+1)
	undersized := append([]byte(nil), ping...)
	binary.LittleEndian.PutUint32(undersized[48:], 100)
	badCommand := append([]byte(nil), ping...)
	badCommand[60] = 200
	replyCommand := append([]byte(nil), ping...)
	replyCommand[60] = wire.CommandReply

	closing := []struct {
		name  string
		bytes []byte
	}{
		{"oversized size field", oversized},
		{"size below a header", undersized},
		{"command byte above 29", badCommand},
		{"not a request", replyCommand},
		{"truncated header", ping[:100]},
		{"truncated body", requestFrame(wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPing, Request: 1}, make([]byte, 50))[:280]},
	}
	for _, tc := range closing {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, s)
			if _, err := c.nc.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.name == "truncated header" || tc.name == "truncated body" {
				// The server waits for the rest; the client giving up ends it.
				_ = c.nc.Close()
			} else {
				c.expectClosed()
			}
			ok(t, bystander.do(wire.CmdPing, nil))
			ok(t, bystander.do(wire.CmdGetStreams, nil))
		})
	}

	// Bodies that do not decode are refused with a status; the connection
	// stays open.
	c := loggedIn(t, s)
	badID := []byte{3, 4, 0, 0, 0, 0} // identifier kind 3 does not exist
	wantStatus(t, c.do(wire.CmdGetStream, badID), wire.InvalidCommand)
	wantStatus(t, c.do(wire.CmdCreateTopic, []byte{1, 4, 0}), wire.InvalidCommand)
	wantStatus(t, c.do(wire.CmdCreateStream, []byte{0xff, 'a'}), wire.InvalidCommand)
	wantStatus(t, c.do(wire.CmdJoinConsumerGroup, []byte{1, 4, 0, 0, 0, 0, 2, 0}), wire.InvalidCommand)
	ok(t, c.do(wire.CmdPing, nil))
	ok(t, bystander.do(wire.CmdPing, nil))
}
