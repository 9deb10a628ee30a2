package store

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

var (
	sid0 = wire.NumericID(0)
	tid0 = wire.NumericID(0)
)

func send(t testing.TB, c *rawClient, part wire.Partitioning, payloads ...string) wire.SendConfirmation {
	t.Helper()
	var conf wire.SendMessagesReply
	if err := conf.Decode(ok(t, c.do(wire.CmdSendMessages, sendBody(sid0, tid0, part, batchOf(t, payloads...))))); err != nil {
		t.Fatal(err)
	}
	if len(conf) != 1 {
		t.Fatalf("%d confirmations", len(conf))
	}
	return conf[0]
}

func poll(t testing.TB, c *rawClient, cons wire.Consumer, part wire.OptionalPartition, strat wire.PollingStrategy, count uint32, commit bool) (wire.PollReply, []string, []uint64) {
	t.Helper()
	q := wire.PollMessages{Consumer: cons, Stream: sid0, Topic: tid0, Partition: part, Strategy: strat, Count: count, AutoCommit: commit}
	return polled(t, ok(t, c.do(wire.CmdPollMessages, q.AppendTo(nil))))
}

var single = wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(1)}

func TestSendAndPoll(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	mustCreateTopic(t, c, sid0, "t", 3)

	p0 := wire.PartitionIDPartitioning(0)
	c1 := send(t, c, p0, "a", "b", "c")
	c2 := send(t, c, p0, "d", "e")
	if c1.BaseOffset != 0 || c2.BaseOffset != 3 || c2.PartitionID != 0 {
		t.Fatalf("confirmations %+v %+v", c1, c2)
	}

	pr, payloads, offsets := poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollOffset, Value: 1}, 3, false)
	if pr.CurrentOffset != 4 || !slices.Equal(payloads, []string{"b", "c", "d"}) || !slices.Equal(offsets, []uint64{1, 2, 3}) {
		t.Fatalf("offset poll: %+v %v %v", pr.PollReplyPrefix, payloads, offsets)
	}
	_, payloads, _ = poll(t, c, single, wire.OptionalPartition{}, wire.PollingStrategy{Kind: wire.PollFirst}, 2, false)
	if !slices.Equal(payloads, []string{"a", "b"}) {
		t.Fatalf("first poll (absent partition = 0): %v", payloads)
	}
	_, payloads, _ = poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollLast}, 2, false)
	if !slices.Equal(payloads, []string{"d", "e"}) {
		t.Fatalf("last poll: %v", payloads)
	}
	_, payloads, _ = poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollTimestamp, Value: uint64(time.Now().Add(time.Hour).UnixMicro())}, 10, false)
	if len(payloads) != 0 {
		t.Fatalf("future timestamp poll: %v", payloads)
	}
	_, payloads, _ = poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollTimestamp}, 10, false)
	if len(payloads) != 5 {
		t.Fatalf("timestamp 0 poll: %v", payloads)
	}

	// Next with auto-commit walks the partition.
	for _, want := range [][]string{{"a", "b"}, {"c", "d"}, {"e"}, nil} {
		_, payloads, _ = poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollNext}, 2, true)
		if !slices.Equal(payloads, want) {
			t.Fatalf("next poll: %v, want %v", payloads, want)
		}
	}

	// Balanced rotates, a key always lands on one partition.
	seen := map[uint32]bool{}
	for range 3 {
		seen[send(t, c, wire.Partitioning{Kind: wire.PartitionBalanced}, "x").PartitionID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("balanced hit partitions %v", seen)
	}
	key := wire.Partitioning{Kind: wire.PartitionByMessageKey, Key: []byte("user-42")}
	k1, k2 := send(t, c, key, "y"), send(t, c, key, "z")
	if k1.PartitionID != k2.PartitionID || k1.PartitionID != xxh32([]byte("user-42"))%3 {
		t.Fatalf("key partitions %d %d", k1.PartitionID, k2.PartitionID)
	}

	// Errors.
	wantStatus(t, c.do(wire.CmdSendMessages, sendBody(sid0, tid0, wire.PartitionIDPartitioning(7), batchOf(t, "q"))), wire.ResourceNotFound)
	wantStatus(t, c.do(wire.CmdSendMessages, sendBody(wire.NumericID(4), tid0, p0, batchOf(t, "q"))), wire.ResourceNotFound)
	q := wire.PollMessages{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(9), Strategy: wire.PollingStrategy{Kind: wire.PollFirst}, Count: 1}
	wantStatus(t, c.do(wire.CmdPollMessages, q.AppendTo(nil)), wire.PartitionNotFound)
	q.Stream = wire.NumericID(8)
	wantStatus(t, c.do(wire.CmdPollMessages, q.AppendTo(nil)), wire.StreamIDNotFound)
	// An undecodable poll is an empty poll of partition 0.
	if body := ok(t, c.do(wire.CmdPollMessages, []byte{1})); len(body) != wire.PollPrefixSize {
		t.Fatalf("undecodable poll body %d bytes", len(body))
	}
}

func TestSendRejectsCorruptBatches(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	mustCreateTopic(t, c, sid0, "t", 1)
	p0 := wire.PartitionIDPartitioning(0)

	frameSum := batchOf(t, "hello", "world")
	frameSum[256+48] ^= 0xff // first payload byte
	batchSum := batchOf(t, "hello")
	batchSum[40] ^= 1
	reserved := batchOf(t, "hello")
	reserved[100] = 1
	countBody := sendBody(sid0, tid0, p0, batchOf(t, "a", "b"))
	binary.LittleEndian.PutUint32(countBody[4+6+6+6:], 3) // metadata messages_count

	cases := []struct {
		name string
		body []byte
		want wire.Code
	}{
		{"frame checksum", sendBody(sid0, tid0, p0, frameSum), wire.InvalidMessageChecksum},
		{"batch checksum", sendBody(sid0, tid0, p0, batchSum), wire.InvalidBatchChecksum},
		{"reserved bytes", sendBody(sid0, tid0, p0, reserved), wire.InvalidReservedField},
		{"count mismatch", countBody, wire.InvalidMessagesCount},
		{"truncated batch", sendBody(sid0, tid0, p0, batchOf(t, "abc"))[:300], wire.InvalidFormat},
		{"garbage metadata", []byte{1, 2, 3}, wire.InvalidCommand},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(wire.CmdSendMessages, tc.body)
			wantStatus(t, r, tc.want)
			if len(r.body) != 0 {
				t.Fatalf("error reply carries %d body bytes", len(r.body))
			}
		})
	}
	// Nothing was stored by the rejected sends.
	if got := send(t, c, p0, "ok").BaseOffset; got != 0 {
		t.Fatalf("base offset %d after rejected sends, want 0", got)
	}
}

func TestConsumerOffsets(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	mustCreateTopic(t, c, sid0, "t", 2)
	get := (&wire.GetConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(0)}).AppendTo(nil)
	store := func(off uint64) reply {
		return c.do(wire.CmdStoreConsumerOffset, (&wire.StoreConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0,
			Partition: wire.SomePartition(0), Offset: off, Ack: wire.AckQuorum}).AppendTo(nil))
	}
	del := (&wire.DeleteConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(0), Ack: wire.AckQuorum}).AppendTo(nil)

	wantStatus(t, store(0), wire.InvalidOffset) // empty partition
	send(t, c, wire.PartitionIDPartitioning(0), "a", "b", "c", "d", "e")
	if body := ok(t, c.do(wire.CmdGetConsumerOffset, get)); len(body) != 0 {
		t.Fatalf("offset before any store: %d bytes", len(body))
	}
	ok(t, store(3))
	var co wire.ConsumerOffset
	if err := co.Decode(ok(t, c.do(wire.CmdGetConsumerOffset, get))); err != nil {
		t.Fatal(err)
	}
	if co.StoredOffset != 3 || co.CurrentOffset != 4 || co.PartitionID != 0 {
		t.Fatalf("offset %+v", co)
	}
	wantStatus(t, store(5), wire.InvalidOffset)
	ok(t, c.do(wire.CmdDeleteConsumerOffset, del))
	wantStatus(t, c.do(wire.CmdDeleteConsumerOffset, del), wire.ConsumerOffsetNotFound)
	noPart := (&wire.StoreConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0, Offset: 1}).AppendTo(nil)
	wantStatus(t, c.do(wire.CmdStoreConsumerOffset, noPart), wire.ResourceNotFound)
	missing := (&wire.GetConsumerOffset{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(5)}).AppendTo(nil)
	wantStatus(t, c.do(wire.CmdGetConsumerOffset, missing), wire.PartitionNotFound)

	// A named single consumer is keyed by XXH32 of its name.
	named := wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID("worker")}
	ok(t, c.do(wire.CmdStoreConsumerOffset, (&wire.StoreConsumerOffset{Consumer: named, Stream: sid0, Topic: tid0,
		Partition: wire.SomePartition(0), Offset: 2}).AppendTo(nil)))
	byKey := wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(xxh32([]byte("worker")))}
	if err := co.Decode(ok(t, c.do(wire.CmdGetConsumerOffset, (&wire.GetConsumerOffset{Consumer: byKey, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(0)}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if co.StoredOffset != 2 {
		t.Fatalf("named consumer offset %+v", co)
	}
}

func TestPurgeResetsPartitions(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	mustCreateTopic(t, c, sid0, "t", 1)
	p0 := wire.PartitionIDPartitioning(0)
	send(t, c, p0, "a", "b")
	poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollNext}, 10, true)
	ok(t, c.do(wire.CmdPurgeTopic, (&wire.TopicRequest{Stream: sid0, Topic: tid0}).AppendTo(nil)))
	if got := send(t, c, p0, "c").BaseOffset; got != 0 {
		t.Fatalf("base offset after purge %d", got)
	}
	_, payloads, _ := poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollNext}, 10, false)
	if !slices.Equal(payloads, []string{"c"}) {
		t.Fatalf("after purge: %v (stored offset must be cleared)", payloads)
	}
	ok(t, c.do(wire.CmdPurgeStream, (&wire.StreamRequest{Stream: sid0}).AppendTo(nil)))
	_, payloads, _ = poll(t, c, single, wire.SomePartition(0), wire.PollingStrategy{Kind: wire.PollFirst}, 10, false)
	if len(payloads) != 0 {
		t.Fatalf("after stream purge: %v", payloads)
	}
	ds := (&wire.DeleteSegments{Stream: sid0, Topic: tid0, PartitionID: 0, SegmentsCount: 1}).AppendTo(nil)
	ok(t, c.do(wire.CmdDeleteSegments, ds))
	ds = (&wire.DeleteSegments{Stream: sid0, Topic: tid0, PartitionID: 4, SegmentsCount: 1}).AppendTo(nil)
	wantStatus(t, c.do(wire.CmdDeleteSegments, ds), wire.PartitionNotFound)
}
