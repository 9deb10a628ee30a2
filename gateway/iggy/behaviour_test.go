package iggy_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testiggy"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// The tests in this file pin the server behaviours the gateway depends on. Each is written once
// and runs against the server the environment names (package testiggy): the embedded store in
// this process by default, the real iggy-server when IGGY_KAFKA_TEST_IGGY_SERVER is set, so CI on
// the store catches what the real server would show.

// behaviourServer is the server of one behaviour test.
type behaviourServer struct {
	addr    string
	real    bool
	restart func() // kill the server and start it again on its data
}

// startBehaviourServer starts the server with heartbeat interval hb.
func startBehaviourServer(t *testing.T, hb time.Duration) *behaviourServer {
	t.Helper()
	target, err := testiggy.FromEnv("")
	if err != nil {
		t.Fatal(err)
	}
	if target.Real != "" {
		target.Heartbeat = hb
		s := testiggy.Run(t, target)
		return &behaviourServer{addr: s.Addr(), real: true, restart: func() {
			if err := s.Restart(); err != nil {
				t.Fatal(err)
			}
		}}
	}
	cfg := func(addr, dir string) func(*store.Config) {
		return func(c *store.Config) {
			c.HeartbeatInterval = hb
			if addr != "" {
				c.Listen, c.DataDir = addr, dir
			}
		}
	}
	st := teststore.Start(t, cfg("", ""))
	b := &behaviourServer{addr: st.Addr}
	b.restart = func() {
		_ = st.Stop()
		st = teststore.Start(t, cfg(b.addr, st.Dir))
	}
	return b
}

// TestServerUpdateTopicZeroKeepsTheOption: an UpdateTopic that sends a retention option as zero
// ("use the default") leaves the topic's value as it was; sending the default itself (u64 max:
// never, unlimited) sets it back.
func TestServerUpdateTopicZeroKeepsTheOption(t *testing.T) {
	b := startBehaviourServer(t, 0)
	c := dial(t, b.addr, iggy.Config{})
	ctx := ctxT(t)
	sid := wire.NumericID(okv(c.CreateStream(ctx, "s")).get(t).ID)
	const expiry, size = uint64(60_000_000), uint64(1 << 31)
	tp := okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{MessageExpiryMicros: expiry, MaxTopicSize: size})).get(t)
	tid := wire.NumericID(tp.ID)
	check := func(what string, wantExpiry, wantSize uint64) {
		t.Helper()
		got := okv(c.GetTopic(ctx, sid, tid)).get(t)
		if got.MessageExpiry != wantExpiry || got.MaxTopicSize != wantSize {
			t.Fatalf("%s: message_expiry %d, max_topic_size %d; want %d, %d", what, got.MessageExpiry, got.MaxTopicSize, wantExpiry, wantSize)
		}
	}
	check("created", expiry, size)
	update := func(e, s uint64) {
		t.Helper()
		noErr(t, c.UpdateTopic(ctx, sid, tid, "t", iggy.TopicOptions{Extra: []wire.TLVEntry{
			wire.Uint64Entry(wire.OptMessageExpiry, e), wire.Uint64Entry(wire.OptMaxTopicSize, s)}}))
	}
	update(0, 0)
	check("updated with zeros", expiry, size)
	update(wire.Unlimited, wire.Unlimited)
	check("updated with the defaults", wire.Unlimited, wire.Unlimited)
}

// TestServerEvictsSilentMember: a consumer-group member that says nothing is evicted more than
// 1.2 heartbeat intervals after its last request, and, since the server checks once every
// interval, at most 2.2 intervals after it (plus this test's polling and scheduling slack).
func TestServerEvictsSilentMember(t *testing.T) {
	const hb = time.Second
	b := startBehaviourServer(t, hb)
	admin := dial(t, b.addr, iggy.Config{})
	ctx := ctxT(t)
	sid, tid, gid := joinedMember(t, admin)
	joined := time.Now() // the member's last request ended here; its session pings only every 5 s
	members := func() uint32 { return okv(admin.GetConsumerGroup(ctx, sid, tid, gid)).get(t).MembersCount }
	if n := members(); n != 1 {
		t.Fatalf("after the join the group has %d members", n)
	}
	var gone time.Duration
	checkfor.Eventually(t, 10*hb, "the silent member evicted", func() error {
		if n := members(); n != 0 {
			return fmt.Errorf("%d members", n)
		}
		gone = time.Since(joined)
		return nil
	})
	t.Logf("evicted %v after the member's last request (heartbeat interval %v)", gone, hb)
	if gone < hb*6/5 {
		t.Fatalf("evicted %v after its last request, before 1.2 heartbeat intervals (%v)", gone, hb*6/5)
	}
	if limit := hb*11/5 + time.Second; gone > limit {
		t.Fatalf("evicted %v after its last request, past 2.2 heartbeat intervals and 1 s of slack (%v)", gone, limit)
	}
}

// TestStoreConfirmationWithoutOffset: a send the store confirms with count 0 ("committed, no
// offsets to report", as the real server does when it cannot resolve them) is taken as stored:
// the client reads the batch back for its offset, and does not report an error that would make a
// Kafka client send it again. The real server cannot be made to answer so; this runs on the store.
func TestStoreConfirmationWithoutOffset(t *testing.T) {
	var unreported atomic.Bool
	st := teststore.Start(t, func(c *store.Config) {
		c.UnreportedOffsets = func(wire.Identifier, uint32) bool { return unreported.Load() }
	})
	c := dial(t, st.Addr, iggy.Config{})
	ctx := ctxT(t)
	sid := wire.NumericID(okv(c.CreateStream(ctx, "s")).get(t).ID)
	tid := wire.NumericID(okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{})).get(t).ID)
	send := func(payloads ...string) uint64 {
		t.Helper()
		var msgs []iggy.Message
		for _, p := range payloads {
			msgs = append(msgs, iggy.Message{Payload: []byte(p)})
		}
		return okv(c.SendMessages(ctx, sid, tid, 0, msgs)).get(t)
	}
	for i := range 100 {
		send(fmt.Sprint("before-", i))
	}
	unreported.Store(true)
	if off := send("a", "b", "c"); off != 100 {
		t.Fatalf("a batch confirmed without offsets located at %d, want 100", off)
	}
	if off := send("d"); off != 103 {
		t.Fatalf("the next one located at %d, want 103", off)
	}
	p := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Partition: 0,
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 100}, Count: 10})).get(t)
	defer p.Release()
	got, offs := payloads(t, p)
	if fmt.Sprint(got, offs) != "[a b c d] [100 101 102 103]" {
		t.Fatalf("stored %v at %v, want each batch once", got, offs)
	}
}

// TestServerMembershipAfterRestart: a server restart does not end the consumer-group memberships
// of the connections it took down. The real server keeps members in its metadata and drops one
// only on Leave, Logout, or when the node holding its connection sees it close or go stale; after
// a restart no node holds it, so it stays, also through the eviction of a silent live member. The
// store does the same, so the gateway meets dead members on both.
func TestServerMembershipAfterRestart(t *testing.T) {
	const hb = time.Second
	b := startBehaviourServer(t, hb)
	admin := dial(t, b.addr, iggy.Config{})
	ctx := ctxT(t)
	sid, tid, gid := joinedMember(t, admin)
	before := okv(admin.GetConsumerGroup(ctx, sid, tid, gid)).get(t)
	if len(before.Members) != 1 {
		t.Fatalf("after the join: %+v", before.Members)
	}
	dead := before.Members[0].ID
	b.restart()
	after := dial(t, b.addr, iggy.Config{})
	ids := func() []uint32 {
		var out []uint32
		for _, m := range okv(after.GetConsumerGroup(ctx, sid, tid, gid)).get(t).Members {
			out = append(out, m.ID)
		}
		return out
	}
	if got := ids(); fmt.Sprint(got) != fmt.Sprint([]uint32{dead}) {
		t.Fatalf("after the restart the group lists members %v, want the dead member %d", got, dead)
	}
	// A live member that falls silent is evicted; the dead one stays all the while.
	fresh := okv(after.Session(ctx)).get(t)
	t.Cleanup(func() { _ = fresh.Close() })
	noErr(t, fresh.JoinConsumerGroup(ctx, sid, tid, gid))
	if got := ids(); len(got) != 2 {
		t.Fatalf("a fresh member joined beside the dead one: members %v", got)
	}
	checkfor.Eventually(t, 10*hb, "the silent fresh member evicted", func() error {
		if got := ids(); len(got) != 1 {
			return fmt.Errorf("members %v", got)
		}
		return nil
	})
	if got := ids(); fmt.Sprint(got) != fmt.Sprint([]uint32{dead}) {
		t.Fatalf("after the eviction the group lists members %v, want the dead member %d alone", got, dead)
	}
}

// TestServerKeepsAcknowledgedAcrossAKill: a topic created by the client with its default
// durability (DurabilityWrite: messages_required_to_save = 1) keeps every acknowledged message
// when the server is killed and started again. With the real server's defaults the same run
// kept 1,030 of 2,000: it writes a partition's messages only every 1,024.
func TestServerKeepsAcknowledgedAcrossAKill(t *testing.T) {
	b := startBehaviourServer(t, 0)
	c := dial(t, b.addr, iggy.Config{})
	ctx := ctxT(t)
	sid := wire.NumericID(okv(c.CreateStream(ctx, "s")).get(t).ID)
	tp := okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{})).get(t)
	tid := wire.NumericID(tp.ID)
	if v, ok := optionValue(tp.Options, wire.OptMessagesRequiredToSave); !ok || len(v) != 4 || v[0] != 1 || v[1]|v[2]|v[3] != 0 {
		t.Fatalf("the topic was created without messages_required_to_save = 1: %x", tp.Options)
	}
	const batches, per = 200, 10
	for i := range batches {
		var msgs []iggy.Message
		for j := range per {
			msgs = append(msgs, iggy.Message{Payload: []byte(fmt.Sprint(i, "-", j))})
		}
		okv(c.SendMessages(ctx, sid, tid, 0, msgs)).get(t)
	}
	b.restart()
	after := dial(t, b.addr, iggy.Config{})
	got := 0
	for {
		p := okv(after.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Partition: 0,
			Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: uint64(got)}, Count: 1000})).get(t)
		n := int(p.Count)
		p.Release()
		if n == 0 {
			break
		}
		got += n
	}
	if got != batches*per {
		t.Fatalf("%d messages acknowledged, %d there after the kill", batches*per, got)
	}
}

// optionValue is the value of key in an options block.
func optionValue(block []byte, key string) ([]byte, bool) {
	it := wire.NewTLVIter(block)
	for e, ok := it.Next(); ok; e, ok = it.Next() {
		if string(e.Key) == key {
			return e.Value, true
		}
	}
	return nil, false
}

// TestServerRecreatedTopicStartsEmpty: a topic created right after another one was deleted (it
// may get the deleted topic's id) reads none of the deleted topic's messages, and its offsets
// start at 0.
func TestServerRecreatedTopicStartsEmpty(t *testing.T) {
	b := startBehaviourServer(t, 0)
	c := dial(t, b.addr, iggy.Config{})
	ctx := ctxT(t)
	sid := wire.NumericID(okv(c.CreateStream(ctx, "s")).get(t).ID)
	for round := range 3 {
		old := okv(c.CreateTopic(ctx, sid, fmt.Sprint("old-", round), 2, iggy.TopicOptions{})).get(t)
		for i := range 11 {
			var msgs []iggy.Message
			for j := range 100 {
				msgs = append(msgs, iggy.Message{Payload: []byte(fmt.Sprint("old-", i, "-", j))})
			}
			okv(c.SendMessages(ctx, sid, wire.NumericID(old.ID), 0, msgs)).get(t)
		}
		noErr(t, c.DeleteTopic(ctx, sid, wire.NumericID(old.ID)))
		fresh := okv(c.CreateTopic(ctx, sid, fmt.Sprint("new-", round), 2, iggy.TopicOptions{})).get(t)
		tid := wire.NumericID(fresh.ID)
		off := okv(c.SendMessages(ctx, sid, tid, 0, []iggy.Message{{Payload: []byte("new")}})).get(t)
		p := okv(c.Poll(ctx, iggy.PollRequest{Stream: sid, Topic: tid, Partition: 0,
			Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 0}, Count: 2000})).get(t)
		got, offs := payloads(t, p)
		p.Release()
		t.Logf("round %d: deleted topic id %d, new topic id %d; the new one's first message at %d; a poll from 0 reads %d messages", round, old.ID, fresh.ID, off, len(got))
		if off != 0 || fmt.Sprint(got, offs) != "[new] [0]" {
			t.Fatalf("round %d: the recreated topic (id %d after %d) stored its first message at %d and reads %d messages from 0 (first %q at %v)",
				round, fresh.ID, old.ID, off, len(got), got[:min(1, len(got))], offs[:min(1, len(offs))])
		}
	}
}

// joinedMember creates stream s, topic t (2 partitions) and consumer group g through admin, and
// joins g with a session of its own that stays open until the test ends (it pings only every
// 5 s).
func joinedMember(t *testing.T, admin *iggy.Client) (sid, tid, gid wire.Identifier) {
	t.Helper()
	ctx := ctxT(t)
	sid = wire.NumericID(okv(admin.CreateStream(ctx, "s")).get(t).ID)
	tid = wire.NumericID(okv(admin.CreateTopic(ctx, sid, "t", 2, iggy.TopicOptions{})).get(t).ID)
	gid = wire.NumericID(okv(admin.CreateConsumerGroup(ctx, sid, tid, "g")).get(t).ID)
	sess := okv(admin.Session(ctx)).get(t)
	t.Cleanup(func() { _ = sess.Close() })
	noErr(t, sess.JoinConsumerGroup(ctx, sid, tid, gid))
	return sid, tid, gid
}
