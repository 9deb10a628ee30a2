package store

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

// startServer runs a server on a free loopback port in dir and stops it at
// the end of the test.
func startServer(t testing.TB, dir string, tweak func(*Config)) *Server {
	t.Helper()
	cfg := Config{
		Listen:  "127.0.0.1:0",
		DataDir: dir,
		Fsync:   partlog.FsyncNever,
		Logger:  slog.New(slog.DiscardHandler),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		if n := s.panics.Load(); n != 0 {
			t.Errorf("%d connection handlers panicked", n)
		}
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// rawClient speaks the protocol frame by frame, numbering requests the way
// the official Go client does (protocol 4.3).
type rawClient struct {
	t       testing.TB
	nc      net.Conn
	client  wire.Uint128
	session uint64
	counter uint64
	buf     []byte
}

type reply struct {
	evicted bool
	reason  wire.EvictionReason
	status  wire.Code
	op      wire.Operation
	request uint64
	body    []byte // result section stripped for framed operations
}

var clientSeq uint64

func dial(t testing.TB, s *Server) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	clientSeq++
	return &rawClient{t: t, nc: nc, client: wire.Uint128{Lo: clientSeq, Hi: 0xabc}, counter: 1}
}

func (c *rawClient) writeFrame(h wire.RequestHeader, body []byte) error {
	h.Client = c.client
	var hb [wire.HeaderSize]byte
	h.Size = uint32(wire.HeaderSize + len(body))
	h.Encode(&hb)
	frame := append(hb[:], body...)
	_ = c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.nc.Write(frame)
	return err
}

func (c *rawClient) readReply() (reply, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	frame, err := wire.ReadFrame(c.nc, c.buf)
	if err != nil {
		return reply{}, err
	}
	c.buf = frame[:0]
	switch wire.FrameCommand(frame) {
	case wire.CommandEviction:
		var eh wire.EvictionHeader
		if err := eh.Decode(frame); err != nil {
			return reply{}, err
		}
		return reply{evicted: true, reason: eh.Reason}, nil
	case wire.CommandReply:
		var rh wire.ReplyHeader
		if err := rh.Decode(frame); err != nil {
			return reply{}, err
		}
		body := append([]byte(nil), frame[wire.HeaderSize:]...)
		r := reply{status: rh.Status, op: rh.Operation, request: rh.Request, body: body}
		if rh.Status == wire.OK && rh.Operation.ReplyFramed() {
			stripped, err := wire.StripResult(body)
			if err != nil {
				var code wire.Code
				if errors.As(err, &code) {
					r.status = code
					r.body = nil
					return r, nil
				}
				return reply{}, err
			}
			r.body = stripped
		}
		return r, nil
	}
	return reply{}, errors.New("unexpected frame command")
}

// do sends cmd with the header fields the Go client would use and returns
// the answer.
func (c *rawClient) do(cmd wire.Command, body []byte) reply {
	c.t.Helper()
	r, err := c.try(cmd, body)
	if err != nil {
		c.t.Fatalf("%v: %v", cmd, err)
	}
	return r
}

func (c *rawClient) try(cmd wire.Command, body []byte) (reply, error) {
	op := cmd.Operation()
	if op == wire.OpReserved {
		// Unknown and legacy codes travel on the read path, as the Go
		// client's raw requests do.
		op = wire.OpNonReplicated
	}
	h := wire.RequestHeader{Operation: op, Session: c.session}
	switch {
	case op == wire.OpRegister:
		h.Session = 0
	case op == wire.OpNonReplicated:
		h.Code = cmd
		h.Request = c.counter
	case op.Partition():
		h.Request = c.counter
	default:
		h.Request = c.counter
		c.counter++
	}
	if err := c.writeFrame(h, body); err != nil {
		return reply{}, err
	}
	r, err := c.readReply()
	if err != nil {
		return r, err
	}
	if !r.evicted && r.request != h.Request {
		return r, errors.New("reply does not echo the request number")
	}
	return r, nil
}

// ok fails the test unless r is a successful reply.
func ok(t testing.TB, r reply) []byte {
	t.Helper()
	if r.evicted {
		t.Fatalf("evicted with reason %v", r.reason)
	}
	if r.status != wire.OK {
		t.Fatalf("status %d (%v)", uint32(r.status), r.status)
	}
	return r.body
}

func wantStatus(t testing.TB, r reply, want wire.Code) {
	t.Helper()
	if r.evicted {
		t.Fatalf("evicted with reason %v, want status %v", r.reason, want)
	}
	if r.status != want {
		t.Fatalf("status %d (%v), want %d (%v)", uint32(r.status), r.status, uint32(want), want)
	}
}

func wantEviction(t testing.TB, r reply, want wire.EvictionReason) {
	t.Helper()
	if !r.evicted || r.reason != want {
		t.Fatalf("got evicted=%v reason %v status %v, want eviction %v", r.evicted, r.reason, r.status, want)
	}
}

func (c *rawClient) login(user, pass string) reply {
	c.t.Helper()
	body := (&wire.PasswordLogin{Version: wire.OurClientVersion(), Username: user, Password: pass}).AppendTo(nil)
	r := c.do(wire.CmdLoginRegister, body)
	if !r.evicted && r.status == wire.OK {
		var lr wire.LoginReply
		if err := lr.Decode(r.body); err != nil {
			c.t.Fatalf("login reply: %v", err)
		}
		if lr.Session == 0 {
			c.t.Fatalf("login returned session 0")
		}
		c.session = lr.Session
	}
	return r
}

func loggedIn(t testing.TB, s *Server) *rawClient {
	t.Helper()
	c := dial(t, s)
	ok(t, c.login("iggy", "iggy"))
	return c
}

// expectClosed waits for the server to close c's connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	for {
		_, err := c.nc.Read(b[:])
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
			return
		}
		if err != nil {
			c.t.Fatalf("connection not closed: %v", err)
		}
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

func batchOf(t testing.TB, payloads ...string) []byte {
	t.Helper()
	var b message.Builder
	b.Reset()
	for i, p := range payloads {
		b.Add(message.MakeID(uint64(i+1), 7), uint64(time.Now().UnixMicro()), []byte(p), nil)
	}
	batch, err := b.Finish()
	if err != nil {
		t.Fatalf("build batch: %v", err)
	}
	return append([]byte(nil), batch...)
}

func sendBody(stream, topic wire.Identifier, part wire.Partitioning, batch []byte) []byte {
	q := wire.SendMessages{Stream: stream, Topic: topic, Partitioning: part,
		MessagesCount: binary.LittleEndian.Uint32(batch[48:]), Batch: batch}
	return q.AppendTo(nil)
}

// polled decodes a poll reply into its prefix and message payloads.
func polled(t testing.TB, body []byte) (wire.PollReply, []string, []uint64) {
	t.Helper()
	var pr wire.PollReply
	if err := pr.Decode(body); err != nil {
		t.Fatalf("poll reply: %v", err)
	}
	var payloads []string
	var offsets []uint64
	recs := message.Records(pr.Batches)
	for rec, more := recs.Next(); more; rec, more = recs.Next() {
		h, err := message.ParseBatchHeader(rec)
		if err != nil {
			t.Fatalf("batch header: %v", err)
		}
		if err := message.Each(rec, func(f message.Frame) bool {
			payloads = append(payloads, string(f.Payload))
			offsets = append(offsets, h.BaseOffset+uint64(f.OffsetDelta))
			return true
		}); err != nil {
			t.Fatalf("frames: %v", err)
		}
	}
	if err := recs.Err(); err != nil {
		t.Fatalf("records: %v", err)
	}
	if uint32(len(payloads)) != pr.MessagesCount {
		t.Fatalf("reply says %d messages, records hold %d", pr.MessagesCount, len(payloads))
	}
	return pr, payloads, offsets
}

func mustCreateStream(t testing.TB, c *rawClient, name string) wire.StreamDetails {
	t.Helper()
	body := ok(t, c.do(wire.CmdCreateStream, (&wire.CreateStream{Name: name}).AppendTo(nil)))
	var d wire.StreamDetails
	if err := d.Decode(body); err != nil {
		t.Fatalf("stream details: %v", err)
	}
	return d
}

func mustCreateTopic(t testing.TB, c *rawClient, stream wire.Identifier, name string, parts uint32) wire.TopicDetails {
	t.Helper()
	body := ok(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: stream, PartitionsCount: parts, Name: name}).AppendTo(nil)))
	var d wire.TopicDetails
	if err := d.Decode(body); err != nil {
		t.Fatalf("topic details: %v", err)
	}
	return d
}
