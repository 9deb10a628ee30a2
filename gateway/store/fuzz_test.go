package store

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// fuzzFrames returns seed inputs: whole request sequences covering the
// command families, so the fuzzer starts from frames the server accepts.
func fuzzFrames(t testing.TB) [][]byte {
	req := func(cmd wire.Command, body []byte) []byte {
		op := cmd.Operation()
		if op == wire.OpReserved {
			op = wire.OpNonReplicated
		}
		h := wire.RequestHeader{Operation: op, Request: 1, Session: 1}
		if op == wire.OpNonReplicated {
			h.Code = cmd
		}
		if op == wire.OpRegister {
			h.Request, h.Session = 0, 0
		}
		return requestFrame(h, body)
	}
	cat := func(frames ...[]byte) []byte {
		var out []byte
		for _, f := range frames {
			out = append(out, f...)
		}
		return out
	}
	batch := batchOf(t, "payload-1", "payload-2")
	group := wire.Consumer{Kind: wire.ConsumerKindGroup, ID: wire.NumericID(0)}
	return [][]byte{
		req(wire.CmdPing, nil),
		cat(req(wire.CmdGetStreams, nil), req(wire.CmdGetStream, (&wire.StreamRequest{Stream: sid0}).AppendTo(nil))),
		req(wire.CmdLoginRegister, (&wire.PasswordLogin{Version: wire.OurClientVersion(), Username: "iggy", Password: "iggy"}).AppendTo(nil)),
		req(wire.CmdCreateStream, (&wire.CreateStream{Name: "fz"}).AppendTo(nil)),
		req(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid0, PartitionsCount: 2, Name: "fz",
			Options: wire.AppendTLV(nil, wire.StringEntry(wire.OptSegmentSize, "1 MiB"))}).AppendTo(nil)),
		req(wire.CmdSendMessages, sendBody(sid0, tid0, wire.PartitionIDPartitioning(0), batch)),
		req(wire.CmdPollMessages, (&wire.PollMessages{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(0),
			Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 10, AutoCommit: true}).AppendTo(nil)),
		cat(req(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)), req(wire.CmdSyncConsumerGroup, group0.AppendTo(nil)),
			req(wire.CmdPollMessages, (&wire.PollMessages{Consumer: group, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(1),
				Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 10}).AppendTo(nil)),
			req(wire.CmdLeaveConsumerGroup, group0.AppendTo(nil))),
		req(wire.CmdStoreConsumerOffset, (&wire.StoreConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0,
			Partition: wire.SomePartition(0), Offset: 1}).AppendTo(nil)),
		req(wire.CmdCreateUser, (&wire.CreateUser{Username: "fuzzer", Password: "pw123", Status: 1,
			Permissions: &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: 0, Topics: []wire.TopicPermissions{{TopicID: 1}}}}}}).AppendTo(nil)),
		req(wire.CmdCreatePersonalAccessToken, (&wire.CreatePersonalAccessToken{Name: "fuzz-token"}).AppendTo(nil)),
		req(wire.CmdGetSnapshot, []byte{2, 1, 1}),
		req(wire.CmdDeleteSegments, (&wire.DeleteSegments{Stream: sid0, Topic: tid0, SegmentsCount: 1}).AppendTo(nil)),
		req(wire.Command(60000), []byte("garbage")),
		[]byte("not a frame at all"),
	}
}

// bindSession writes session into every frame of input that carries a
// non-zero session, so the fuzzer's frames reach the handlers behind login.
func bindSession(input []byte, session uint64) []byte {
	out := append([]byte(nil), input...)
	for off := 0; len(out)-off >= wire.HeaderSize; {
		size := int(binary.LittleEndian.Uint32(out[off+48:]))
		if size < wire.HeaderSize || size > len(out)-off {
			break
		}
		if binary.LittleEndian.Uint64(out[off+184:]) != 0 {
			binary.LittleEndian.PutUint64(out[off+184:], session)
		}
		off += size
	}
	return out
}

// FuzzServeFrame feeds arbitrary bytes to one logged-in connection of an
// in-process server. The server must not panic, and another connection must
// still be served afterwards.
func FuzzServeFrame(f *testing.F) {
	for _, seed := range fuzzFrames(f) {
		f.Add(seed)
	}
	s := startServer(f, f.TempDir(), func(c *Config) { c.HeartbeatInterval = time.Hour })
	admin := loggedIn(f, s)
	mustCreateStream(f, admin, "s")
	mustCreateTopic(f, admin, sid0, "t", 2)
	ok(f, admin.do(wire.CmdCreateConsumerGroup, (&wire.CreateConsumerGroup{Stream: sid0, Topic: tid0, Name: "g"}).AppendTo(nil)))

	f.Fuzz(func(t *testing.T, input []byte) {
		admin.t = t
		client, server := net.Pipe()
		c := s.startConn(server)
		if c == nil {
			t.Fatal("server is closing")
		}
		drained := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, client)
			close(drained)
		}()
		_ = client.SetDeadline(time.Now().Add(10 * time.Second))
		// Bind a root session directly: a password login per input would
		// spend most of the fuzzing time in PBKDF2.
		s.mu.Lock()
		s.nextSession++
		number := s.nextSession
		c.sess = &session{number: number, client: wire.Uint128{Lo: 7}}
		s.mu.Unlock()
		_, _ = client.Write(bindSession(input, number))
		_ = client.Close()
		<-drained

		ok(t, admin.do(wire.CmdPing, nil))
		if n := s.panics.Load(); n != 0 {
			t.Fatalf("%d connection handlers panicked", n)
		}
	})
}
