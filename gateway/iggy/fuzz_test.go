package iggy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// replayConn is a net.Conn whose peer "sends" a fixed byte stream and
// swallows whatever is written.
type replayConn struct{ r *bytes.Reader }

func (c *replayConn) Read(p []byte) (int, error)       { return c.r.Read(p) }
func (c *replayConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *replayConn) Close() error                     { return nil }
func (c *replayConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *replayConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *replayConn) SetDeadline(time.Time) error      { return nil }
func (c *replayConn) SetReadDeadline(time.Time) error  { return nil }
func (c *replayConn) SetWriteDeadline(time.Time) error { return nil }

// oneConn runs calls on a single connection, for tests of reply handling.
type oneConn struct{ cn *conn }

func (o *oneConn) config() *Config { return &Config{} }

func (o *oneConn) do(ctx context.Context, cl *call) ([]byte, func(), error) {
	body, err := o.cn.exchange(ctx, cl, time.Second)
	if err != nil {
		return nil, nil, err
	}
	return body, func() {}, nil
}

func replayAPI(stream []byte) (api, *conn) {
	rc := &replayConn{r: bytes.NewReader(stream)}
	cn := &conn{nc: rc, br: bufio.NewReader(rc), addr: "fuzz", counter: 1, session: 1}
	cn.client = wire.Uint128{Lo: 1}
	return api{d: &oneConn{cn}}, cn
}

// replyFrame wraps body in a reply header answering request 1.
func replyFrame(op wire.Operation, status wire.Code, body []byte) []byte {
	h := wire.ReplyHeader{Request: 1, Operation: op, Status: status}
	h.Size = uint32(wire.HeaderSize + len(body))
	var out [wire.HeaderSize]byte
	h.Encode(&out)
	return append(out[:], body...)
}

// exercise runs the method picked by sel against whatever reply arrives.
func exercise(ctx context.Context, a api, cn *conn, sel uint8) {
	s, t, g := wire.NumericID(1), wire.NamedID("t"), wire.NumericID(0)
	switch sel % 26 {
	case 0:
		_ = a.Ping(ctx)
	case 1:
		_, _ = a.GetStream(ctx, s)
	case 2:
		_, _ = a.GetStreams(ctx)
	case 3:
		_, _ = a.CreateStream(ctx, "s")
	case 4:
		_, _ = a.GetTopic(ctx, s, t)
	case 5:
		_, _ = a.GetTopics(ctx, s)
	case 6:
		_, _ = a.CreateTopic(ctx, s, "t", 2, TopicOptions{Compression: wire.CompressionGzip})
	case 7:
		if p, err := a.Poll(ctx, PollRequest{Stream: s, Topic: t, Count: 10}); err == nil {
			p.Release()
		}
	case 8:
		_, _ = a.SendMessages(ctx, s, t, 0, []Message{{Payload: []byte("x")}})
	case 9:
		_, _, _ = a.GetOffset(ctx, wire.Consumer{Kind: wire.ConsumerKindSingle, ID: g}, s, t, 0)
	case 10:
		_, _ = a.GetConsumerGroup(ctx, s, t, g)
	case 11:
		_, _ = a.GetConsumerGroups(ctx, s, t)
	case 12:
		_, _ = a.SyncConsumerGroup(ctx, s, t, g)
	case 13:
		_, _ = a.Me(ctx)
	case 14:
		_, _ = a.GetClients(ctx)
	case 15:
		_, _ = a.GetUser(ctx, g)
	case 16:
		_, _ = a.GetUsers(ctx)
	case 17:
		_, _ = a.CreateUser(ctx, "user", "pass", wire.UserStatusActive, nil)
	case 18:
		_, _ = a.GetTokens(ctx)
	case 19:
		_, _ = a.CreateToken(ctx, "token", 0)
	case 20:
		_, _ = a.Stats(ctx)
	case 21:
		_, _ = a.ClusterMetadata(ctx)
	case 22:
		_, _ = a.DescribeOptions(ctx, wire.ScopeTopic)
	case 23:
		_, _ = a.Snapshot(ctx, 1, 1)
	case 24:
		cn.session = 0
		_, _ = cn.loginPassword(ctx, "iggy", "iggy", time.Second)
	case 25:
		if body, err := cn.exchange(ctx, &call{cmd: wire.CmdGetClusterMetadata}, time.Second); err == nil {
			_, _ = decodeNodes(body)
		}
	}
}

// FuzzReply feeds arbitrary server bytes to every reply decoder of the
// client. Nothing may panic; the reply must be rejected or decoded. fix
// patches the size and request echo so that the fuzzer reaches the bodies.
func FuzzReply(f *testing.F) {
	for _, seed := range replySeeds() {
		f.Add(seed.sel, true, seed.frame)
	}
	f.Add(uint8(0), false, []byte("short"))
	f.Fuzz(func(t *testing.T, sel uint8, fix bool, stream []byte) {
		if fix && len(stream) >= wire.HeaderSize {
			stream = append([]byte(nil), stream...)
			binary.LittleEndian.PutUint32(stream[48:], uint32(len(stream)))
			binary.LittleEndian.PutUint64(stream[200:], 1)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		a, cn := replayAPI(stream)
		exercise(ctx, a, cn, sel)
	})
}

type replySeed struct {
	sel   uint8
	frame []byte
}

func replySeeds() []replySeed {
	nr := wire.OpNonReplicated
	framed := func(op wire.Operation, payload []byte) []byte {
		return replyFrame(op, wire.OK, append(wire.AppendResultOK(nil), payload...))
	}
	stream := wire.StreamDetails{Stream: wire.Stream{ID: 1, Name: "s"}}
	topic := wire.TopicDetails{Topic: wire.Topic{ID: 0, Name: "t", PartitionsCount: 1}, Partitions: []wire.Partition{{ID: 0}}}
	var b message.Builder
	b.Add([16]byte{1}, 1, []byte("payload"), nil)
	batch, _ := b.Finish()
	poll := wire.AppendPollPrefix(nil, wire.PollReplyPrefix{PartitionID: 0, CurrentOffset: 0, MessagesCount: 1})
	poll = append(poll, batch...)
	login := wire.LoginReply{UserID: 0, Session: 7, ServerProtocolVersion: wire.ProtocolVersion, ServerVersion: "x"}
	meta := wire.SingleNodeMetadata("127.0.0.1", 8090)
	group := wire.ConsumerGroupDetails{ConsumerGroup: wire.ConsumerGroup{ID: 0, Name: "g"}, Members: []wire.GroupMember{{ID: 0, Partitions: []uint32{0, 1}}}}
	assignment := wire.GroupAssignment{Generation: 3, Partitions: []uint32{1}}
	confirm := wire.AppendSendConfirmation(nil, wire.SendConfirmation{StreamID: 1, BaseOffset: 5})
	return []replySeed{
		{0, replyFrame(nr, wire.OK, nil)},
		{1, replyFrame(nr, wire.OK, stream.AppendTo(nil))},
		{1, replyFrame(nr, wire.StreamIDNotFound, nil)},
		{3, framed(wire.OpCreateStream, stream.AppendTo(nil))},
		{3, replyFrame(wire.OpCreateStream, wire.OK, wire.AppendResultError(nil, wire.StreamNameAlreadyExists))},
		{4, replyFrame(nr, wire.OK, topic.AppendTo(nil))},
		{6, framed(wire.OpCreateTopic, topic.AppendTo(nil))},
		{7, replyFrame(nr, wire.OK, poll)},
		{8, replyFrame(wire.OpSendMessages, wire.OK, confirm)},
		{10, replyFrame(nr, wire.OK, group.AppendTo(nil))},
		{12, replyFrame(nr, wire.OK, assignment.AppendTo(nil))},
		{21, replyFrame(nr, wire.OK, meta.AppendTo(nil))},
		{24, framed(wire.OpRegister, login.AppendTo(nil))},
		{25, replyFrame(nr, wire.OK, meta.AppendTo(nil))},
	}
}

// TestReplySeedsDecode keeps the fuzz seeds honest: each is a valid reply
// its method accepts.
func TestReplySeedsDecode(t *testing.T) {
	ctx := context.Background()
	for i, s := range replySeeds() {
		a, _ := replayAPI(s.frame)
		var err error
		switch s.sel {
		case 1:
			_, err = a.GetStream(ctx, wire.NumericID(1))
			if i == 2 {
				if !isCode(err, wire.StreamIDNotFound) {
					t.Fatalf("seed %d: %v", i, err)
				}
				continue
			}
		case 3:
			_, err = a.CreateStream(ctx, "s")
			if i == 4 {
				if !isCode(err, wire.StreamNameAlreadyExists) {
					t.Fatalf("seed %d: %v", i, err)
				}
				continue
			}
		case 7:
			var p *Polled
			p, err = a.Poll(ctx, PollRequest{Stream: wire.NumericID(1), Topic: wire.NumericID(0), Count: 1})
			if err == nil && p.Count != 1 {
				t.Fatalf("seed %d: poll count %d", i, p.Count)
			}
		case 8:
			var base uint64
			base, err = a.SendMessages(ctx, wire.NumericID(1), wire.NumericID(0), 0, []Message{{Payload: []byte("x")}})
			if err == nil && base != 5 {
				t.Fatalf("seed %d: base offset %d", i, base)
			}
		case 12:
			var as *wire.GroupAssignment
			as, err = a.SyncConsumerGroup(ctx, wire.NumericID(1), wire.NumericID(0), wire.NumericID(0))
			if err == nil && as.Generation != 3 {
				t.Fatalf("seed %d: generation %d", i, as.Generation)
			}
		default:
			continue
		}
		if err != nil {
			t.Fatalf("seed %d (method %d): %v", i, s.sel, err)
		}
	}
}

func TestProtocolViolationsDropTheConnection(t *testing.T) {
	ctx := context.Background()
	bad := replyFrame(wire.OpNonReplicated, wire.OK, nil)
	binary.LittleEndian.PutUint64(bad[200:], 9) // wrong request echo
	a, cn := replayAPI(bad)
	if err := a.Ping(ctx); !errors.Is(err, ErrProtocol) || !cn.broken {
		t.Fatalf("wrong echo: err %v, broken %v", err, cn.broken)
	}
	huge := replyFrame(wire.OpNonReplicated, wire.OK, nil)
	binary.LittleEndian.PutUint32(huge[48:], wire.MaxFrameSize+1)
	a, cn = replayAPI(huge)
	if err := a.Ping(ctx); !errors.Is(err, ErrProtocol) || !cn.broken {
		t.Fatalf("oversized frame: err %v, broken %v", err, cn.broken)
	}
	a, _ = replayAPI(replyFrame(wire.OpSendMessages, wire.OK, nil))
	if _, err := a.SendMessages(ctx, wire.NumericID(1), wire.NumericID(0), 0, []Message{{Payload: []byte("x")}}); !errors.Is(err, wire.InvalidCommand) {
		t.Fatalf("empty send reply: %v", err)
	}
	// Poll reply claiming more messages than its records hold.
	var b message.Builder
	b.Add([16]byte{1}, 1, []byte("p"), nil)
	batch, _ := b.Finish()
	body := append(wire.AppendPollPrefix(nil, wire.PollReplyPrefix{MessagesCount: 2}), batch...)
	a, _ = replayAPI(replyFrame(wire.OpNonReplicated, wire.OK, body))
	if _, err := a.Poll(ctx, PollRequest{Stream: wire.NumericID(1), Topic: wire.NumericID(0), Count: 2}); !errors.Is(err, ErrProtocol) {
		t.Fatalf("poll count mismatch: %v", err)
	}
}
