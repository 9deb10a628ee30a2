package iggy

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// The request bodies the official Go SDK wrote for the inputs below are under
// wire/testdata/golden (see its README.md). This test drives the client's own
// methods with the same inputs against a fake server that records every
// request body and answers with the recorded reply bodies, so the bodies the
// client assembles itself (topic options, batches, acknowledgement levels,
// login shapes) are held to the SDK's bytes too.

const clientGoldenDir = "wire/testdata/golden"

func clientGolden(t *testing.T, name string) ([]byte, bool) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(clientGoldenDir, name))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b, true
}

func TestClientRequestsMatchGolden(t *testing.T) {
	f := newFakeServer(t, "")
	var mu sync.Mutex
	sent := map[wire.Command][][]byte{}
	clusterReply := false // the roster is answered only when asked for by the test
	commandOf := func(h *wire.RequestHeader, body []byte) wire.Command {
		cmd, _ := wire.CommandFor(h.Operation, uint32(h.Code))
		if h.Operation == wire.OpRegister {
			if shapes, err := wire.ParseRegister(body); err == nil && !shapes.HasPassword && shapes.HasToken {
				cmd = wire.CmdLoginRegisterWithPAT
			}
		}
		return cmd
	}
	f.observe = func(h *wire.RequestHeader, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		cmd := commandOf(h, body)
		sent[cmd] = append(sent[cmd], bytes.Clone(body))
	}
	f.register = func(body []byte) []byte {
		r, _ := clientGolden(t, wire.CmdLoginRegister.String()+".reply.hex")
		return r
	}
	f.handle = func(h *wire.RequestHeader, body []byte) ([]byte, wire.Code, bool) {
		cmd := commandOf(h, body)
		mu.Lock()
		roster := clusterReply
		mu.Unlock()
		if cmd == wire.CmdGetClusterMetadata && !roster {
			return nil, wire.FeatureUnavailable, true
		}
		if r, ok := clientGolden(t, cmd.String()+".reply.hex"); ok {
			return r, wire.OK, true
		}
		if h.Operation.ReplyFramed() {
			return wire.AppendResultOK(nil), wire.OK, true
		}
		return nil, wire.OK, true
	}

	ctx := testContext(t)
	c, err := Dial(ctx, Config{Addrs: []string{f.addr()}, Username: "alice", Password: "s3cr3t-pw", PoolSize: 1,
		TopicDurability: DurabilityServer}) // the recording creates its topic with the server's defaults
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if c.UserID() != 4 {
		t.Errorf("user id %d after login, want 4", c.UserID())
	}
	s, err := c.Session(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	stream, topic, group, user := wire.NumericID(7), wire.NamedID("orders"), wire.NumericID(3), wire.NumericID(5)
	single := wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID("worker-1")}
	perms := &wire.Permissions{
		Global: wire.GlobalPermissions{ReadServers: true, ReadUsers: true, ReadStreams: true, ManageTopics: true, PollMessages: true},
		Streams: []wire.StreamPermissions{{StreamID: 7, ManageStream: true, ReadTopics: true, SendMessages: true,
			Topics: []wire.TopicPermissions{{TopicID: 2, ReadTopic: true, PollMessages: true}}}},
	}
	id1 := [16]byte{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f}
	id2 := [16]byte{0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	get := func(what string) func(any, error) {
		return func(_ any, err error) { t.Helper(); must(what, err) }
	}

	must("ping", s.Ping(ctx))
	get("stats")(s.Stats(ctx))
	mu.Lock()
	clusterReply = true
	mu.Unlock()
	get("cluster metadata")(s.ClusterMetadata(ctx))
	mu.Lock()
	clusterReply = false
	mu.Unlock()
	get("describe options")(s.DescribeOptions(ctx, wire.ScopeTopic))
	get("me")(s.Me(ctx))
	get("client")(s.GetClient(ctx, 13))
	get("clients")(s.GetClients(ctx))
	get("user")(s.GetUser(ctx, wire.NamedID("alice")))
	get("users")(s.GetUsers(ctx))
	get("create user")(s.CreateUser(ctx, "alice", "hunter22", wire.UserStatusActive, perms))
	newName, inactive := "bobby", wire.UserStatusInactive
	must("update user", s.UpdateUser(ctx, user, &newName, &inactive))
	must("update permissions", s.UpdatePermissions(ctx, user, perms))
	must("change password", s.ChangePassword(ctx, user, "hunter22", "hunter33"))
	must("delete user", s.DeleteUser(ctx, user))
	get("tokens")(s.GetTokens(ctx))
	token, err := s.CreateToken(ctx, "ci-token", 0)
	must("create token", err)
	if token != "pat-0123456789abcdef" {
		t.Errorf("token %q", token)
	}
	must("delete token", s.DeleteToken(ctx, "ci-token"))

	base, err := s.SendMessages(ctx, stream, topic, 2, []Message{
		{ID: id1, Timestamp: time.UnixMicro(1767225600123456), Payload: []byte("first payload")},
		{ID: id2, Timestamp: time.UnixMicro(1767225600123999), Payload: []byte("second"),
			Headers: wire.AppendTLV(nil, wire.StringEntry("trace", "abc"))},
	})
	must("send", err)
	if base != 1000 {
		t.Errorf("send: base offset %d, want 1000", base)
	}
	p, err := s.Poll(ctx, PollRequest{Consumer: wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(1)},
		Stream: stream, Topic: topic, Partition: 2, Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 140},
		Count: 10, AutoCommit: true})
	must("poll", err)
	if p.PartitionID != 2 || p.CurrentOffset != 141 || p.Count != 2 {
		t.Errorf("poll: partition %d current %d count %d", p.PartitionID, p.CurrentOffset, p.Count)
	}
	p.Release()
	off, ok, err := s.GetOffset(ctx, wire.Consumer{Kind: wire.ConsumerKindGroup, ID: group}, stream, topic, 2)
	must("get offset", err)
	if !ok || off != (wire.ConsumerOffset{PartitionID: 2, CurrentOffset: 141, StoredOffset: 120}) {
		t.Errorf("get offset: %+v %v", off, ok)
	}
	must("store offset", s.StoreOffset(ctx, single, stream, topic, 2, 120))
	must("delete offset", s.DeleteOffset(ctx, single, stream, topic, 2))

	get("stream")(s.GetStream(ctx, stream))
	get("streams")(s.GetStreams(ctx))
	get("create stream")(s.CreateStream(ctx, "payments"))
	must("update stream", s.UpdateStream(ctx, stream, "payments-v2"))
	must("delete stream", s.DeleteStream(ctx, stream))
	must("purge stream", s.PurgeStream(ctx, stream))
	get("topic")(s.GetTopic(ctx, stream, topic))
	get("topics")(s.GetTopics(ctx, stream))
	get("create topic")(s.CreateTopic(ctx, stream, "orders", 3,
		TopicOptions{Compression: wire.CompressionGzip, MessageExpiryMicros: 604800000000, MaxTopicSize: 1 << 30}))
	must("update topic", s.UpdateTopic(ctx, stream, topic, "orders-v2",
		TopicOptions{MessageExpiryMicros: wire.Unlimited, MaxTopicSize: 1 << 31}))
	must("delete topic", s.DeleteTopic(ctx, stream, topic))
	must("purge topic", s.PurgeTopic(ctx, stream, topic))
	must("create partitions", s.CreatePartitions(ctx, stream, topic, 4))
	must("delete partitions", s.DeletePartitions(ctx, stream, topic, 2))
	must("delete segments", s.DeleteSegments(ctx, stream, topic, 2, 5))

	get("group")(s.GetConsumerGroup(ctx, stream, topic, group))
	get("groups")(s.GetConsumerGroups(ctx, stream, topic))
	get("create group")(s.CreateConsumerGroup(ctx, stream, topic, "billing"))
	must("join", s.JoinConsumerGroup(ctx, stream, topic, group))
	asg, err := s.SyncConsumerGroup(ctx, stream, topic, group)
	must("sync", err)
	if asg.Generation != 9 || len(asg.Partitions) != 2 {
		t.Errorf("sync: %+v", asg)
	}
	must("leave", s.LeaveConsumerGroup(ctx, stream, topic, group))
	must("delete group", s.DeleteConsumerGroup(ctx, stream, topic, group))

	must("logout", s.Logout(ctx))
	uid, err := s.LoginWithToken(ctx, "pat-0123456789abcdef")
	must("token login", err)
	if uid != 4 {
		t.Errorf("token login: user %d, want 4", uid)
	}

	mu.Lock()
	defer mu.Unlock()
	recorded, _ := filepath.Glob(filepath.Join(clientGoldenDir, "*.request.hex"))
	if len(recorded) == 0 {
		t.Fatal("no fixtures found")
	}
	for _, path := range recorded {
		name := strings.TrimSuffix(filepath.Base(path), ".request.hex")
		want, _ := clientGolden(t, filepath.Base(path))
		want = asOurLogin(t, name, want)
		var bodies [][]byte
		for cmd, b := range sent {
			if cmd.String() == name {
				bodies = b
			}
		}
		if len(bodies) == 0 {
			t.Errorf("%s: the client never sent it", name)
			continue
		}
		for _, got := range bodies {
			if !bytes.Equal(got, want) {
				t.Errorf("%s: the client's body differs from the SDK's\n got %x\nwant %x", name, got, want)
				break
			}
		}
	}
}

// asOurLogin is a recorded login body with the gateway's own client version in place of the
// SDK's: the SDK's login names the SDK, ours names the gateway; the rest must match as it is.
func asOurLogin(t *testing.T, name string, body []byte) []byte {
	t.Helper()
	switch name {
	case "login_register":
		var l wire.PasswordLogin
		if err := l.Decode(body); err != nil {
			t.Fatal(err)
		}
		l.Version = wire.OurClientVersion()
		return l.AppendTo(nil)
	case "login_register_with_pat":
		var l wire.TokenLogin
		if err := l.Decode(body); err != nil {
			t.Fatal(err)
		}
		l.Version = wire.OurClientVersion()
		return l.AppendTo(nil)
	}
	return body
}
