package store

import (
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

var group0 = wire.GroupRequest{Stream: sid0, Topic: tid0, Group: wire.NumericID(0)}

func syncGroup(t testing.TB, c *rawClient) (wire.GroupAssignment, bool) {
	t.Helper()
	body := ok(t, c.do(wire.CmdSyncConsumerGroup, group0.AppendTo(nil)))
	if len(body) == 0 {
		return wire.GroupAssignment{}, false
	}
	var a wire.GroupAssignment
	if err := a.Decode(body); err != nil {
		t.Fatal(err)
	}
	return a, true
}

func groupSetup(t *testing.T, tweak func(*Config), partitions uint32) (*Server, *rawClient) {
	t.Helper()
	s := startServer(t, t.TempDir(), tweak)
	admin := loggedIn(t, s)
	mustCreateStream(t, admin, "s")
	mustCreateTopic(t, admin, sid0, "t", partitions)
	body := ok(t, admin.do(wire.CmdCreateConsumerGroup, (&wire.CreateConsumerGroup{Stream: sid0, Topic: tid0, Name: "g"}).AppendTo(nil)))
	var d wire.ConsumerGroupDetails
	if err := d.Decode(body); err != nil || d.ID != 0 || d.Name != "g" || d.MembersCount != 0 {
		t.Fatalf("create group: %+v %v", d, err)
	}
	return s, admin
}

func TestConsumerGroupMembership(t *testing.T) {
	s, admin := groupSetup(t, nil, 4)
	wantStatus(t, admin.do(wire.CmdCreateConsumerGroup, (&wire.CreateConsumerGroup{Stream: sid0, Topic: tid0, Name: "g"}).AppendTo(nil)), wire.ConsumerGroupNameAlreadyExists)
	missing := wire.GroupRequest{Stream: sid0, Topic: tid0, Group: wire.NumericID(5)}
	wantStatus(t, admin.do(wire.CmdJoinConsumerGroup, missing.AppendTo(nil)), wire.ConsumerGroupIDNotFound)
	wantStatus(t, admin.do(wire.CmdLeaveConsumerGroup, group0.AppendTo(nil)), wire.ConsumerGroupMemberNotFound)
	if _, member := syncGroup(t, admin); member {
		t.Fatalf("non-member got an assignment")
	}

	a, b := loggedIn(t, s), loggedIn(t, s)
	ok(t, a.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	ok(t, a.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil))) // no-op
	asg, _ := syncGroup(t, a)
	if !slices.Equal(asg.Partitions, []uint32{0, 1, 2, 3}) {
		t.Fatalf("sole member owns %v", asg.Partitions)
	}
	// b joins; nothing was polled, so half of a's partitions move at once.
	ok(t, b.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	asgA, _ := syncGroup(t, a)
	asgB, _ := syncGroup(t, b)
	if len(asgA.Partitions) != 2 || len(asgB.Partitions) != 2 || asgB.Generation <= asg.Generation {
		t.Fatalf("after join: a %+v b %+v", asgA, asgB)
	}
	all := append(slices.Clone(asgA.Partitions), asgB.Partitions...)
	slices.Sort(all)
	if !slices.Equal(all, []uint32{0, 1, 2, 3}) {
		t.Fatalf("partitions not covered exactly once: %v", all)
	}

	var d wire.ConsumerGroupDetails
	if err := d.Decode(ok(t, admin.do(wire.CmdGetConsumerGroup, group0.AppendTo(nil)))); err != nil || d.MembersCount != 2 {
		t.Fatalf("group details %+v %v", d, err)
	}

	// Fencing: b may not poll a's partition.
	groupCons := wire.Consumer{Kind: wire.ConsumerKindGroup, ID: wire.NumericID(0)}
	q := wire.PollMessages{Consumer: groupCons, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(asgA.Partitions[0]),
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 1}
	pr, _, _ := polled(t, ok(t, b.do(wire.CmdPollMessages, q.AppendTo(nil))))
	if pr.PartitionID != wire.PartitionResync {
		t.Fatalf("fenced poll answered partition %d", pr.PartitionID)
	}
	q.Partition = wire.SomePartition(asgB.Partitions[0])
	if pr, _, _ = polled(t, ok(t, b.do(wire.CmdPollMessages, q.AppendTo(nil)))); pr.PartitionID != asgB.Partitions[0] {
		t.Fatalf("owned poll answered partition %d", pr.PartitionID)
	}

	// a disconnects: b gets everything.
	_ = a.nc.Close()
	checkfor.Eventually(t, 5*time.Second, "b to own all partitions after a disconnects", func() error {
		got, _ := syncGroup(t, b)
		return checkfor.True(len(got.Partitions) == 4, "b owns %v", got.Partitions)
	})

	ok(t, b.do(wire.CmdLeaveConsumerGroup, group0.AppendTo(nil)))
	if _, member := syncGroup(t, b); member {
		t.Fatalf("left member still synced")
	}
	ok(t, admin.do(wire.CmdDeleteConsumerGroup, group0.AppendTo(nil)))
	wantStatus(t, admin.do(wire.CmdDeleteConsumerGroup, group0.AppendTo(nil)), wire.ConsumerGroupIDNotFound)
	// Group ids are never reused.
	body := ok(t, admin.do(wire.CmdCreateConsumerGroup, (&wire.CreateConsumerGroup{Stream: sid0, Topic: tid0, Name: "g"}).AppendTo(nil)))
	if err := d.Decode(body); err != nil || d.ID != 1 {
		t.Fatalf("recreated group id %d %v", d.ID, err)
	}
}

func TestGroupHandOffWaitsForCommit(t *testing.T) {
	s, admin := groupSetup(t, func(c *Config) { c.HeartbeatInterval = time.Hour }, 2)
	for p := range uint32(2) {
		var conf wire.SendMessagesReply
		ok(t, admin.do(wire.CmdSendMessages, sendBody(sid0, tid0, wire.PartitionIDPartitioning(p), batchOf(t, "m1", "m2"))))
		_ = conf
	}
	a, b := loggedIn(t, s), loggedIn(t, s)
	ok(t, a.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	groupCons := wire.Consumer{Kind: wire.ConsumerKindGroup, ID: wire.NumericID(0)}
	// a polls partition 1 without committing: work in flight.
	q := wire.PollMessages{Consumer: groupCons, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(1),
		Strategy: wire.PollingStrategy{Kind: wire.PollNext}, Count: 2}
	if _, got, _ := polled(t, ok(t, a.do(wire.CmdPollMessages, q.AppendTo(nil)))); len(got) != 2 {
		t.Fatalf("a polled %v", got)
	}
	ok(t, b.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	asgA, _ := syncGroup(t, a)
	asgB, _ := syncGroup(t, b)
	if !slices.Equal(asgA.Partitions, []uint32{0}) || len(asgB.Partitions) != 0 {
		t.Fatalf("during hand-off: a %v b %v", asgA.Partitions, asgB.Partitions)
	}
	// a may still commit the partition it is handing off; that completes it.
	ok(t, a.do(wire.CmdStoreConsumerOffset, (&wire.StoreConsumerOffset{Consumer: groupCons, Stream: sid0, Topic: tid0,
		Partition: wire.SomePartition(1), Offset: 1}).AppendTo(nil)))
	asgB, _ = syncGroup(t, b)
	if !slices.Equal(asgB.Partitions, []uint32{1}) {
		t.Fatalf("after commit b owns %v", asgB.Partitions)
	}
	// b continues after a's commit.
	q.Partition = wire.SomePartition(1)
	if _, got, _ := polled(t, ok(t, b.do(wire.CmdPollMessages, q.AppendTo(nil)))); len(got) != 0 {
		t.Fatalf("b re-read committed messages %v", got)
	}
}

func TestStaleMemberIsEvicted(t *testing.T) {
	s, _ := groupSetup(t, func(c *Config) { c.HeartbeatInterval = 300 * time.Millisecond }, 2)
	silent, live := loggedIn(t, s), loggedIn(t, s)
	ok(t, silent.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	ok(t, live.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	checkfor.Eventually(t, 5*time.Second, "the silent member to lose its partitions", func() error {
		got, _ := syncGroup(t, live)
		return checkfor.True(len(got.Partitions) == 2, "the live member owns %v", got.Partitions)
	})
	r, err := silent.readReply()
	if err != nil {
		t.Fatalf("silent member: %v", err)
	}
	wantEviction(t, r, wire.EvictStaleClient)
	silent.expectClosed()
}

// TestStaleMemberEvictedAtTheBound checks the real server's eviction rule on a fake clock: the
// store checks once every heartbeat interval H from its start and evicts a member silent for more
// than 1.2 H at a check. A member whose last word came at 0.8 H is silent exactly 1.2 H at the
// check at 2 H and stays; it is gone at the check at 3 H, 2.2 H after its last word, the latest
// the rule allows; never between checks.
func TestStaleMemberEvictedAtTheBound(t *testing.T) {
	const hb = 10 * time.Second
	fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, admin := groupSetup(t, func(c *Config) { c.HeartbeatInterval = hb; c.Clock = fake }, 2)
	silent, live := loggedIn(t, s), loggedIn(t, s)
	ok(t, silent.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	ok(t, live.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	members := func() uint32 {
		t.Helper()
		var d wire.ConsumerGroupDetails
		if err := d.Decode(ok(t, admin.do(wire.CmdGetConsumerGroup, group0.AppendTo(nil)))); err != nil {
			t.Fatal(err)
		}
		return d.MembersCount
	}
	// advance moves the clock and, when that passes the sweeper's next wake-up, returns once the
	// sweep has run, which ends by setting its timer again.
	advance := func(d time.Duration, wakes bool) {
		t.Helper()
		swept := fake.Added()
		fake.Advance(d)
		if !wakes {
			return
		}
		select {
		case <-swept:
		case <-time.After(5 * time.Second):
			t.Fatalf("the sweeper did not run after the clock moved %v", d)
		}
	}

	advance(hb*8/10, false)
	syncGroup(t, silent) // silent's last word, at 0.8 H
	advance(hb/5, true)  // check at H
	syncGroup(t, live)
	advance(hb, true) // check at 2 H: silent for exactly 1.2 H
	if n := members(); n != 2 {
		t.Fatalf("at exactly 1.2 heartbeats of silence the group has %d members, want 2", n)
	}
	syncGroup(t, live)
	advance(hb-time.Nanosecond, false) // 2.2 H less 1 ns after silent's last word: no check yet
	if n := members(); n != 2 {
		t.Fatalf("between checks the group has %d members, want 2", n)
	}
	syncGroup(t, live)
	advance(time.Nanosecond, true) // check at 3 H
	if n := members(); n != 1 {
		t.Fatalf("at the check after 2.2 heartbeats of silence the group has %d members, want 1", n)
	}
	r, err := silent.readReply()
	if err != nil {
		t.Fatalf("silent member: %v", err)
	}
	wantEviction(t, r, wire.EvictStaleClient)
	if got, _ := syncGroup(t, live); !slices.Equal(got.Partitions, []uint32{0, 1}) {
		t.Fatalf("the live member owns %v after the eviction", got.Partitions)
	}
}

func TestPartitionChangeRebalances(t *testing.T) {
	s, admin := groupSetup(t, nil, 2)
	a := loggedIn(t, s)
	ok(t, a.do(wire.CmdJoinConsumerGroup, group0.AppendTo(nil)))
	before, _ := syncGroup(t, a)
	ok(t, admin.do(wire.CmdCreatePartitions, (&wire.PartitionsRequest{Stream: sid0, Topic: tid0, Count: 2}).AppendTo(nil)))
	after, _ := syncGroup(t, a)
	if len(after.Partitions) != 4 || after.Generation <= before.Generation {
		t.Fatalf("before %+v after %+v", before, after)
	}
	ok(t, admin.do(wire.CmdDeletePartitions, (&wire.PartitionsRequest{Stream: sid0, Topic: tid0, Count: 3}).AppendTo(nil)))
	after, _ = syncGroup(t, a)
	if !slices.Equal(after.Partitions, []uint32{0}) {
		t.Fatalf("after delete %+v", after)
	}
}

func TestGroupUnitCooperativeJoin(t *testing.T) {
	tp := &topic{partitions: make([]*partition, 6)}
	for i := range tp.partitions {
		tp.partitions[i] = &partition{id: uint32(i), offsets: map[consumerKey]uint64{}}
	}
	g := &group{topic: tp}
	s1, s2, s3 := &session{number: 1}, &session{number: 2}, &session{number: 3}
	now := time.Now()
	g.join(s1, now, time.Second)
	g.join(s2, now, time.Second)
	g.join(s3, now, time.Second)
	counts := []int{len(g.memberOf(s1).owned), len(g.memberOf(s2).owned), len(g.memberOf(s3).owned)}
	if counts[0]+counts[1]+counts[2] != 6 || slices.Contains(counts, 0) {
		t.Fatalf("owned counts %v", counts)
	}
	g.leave(s2)
	if !slices.Equal(g.memberOf(s1).owned, []uint32{0, 2, 4}) || !slices.Equal(g.memberOf(s3).owned, []uint32{1, 3, 5}) {
		t.Fatalf("after leave: %v %v", g.memberOf(s1).owned, g.memberOf(s3).owned)
	}
	// A pending hand-off completes at its deadline.
	g2 := &group{topic: tp}
	g2.join(s1, now, time.Second)
	g2.memberOf(s1).notePolled(5, 3)
	g2.join(s2, now, time.Second)
	if g2.memberOf(s1).canPoll(5) || !g2.memberOf(s1).owns(5) {
		t.Fatalf("partition 5 should be pending on s1")
	}
	g2.settle(now.Add(2 * time.Second))
	if !g2.memberOf(s2).owns(5) || g2.memberOf(s1).owns(5) {
		t.Fatalf("hand-off did not complete at the deadline")
	}
}
