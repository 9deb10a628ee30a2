package iggy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// startStore runs a store on dir, listening on listen when it is not empty (to come back where
// an earlier store was).
func startStore(t *testing.T, dir, listen string) *teststore.Store {
	t.Helper()
	return teststore.Start(t, func(c *store.Config) {
		c.DataDir = dir
		if listen != "" {
			c.Listen = listen
		}
	})
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, addr string, cfg iggy.Config) *iggy.Client {
	t.Helper()
	cfg.Addrs = []string{addr}
	c, err := iggy.Dial(ctxT(t), cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type result[T any] struct {
	v   T
	err error
}

// okv pairs a call's results so that okv(f()).get(t) fails the test on error.
func okv[T any](v T, err error) result[T] { return result[T]{v, err} }

func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.v
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, what string, err error, code wire.Code) {
	t.Helper()
	if !errors.Is(err, code) {
		t.Fatalf("%s: err = %v, want %s", what, err, code)
	}
}

// payloads returns the payloads of every message in a poll, in order.
func payloads(t *testing.T, p *iggy.Polled) (out []string, offsets []uint64) {
	t.Helper()
	recs := message.Records(p.Batches)
	for {
		rec, ok := recs.Next()
		if !ok {
			break
		}
		h, _ := message.ParseBatchHeader(rec)
		err := message.Each(rec, func(f message.Frame) bool {
			out = append(out, string(f.Payload))
			offsets = append(offsets, h.BaseOffset+uint64(f.OffsetDelta))
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := recs.Err(); err != nil {
		t.Fatal(err)
	}
	return out, offsets
}

func TestEmbeddedStreamsTopicsPartitions(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{})
	ctx := ctxT(t)

	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	st := okv(c.CreateStream(ctx, "orders")).get(t)
	if st.Name != "orders" || len(st.Topics) != 0 {
		t.Fatalf("created stream %+v", st)
	}
	_, err := c.CreateStream(ctx, "orders")
	wantCode(t, "duplicate stream", err, wire.StreamNameAlreadyExists)
	_, err = c.CreateStream(ctx, "")
	wantCode(t, "empty stream name", err, wire.InvalidStreamName)
	_, err = c.GetStream(ctx, wire.NamedID("missing"))
	wantCode(t, "missing stream", err, wire.StreamIDNotFound)

	sid := wire.NumericID(st.ID)
	tp := okv(c.CreateTopic(ctx, sid, "events", 3, iggy.TopicOptions{})).get(t)
	if tp.Name != "events" || len(tp.Partitions) != 3 {
		t.Fatalf("created topic %+v", tp)
	}
	_, err = c.CreateTopic(ctx, sid, "events", 1, iggy.TopicOptions{})
	wantCode(t, "duplicate topic", err, wire.TopicNameAlreadyExists)
	_, err = c.CreateTopic(ctx, wire.NamedID("missing"), "x", 1, iggy.TopicOptions{})
	wantCode(t, "topic in missing stream", err, wire.StreamIDNotFound)
	_, err = c.GetTopic(ctx, sid, wire.NamedID("missing"))
	wantCode(t, "missing topic", err, wire.TopicIDNotFound)
	_, err = c.CreateTopic(ctx, sid, "big", 1001, iggy.TopicOptions{})
	wantCode(t, "too many partitions", err, wire.TooManyPartitions)

	tid := wire.NamedID("events")
	noErr(t, c.CreatePartitions(ctx, sid, tid, 2))
	got := okv(c.GetTopic(ctx, sid, tid)).get(t)
	if len(got.Partitions) != 5 {
		t.Fatalf("after create_partitions: %d partitions", len(got.Partitions))
	}
	noErr(t, c.DeletePartitions(ctx, sid, tid, 1))
	got = okv(c.GetTopic(ctx, sid, tid)).get(t)
	if got.PartitionsCount != 4 {
		t.Fatalf("after delete_partitions: %d partitions", got.PartitionsCount)
	}
	noErr(t, c.DeleteSegments(ctx, sid, tid, 0, 0))

	noErr(t, c.UpdateTopic(ctx, sid, tid, "events2", iggy.TopicOptions{MessageExpiryMicros: 60_000_000}))
	got = okv(c.GetTopic(ctx, sid, wire.NamedID("events2"))).get(t)
	if got.MessageExpiry != 60_000_000 {
		t.Fatalf("message expiry after update = %d", got.MessageExpiry)
	}
	topics := okv(c.GetTopics(ctx, sid)).get(t)
	if len(topics) != 1 || topics[0].Name != "events2" {
		t.Fatalf("topics %+v", topics)
	}
	noErr(t, c.UpdateStream(ctx, sid, "orders2"))
	streams := okv(c.GetStreams(ctx)).get(t)
	if len(streams) != 1 || streams[0].Name != "orders2" {
		t.Fatalf("streams %+v", streams)
	}
	noErr(t, c.PurgeTopic(ctx, sid, wire.NamedID("events2")))
	noErr(t, c.PurgeStream(ctx, sid))
	noErr(t, c.DeleteTopic(ctx, sid, wire.NamedID("events2")))
	noErr(t, c.DeleteStream(ctx, sid))
	_, err = c.GetStream(ctx, sid)
	wantCode(t, "deleted stream", err, wire.StreamIDNotFound)
	err = c.DeleteStream(ctx, sid)
	wantCode(t, "delete missing stream", err, wire.StreamIDNotFound)
}

func TestEmbeddedSendPollOffsets(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{})
	ctx := ctxT(t)
	st := okv(c.CreateStream(ctx, "s")).get(t)
	sid, tid := wire.NumericID(st.ID), wire.NamedID("t")
	okv(c.CreateTopic(ctx, sid, "t", 2, iggy.TopicOptions{})).get(t)

	var b message.Builder
	var base []uint64
	for round := 0; round < 3; round++ {
		b.Reset()
		for i := 0; i < 4; i++ {
			b.Add(message.MakeID(uint64(round*4+i+1), 0), uint64(time.Now().UnixMicro()), fmt.Appendf(nil, "m%d", round*4+i), nil)
		}
		batch := okv(b.Finish()).get(t)
		base = append(base, okv(c.SendBatch(ctx, sid, tid, 1, batch)).get(t))
	}
	if base[0] != 0 || base[1] != 4 || base[2] != 8 {
		t.Fatalf("base offsets %v, want 0 4 8", base)
	}
	hdrs := wire.AppendTLV(nil, wire.StringEntry("k", "v"))
	off := okv(c.SendMessages(ctx, sid, tid, 1, []iggy.Message{{Payload: []byte("m12"), Headers: hdrs}})).get(t)
	if off != 12 {
		t.Fatalf("SendMessages base offset %d, want 12", off)
	}
	_, err := c.SendMessages(ctx, sid, tid, 1, nil)
	wantCode(t, "empty send", err, wire.InvalidMessagesCount)
	_, err = c.SendMessages(ctx, sid, wire.NamedID("missing"), 0, []iggy.Message{{Payload: []byte("x")}})
	if !errors.As(err, new(wire.Code)) {
		t.Fatalf("send to a missing topic: %v, want a server code", err)
	}

	p := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Partition: 1,
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 2}, Count: 100})).get(t)
	msgs, offs := payloads(t, p)
	if p.Count != 11 || len(msgs) != 11 || msgs[0] != "m2" || msgs[10] != "m12" || offs[0] != 2 || offs[10] != 12 {
		t.Fatalf("poll: count %d, payloads %v, offsets %v", p.Count, msgs, offs)
	}
	if p.CurrentOffset != 12 || p.PartitionID != 1 {
		t.Fatalf("poll: current offset %d partition %d", p.CurrentOffset, p.PartitionID)
	}
	p.Release()
	p.Release()

	empty := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Partition: 0,
		Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 10})).get(t)
	if empty.Count != 0 || len(empty.Batches) != 0 {
		t.Fatalf("empty partition poll: %+v", empty)
	}
	empty.Release()

	consumer := wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(7)}
	_, ok, err := c.GetOffset(ctx, consumer, sid, tid, 1)
	if err != nil || ok {
		t.Fatalf("offset before store: ok %v err %v", ok, err)
	}
	noErr(t, c.StoreOffset(ctx, consumer, sid, tid, 1, 3))
	o, ok, err := c.GetOffset(ctx, consumer, sid, tid, 1)
	if err != nil || !ok || o.StoredOffset != 3 || o.CurrentOffset != 12 {
		t.Fatalf("offset after store: %+v ok %v err %v", o, ok, err)
	}
	next := okv(c.Poll(ctx, iggy.PollRequest{Consumer: consumer, Stream: sid, Topic: tid, Partition: 1,
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 2, AutoCommit: true})).get(t)
	msgs, _ = payloads(t, next)
	next.Release()
	if len(msgs) != 2 || msgs[0] != "m4" {
		t.Fatalf("poll next after offset 3: %v", msgs)
	}
	o, _, _ = c.GetOffset(ctx, consumer, sid, tid, 1)
	if o.StoredOffset != 5 {
		t.Fatalf("auto commit stored %d, want 5", o.StoredOffset)
	}
	noErr(t, c.DeleteOffset(ctx, consumer, sid, tid, 1))
	wantCode(t, "delete offset twice", c.DeleteOffset(ctx, consumer, sid, tid, 1), wire.ConsumerOffsetNotFound)
	wantCode(t, "store beyond the end", c.StoreOffset(ctx, consumer, sid, tid, 1, 99), wire.InvalidOffset)
}

func TestEmbeddedConsumerGroupsThroughSessions(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{})
	ctx := ctxT(t)
	st := okv(c.CreateStream(ctx, "s")).get(t)
	sid, tid := wire.NumericID(st.ID), wire.NamedID("t")
	okv(c.CreateTopic(ctx, sid, "t", 4, iggy.TopicOptions{})).get(t)
	g := okv(c.CreateConsumerGroup(ctx, sid, tid, "workers")).get(t)
	gid := wire.NumericID(g.ID)
	_, err := c.CreateConsumerGroup(ctx, sid, tid, "workers")
	wantCode(t, "duplicate group", err, wire.ConsumerGroupNameAlreadyExists)
	_, err = c.GetConsumerGroup(ctx, sid, tid, wire.NamedID("nope"))
	wantCode(t, "missing group", err, wire.ConsumerGroupIDNotFound)

	s1 := okv(c.Session(ctx)).get(t)
	defer s1.Close()
	s2 := okv(c.Session(ctx)).get(t)
	defer s2.Close()
	_, err = s1.SyncConsumerGroup(ctx, sid, tid, gid)
	wantCode(t, "sync before join", err, wire.ConsumerGroupMemberNotFound)

	noErr(t, s1.JoinConsumerGroup(ctx, sid, tid, gid))
	a1 := okv(s1.SyncConsumerGroup(ctx, sid, tid, gid)).get(t)
	if len(a1.Partitions) != 4 {
		t.Fatalf("lone member owns %v", a1.Partitions)
	}
	noErr(t, s2.JoinConsumerGroup(ctx, sid, tid, gid))
	checkfor.Eventually(t, 5*time.Second, "partitions split between two members", func() error {
		x1, err1 := s1.SyncConsumerGroup(ctx, sid, tid, gid)
		x2, err2 := s2.SyncConsumerGroup(ctx, sid, tid, gid)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		return checkfor.True(len(x1.Partitions) == 2 && len(x2.Partitions) == 2,
			"member 1 owns %v, member 2 owns %v", x1.Partitions, x2.Partitions)
	})
	details := okv(c.GetConsumerGroup(ctx, sid, tid, gid)).get(t)
	if details.MembersCount != 2 {
		t.Fatalf("group details %+v", details)
	}
	groups := okv(c.GetConsumerGroups(ctx, sid, tid)).get(t)
	if len(groups) != 1 || groups[0].Name != "workers" {
		t.Fatalf("groups %+v", groups)
	}
	me := okv(s1.Me(ctx)).get(t)
	if len(me.Groups) != 1 {
		t.Fatalf("Me groups %+v", me.Groups)
	}

	// A group member polls and commits its own partition.
	a2 := okv(s2.SyncConsumerGroup(ctx, sid, tid, gid)).get(t)
	part := a2.Partitions[0]
	okv(c.SendMessages(ctx, sid, tid, part, []iggy.Message{{Payload: []byte("hello")}})).get(t)
	gc := wire.Consumer{Kind: wire.ConsumerKindGroup, ID: gid}
	p := okv(s2.Poll(ctx, iggy.PollRequest{Consumer: gc, Stream: sid, Topic: tid, Partition: part,
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 10, AutoCommit: true})).get(t)
	msgs, _ := payloads(t, p)
	p.Release()
	if len(msgs) != 1 || msgs[0] != "hello" {
		t.Fatalf("group poll: %v", msgs)
	}
	// The other member is fenced from that partition.
	p = okv(s1.Poll(ctx, iggy.PollRequest{Consumer: gc, Stream: sid, Topic: tid, Partition: part,
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 10})).get(t)
	if !p.Resync() {
		t.Fatalf("non-owner poll answered partition %d, want the resync sentinel", p.PartitionID)
	}
	p.Release()

	noErr(t, s2.LeaveConsumerGroup(ctx, sid, tid, gid))
	wantCode(t, "leave twice", s2.LeaveConsumerGroup(ctx, sid, tid, gid), wire.ConsumerGroupMemberNotFound)
	// Closing a session ends its membership.
	_ = s1.Close()
	checkfor.Eventually(t, 5*time.Second, "members gone after leave and close", func() error {
		d, err := c.GetConsumerGroup(ctx, sid, tid, gid)
		if err != nil {
			return err
		}
		return checkfor.True(d.MembersCount == 0, "%d members", d.MembersCount)
	})
	if err := s1.Ping(ctx); !errors.Is(err, iggy.ErrClosed) {
		t.Fatalf("ping on a closed session: %v", err)
	}
	noErr(t, c.DeleteConsumerGroup(ctx, sid, tid, gid))
}

func TestEmbeddedUsersTokensSystem(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{})
	ctx := ctxT(t)

	_, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{s.Addr}, Username: "iggy", Password: "wrong"})
	wantCode(t, "bad password", err, wire.InvalidCredentials)

	perms := wire.AllPermissions()
	u := okv(c.CreateUser(ctx, "alice", "secret1", wire.UserStatusActive, &perms)).get(t)
	if u.Username != "alice" || u.Permissions == nil {
		t.Fatalf("created user %+v", u)
	}
	_, err = c.CreateUser(ctx, "alice", "secret1", wire.UserStatusActive, nil)
	wantCode(t, "duplicate user", err, wire.UserAlreadyExists)
	_, err = c.GetUser(ctx, wire.NamedID("nobody"))
	wantCode(t, "missing user", err, wire.ResourceNotFound)
	users := okv(c.GetUsers(ctx)).get(t)
	if len(users) != 2 {
		t.Fatalf("users %+v", users)
	}
	uid := wire.NamedID("alice")
	name := "alice2"
	noErr(t, c.UpdateUser(ctx, uid, &name, nil))
	uid = wire.NamedID("alice2")
	noErr(t, c.UpdatePermissions(ctx, uid, nil))
	got := okv(c.GetUser(ctx, uid)).get(t)
	if got.Permissions != nil {
		t.Fatalf("permissions after removal %+v", got.Permissions)
	}
	noErr(t, c.ChangePassword(ctx, uid, "secret1", "secret2"))
	wantCode(t, "wrong current password", c.ChangePassword(ctx, uid, "nope", "x1234"), wire.InvalidCredentials)

	alice := dial(t, s.Addr, iggy.Config{Username: "alice2", Password: "secret2"})
	if alice.UserID() != got.ID {
		t.Fatalf("logged in as %d, want %d", alice.UserID(), got.ID)
	}

	token := okv(c.CreateToken(ctx, "ci-token", 0)).get(t)
	tokens := okv(c.GetTokens(ctx)).get(t)
	if len(tokens) != 1 || tokens[0].Name != "ci-token" {
		t.Fatalf("tokens %+v", tokens)
	}
	byToken := dial(t, s.Addr, iggy.Config{Token: token})
	if err := byToken.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if byToken.UserID() != 0 {
		t.Fatalf("token login as user %d, want root 0", byToken.UserID())
	}
	_, err = iggy.Dial(ctx, iggy.Config{Addrs: []string{s.Addr}, Token: "not-a-token"})
	wantCode(t, "bad token", err, wire.InvalidPersonalAccessToken)
	noErr(t, c.DeleteToken(ctx, "ci-token"))
	wantCode(t, "delete missing token", c.DeleteToken(ctx, "ci-token"), wire.ResourceNotFound)

	noErr(t, c.DeleteUser(ctx, uid))
	wantCode(t, "delete root", c.DeleteUser(ctx, wire.NumericID(0)), wire.CannotDeleteUser)

	stats := okv(c.Stats(ctx)).get(t)
	if stats.ClientsCount == 0 {
		t.Fatalf("stats %+v", stats)
	}
	meta := okv(c.ClusterMetadata(ctx)).get(t)
	if len(meta.Nodes) != 1 {
		t.Fatalf("cluster metadata %+v", meta)
	}
	opts := okv(c.DescribeOptions(ctx, wire.ScopeTopic)).get(t)
	if len(opts) != 8 {
		t.Fatalf("topic option catalog has %d keys, want 8", len(opts))
	}
	clients := okv(c.GetClients(ctx)).get(t)
	if len(clients) == 0 {
		t.Fatal("no clients listed")
	}
	me := okv(c.Me(ctx)).get(t)
	one := okv(c.GetClient(ctx, me.ClientID)).get(t)
	if one.ClientID != me.ClientID {
		t.Fatalf("GetClient %+v vs Me %+v", one, me)
	}
	snap := okv(c.Snapshot(ctx, 1, 1)).get(t)
	if len(snap) == 0 || !bytes.HasPrefix(snap, []byte("PK")) {
		t.Fatalf("snapshot of %d bytes is not a ZIP", len(snap))
	}

	sess := okv(c.Session(ctx)).get(t)
	defer sess.Close()
	noErr(t, sess.Logout(ctx))
	_, err = sess.GetStreams(ctx)
	wantCode(t, "read after logout", err, wire.Unauthenticated)
	if _, err := sess.Login(ctx, "iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	okv(sess.GetStreams(ctx)).get(t)
}

func TestEmbeddedConcurrentSendsOverPool(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{PoolSize: 4})
	ctx := ctxT(t)
	st := okv(c.CreateStream(ctx, "s")).get(t)
	sid, tid := wire.NumericID(st.ID), wire.NamedID("t")
	okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{})).get(t)

	const goroutines, sends, per = 8, 20, 5
	var mu sync.Mutex
	seen := map[uint64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := make([]iggy.Message, per)
			for i := 0; i < sends; i++ {
				for j := range msgs {
					msgs[j] = iggy.Message{Payload: fmt.Appendf(nil, "g%d-%d-%d", g, i, j)}
				}
				base, err := c.SendMessages(ctx, sid, tid, 0, msgs)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if seen[base] {
					mu.Unlock()
					errs <- fmt.Errorf("base offset %d returned twice", base)
					return
				}
				seen[base] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	p := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 10_000})).get(t)
	defer p.Release()
	if want := uint32(goroutines * sends * per); p.Count != want {
		t.Fatalf("stored %d messages, want %d", p.Count, want)
	}
}

func TestEmbeddedReconnectAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := startStore(t, dir, "")
	c := dial(t, s.Addr, iggy.Config{PoolSize: 2})
	ctx := ctxT(t)
	okv(c.CreateStream(ctx, "durable")).get(t)
	sess := okv(c.Session(ctx)).get(t)
	defer sess.Close()

	s.Stop()
	s2 := startStore(t, dir, s.Addr)
	got := okv(c.GetStream(ctx, wire.NamedID("durable"))).get(t)
	if got.Name != "durable" {
		t.Fatalf("stream after restart %+v", got)
	}
	// Writes work again too, on fresh logged-in connections.
	okv(c.CreateStream(ctx, "after")).get(t)
	// The session does not come back: its membership died with it.
	if err := sess.Ping(ctx); !errors.Is(err, iggy.ErrConnectionLost) {
		t.Fatalf("session ping after restart: %v, want ErrConnectionLost", err)
	}
	_ = s2
}

func TestEmbeddedContextDeadline(t *testing.T) {
	s := startStore(t, t.TempDir(), "")
	c := dial(t, s.Addr, iggy.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("ping with a cancelled context: %v", err)
	}
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}
