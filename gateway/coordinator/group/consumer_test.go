package group

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// topicList is a Storage that only lists topics, all a consumer group asks of it.
type topicList struct {
	kafka.Storage
	topics []kafka.TopicInfo
}

func (s *topicList) ListTopics(context.Context) ([]kafka.TopicInfo, error) { return s.topics, nil }

var ordersID = [16]byte{0x80, 0x0a}

func cgID() kafka.Identity {
	id := testID
	id.Storage = &topicList{topics: []kafka.TopicInfo{{Name: "orders", ID: ordersID, Partitions: 4}}}
	return id
}

// cgm is a consumer-group member driven by hand: it owns what it was last assigned.
type cgm struct {
	id       string
	instance string
	epoch    int32
	owned    []int32
}

func (mb *cgm) req(group string) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group, r.MemberID, r.MemberEpoch = group, mb.id, mb.epoch
	if mb.instance != "" {
		r.InstanceID = kmsg.StringPtr(mb.instance)
	}
	r.RebalanceTimeoutMillis = 10000
	r.SubscribedTopicNames = []string{"orders"}
	r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if mb.epoch > 0 && len(mb.owned) > 0 {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: ordersID, Partitions: mb.owned}}
	}
	return r
}

func (mb *cgm) keepalive(group string) *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group, r.MemberID, r.MemberEpoch = group, mb.id, mb.epoch
	r.RebalanceTimeoutMillis = -1
	return r
}

func (e *env) cgBeat(group string, mb *cgm) *kmsg.ConsumerGroupHeartbeatResponse {
	e.t.Helper()
	return e.cgSend(mb, mb.req(group))
}

func (e *env) cgSend(mb *cgm, r *kmsg.ConsumerGroupHeartbeatRequest) *kmsg.ConsumerGroupHeartbeatResponse {
	e.t.Helper()
	resp := e.m.ConsumerHeartbeat(ctx(e.t), cgID(), r)
	if resp.ErrorCode == 0 {
		mb.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			mb.owned = nil
			for _, t := range resp.Assignment.Topics {
				mb.owned = append(mb.owned, t.Partitions...)
			}
		}
	}
	return resp
}

// settle heartbeats every member until the group is Stable.
func (e *env) settle(group string, ms ...*cgm) {
	e.t.Helper()
	for range 10 {
		for _, mb := range ms {
			if r := e.cgBeat(group, mb); r.ErrorCode != 0 {
				e.t.Fatalf("%s: %v", mb.id, kerr.ErrorForCode(r.ErrorCode))
			}
		}
		if d := e.m.ConsumerDescribe(group); d.State == "Stable" {
			return
		}
	}
	e.t.Fatalf("group %s did not settle: %+v", group, e.m.ConsumerDescribe(group))
}

func cgMember(t *testing.T, m *Manager, group, id string) (record.ConsumerMember, bool) {
	t.Helper()
	for _, g := range m.ConsumerGroups() {
		if g.Name == group {
			for _, mb := range g.Members {
				if mb.MemberID == id {
					return mb, true
				}
			}
		}
	}
	return record.ConsumerMember{}, false
}

// A member that sends no heartbeat for the session timeout is fenced on the manager's clock,
// through the journal; the other member then gets its partitions. A member that heartbeats is
// kept however long it runs.
func TestConsumerSessionTimeout(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ConsumerSessionTimeout = 45 * time.Second })
	a, b := &cgm{id: "A"}, &cgm{id: "B"}
	e.cgBeat("g", a)
	e.cgBeat("g", b)
	e.settle("g", a, b)
	if len(a.owned) != 2 || len(b.owned) != 2 {
		t.Fatalf("owned %v %v", a.owned, b.owned)
	}
	for range 4 {
		e.clk.Advance(20 * time.Second)
		if r := e.cgSend(b, b.keepalive("g")); r.ErrorCode != 0 {
			t.Fatalf("B keepalive: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	checkfor.Eventually(t, 5*time.Second, "A fenced", func() error {
		_, ok := cgMember(t, e.m, "g", "A")
		return checkfor.True(!ok, "A still a member")
	})
	var fenced *record.ConsumerGroup
	for _, r := range e.j.records() {
		if r.Type == record.TypeConsumerGroup && len(r.ConsumerGroup.Removed) == 1 && r.ConsumerGroup.Removed[0] == "A" {
			fenced = r.ConsumerGroup
		}
	}
	if fenced == nil {
		t.Fatal("the fencing was not journaled")
	}
	e.settle("g", b)
	if len(b.owned) != 4 {
		t.Fatalf("B owns %v after A was fenced", b.owned)
	}
	if r := e.cgSend(a, a.keepalive("g")); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("fenced member's heartbeat: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// A member told to revoke partitions that does not within its rebalance timeout is fenced,
// though it keeps heartbeating; its partitions go to the member that waited for them.
func TestConsumerRebalanceTimeout(t *testing.T) {
	e := newEnv(t, nil)
	a, b := &cgm{id: "A"}, &cgm{id: "B"}
	e.cgBeat("g", a)
	e.cgBeat("g", b)
	if r := e.cgBeat("g", a); r.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.ErrorCode))
	}
	// A was told to keep two; it goes on saying it owns four.
	a.owned = []int32{0, 1, 2, 3}
	if mb, _ := cgMember(t, e.m, "g", "A"); mb.State != record.MemberUnrevokedPartitions {
		t.Fatalf("A state %v", mb.State)
	}
	e.clk.Advance(9 * time.Second)
	if r := e.cgBeat("g", a); r.ErrorCode != 0 {
		t.Fatal(kerr.ErrorForCode(r.ErrorCode))
	}
	a.owned = []int32{0, 1, 2, 3}
	if _, ok := cgMember(t, e.m, "g", "A"); !ok {
		t.Fatal("A fenced before its rebalance timeout")
	}
	e.clk.Advance(time.Second)
	checkfor.Eventually(t, 5*time.Second, "A fenced", func() error {
		_, ok := cgMember(t, e.m, "g", "A")
		return checkfor.True(!ok, "A still a member")
	})
	e.settle("g", b)
	if len(b.owned) != 4 {
		t.Fatalf("B owns %v", b.owned)
	}
}

// What a manager journaled restores another manager with the same member epochs and
// assignments: the members go on heartbeating there with their epochs, and nothing rebalances.
func TestConsumerRestoreKeepsEpochs(t *testing.T) {
	e := newEnv(t, nil)
	a, b := &cgm{id: "A", instance: "ia"}, &cgm{id: "B"}
	e.cgBeat("g", a)
	e.cgBeat("g", b)
	e.settle("g", a, b)
	before := e.m.ConsumerGroups()

	st := record.NewState()
	st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1}})
	for i, r := range e.j.records() {
		r.Claim = 1
		st.Apply(uint64(i+1), r)
	}
	logged, ok := st.ConsumerGroup("g")
	if !ok {
		t.Fatal("no consumer group in the journal")
	}
	next := newEnv(t, nil)
	next.m.RestoreConsumerGroups([]record.ConsumerGroup{logged})
	if got := next.m.ConsumerGroups(); !reflect.DeepEqual(got, before) {
		t.Fatalf("restored\n%+v\nwas\n%+v", got, before)
	}
	epochs := []int32{a.epoch, b.epoch}
	owned := [][]int32{a.owned, b.owned}
	for range 3 {
		for _, mb := range []*cgm{a, b} {
			if r := next.cgSend(mb, mb.keepalive("g")); r.ErrorCode != 0 {
				t.Fatalf("%s at the new coordinator: %v", mb.id, kerr.ErrorForCode(r.ErrorCode))
			}
			if r := next.cgBeat("g", mb); r.ErrorCode != 0 {
				t.Fatalf("%s full heartbeat at the new coordinator: %v", mb.id, kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
	if a.epoch != epochs[0] || b.epoch != epochs[1] || !reflect.DeepEqual([][]int32{a.owned, b.owned}, owned) {
		t.Fatalf("epochs %d %d owned %v %v, were %v %v", a.epoch, b.epoch, a.owned, b.owned, epochs, owned)
	}
	if n := len(next.j.records()); n != 0 {
		t.Fatalf("%d records appended by heartbeats that changed nothing", n)
	}
}

// A heartbeat whose change the log refuses is answered with the log's error and changes
// nothing: the member is not in the group, and the next heartbeat, once the log takes it, joins.
func TestConsumerJournalFailure(t *testing.T) {
	e := newEnv(t, nil)
	e.j.fail = errBoom
	a := &cgm{id: "A"}
	if r := e.cgBeat("g", a); r.ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("join with the log down: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if gs := e.m.ConsumerGroups(); len(gs) != 0 {
		t.Fatalf("groups %+v after a failed join", gs)
	}
	e.j.fail = fmt.Errorf("taken over: %w", ErrNotCoordinator)
	if r := e.cgBeat("g", a); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after a takeover: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if e.m.Serving() {
		t.Fatal("still serving after the log was taken over")
	}
	f := newEnv(t, nil)
	if r := f.cgBeat("g", a); r.ErrorCode != 0 || a.epoch != 1 {
		t.Fatalf("join: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), a.epoch)
	}
}

// Kafka 4's mixed-group rules as served here: a classic group with members is not a consumer
// group (GROUP_ID_NOT_FOUND); an empty one becomes one on a join, keeping its offsets; a consumer
// group with members takes no classic join (INCONSISTENT_GROUP_PROTOCOL); an empty one becomes
// classic again.
func TestMixedGroups(t *testing.T) {
	e := newEnv(t, nil)
	e.stableGroup("classic", 1)
	if r := e.cgBeat("classic", &cgm{id: "X"}); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("heartbeat to a classic group with members: %v", kerr.ErrorForCode(r.ErrorCode))
	}

	if r := e.m.CommitOffsets(ctx(t), testID, commitReq("empty", "", -1, "orders", 1, 42)); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatal("simple commit failed")
	}
	a := &cgm{id: "A"}
	if r := e.cgBeat("empty", a); r.ErrorCode != 0 {
		t.Fatalf("join of an empty classic group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if ps := e.fetch("empty", "orders", 1); len(ps) != 1 || ps[0].Offset != 42 {
		t.Fatalf("offsets after the conversion: %+v", ps)
	}
	if lg := e.m.List(nil, []string{"consumer"}); len(lg) != 1 || lg[0].Group != "empty" || lg[0].GroupType != "consumer" {
		t.Fatalf("listed consumer groups %+v", lg)
	}
	if lg := e.m.List([]string{"stable"}, []string{"classic"}); len(lg) != 1 || lg[0].Group != "classic" {
		t.Fatalf("listed classic groups %+v", lg)
	}
	if d := e.m.Describe(6, "empty"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("classic describe of a consumer group: %v", kerr.ErrorForCode(d.ErrorCode))
	}
	if d := e.m.ConsumerDescribe("classic"); d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("consumer describe of a classic group: %v", kerr.ErrorForCode(d.ErrorCode))
	}
	if r := e.join(joinReq("empty", "")); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join of a consumer group with members: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if c := e.m.Delete(ctx(t), "empty"); c != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete of a consumer group with members: %v", kerr.ErrorForCode(c))
	}
	leave := a.keepalive("empty")
	leave.MemberEpoch = -1
	if r := e.cgSend(a, leave); r.ErrorCode != 0 {
		t.Fatalf("leave: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	ids, _ := e.stableGroup("empty", 1)
	if len(ids) != 1 || e.mustDescribe("empty").ErrorCode != 0 {
		t.Fatal("the empty consumer group did not become classic")
	}
	if ps := e.fetch("empty", "orders", 1); len(ps) != 1 || ps[0].Offset != 42 {
		t.Fatalf("offsets after the second conversion: %+v", ps)
	}
}

// Offset commits and fetches of consumer-group members are checked against the member epoch.
func TestConsumerOffsetEpochs(t *testing.T) {
	e := newEnv(t, nil)
	a := &cgm{id: "A"}
	e.cgBeat("g", a)
	code := func(r *kmsg.OffsetCommitRequest) int16 {
		return e.m.CommitOffsets(ctx(t), testID, r).Topics[0].Partitions[0].ErrorCode
	}
	if c := code(commitReq("g", "A", a.epoch, "orders", 0, 5)); c != 0 {
		t.Fatalf("commit at the member epoch: %v", kerr.ErrorForCode(c))
	}
	if c := code(commitReq("g", "A", a.epoch-1, "orders", 0, 6)); c != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit at an epoch before the member had the partition: %v", kerr.ErrorForCode(c))
	}
	// B joins: A's epoch moves on while it keeps partitions 0 and 1 (given at its first epoch),
	// and a commit of those at that first epoch is still taken (KIP-1251).
	first := a.epoch
	b := &cgm{id: "B"}
	e.cgBeat("g", b)
	e.settle("g", a, b)
	if a.epoch == first {
		t.Fatalf("A still at epoch %d", a.epoch)
	}
	kept := a.owned[0]
	if c := code(commitReq("g", "A", first, "orders", kept, 7)); c != 0 {
		t.Fatalf("commit of kept partition %d at A's first epoch: %v", kept, kerr.ErrorForCode(c))
	}
	if c := code(commitReq("g", "A", a.epoch+1, "orders", 0, 6)); c != kerr.StaleMemberEpoch.Code {
		t.Fatalf("commit ahead: %v", kerr.ErrorForCode(c))
	}
	if c := code(commitReq("g", "Z", a.epoch, "orders", 0, 6)); c != kerr.UnknownMemberID.Code {
		t.Fatalf("commit of an unknown member: %v", kerr.ErrorForCode(c))
	}
	old := commitReq("g", "A", a.epoch, "orders", 0, 6)
	old.Version = 8
	if c := code(old); c != kerr.UnsupportedVersion.Code {
		t.Fatalf("v8 commit of a consumer member: %v", kerr.ErrorForCode(c))
	}
	g := e.m.FetchOffsets(ctx(t), testID, "g", nil, false, kmsg.StringPtr("A"), a.epoch-1)
	if g.ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch at a stale epoch: %v", kerr.ErrorForCode(g.ErrorCode))
	}
	g = e.m.FetchOffsets(ctx(t), testID, "g", nil, false, kmsg.StringPtr("A"), a.epoch)
	if g.ErrorCode != 0 || len(g.Topics) != 1 || g.Topics[0].Partitions[0].Offset != 5 {
		t.Fatalf("fetch: %+v", g)
	}
}

// Heartbeats of one group are answered in the order the log holds their changes, also when
// many come at once: every member ends at the epoch the log shows, and folding the journal
// gives what the manager holds.
func TestConsumerConcurrentHeartbeats(t *testing.T) {
	e := newEnv(t, nil)
	ms := make([]*cgm, 8)
	errs := make(chan error, len(ms))
	for i := range ms {
		ms[i] = &cgm{id: fmt.Sprintf("m%d", i)}
		go func(mb *cgm) {
			r := e.m.ConsumerHeartbeat(ctx(t), cgID(), mb.req("g"))
			if r.ErrorCode != 0 {
				errs <- errors.New(kerr.ErrorForCode(r.ErrorCode).Error())
				return
			}
			mb.epoch = r.MemberEpoch
			errs <- nil
		}(ms[i])
	}
	for range ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := record.NewState()
	st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1}})
	for i, r := range e.j.records() {
		r.Claim = 1
		st.Apply(uint64(i+1), r)
	}
	logged, _ := st.ConsumerGroup("g")
	if held := e.m.ConsumerGroups(); len(held) != 1 || !reflect.DeepEqual(held[0], logged) || len(logged.Members) != 8 || logged.Epoch != 8 {
		t.Fatalf("held %+v\nlogged %+v", held, logged)
	}
}

// While a consumer heartbeat that makes a group a consumer group waits for the log, a classic
// JoinGroup of that group is told to retry (COORDINATOR_LOAD_IN_PROGRESS), so the group never
// has classic and consumer members at once; the heartbeat then joins.
func TestClassicJoinWhileConsumerJoinInFlight(t *testing.T) {
	e := newEnv(t, nil)
	gate := make(chan struct{})
	e.j.mu.Lock()
	e.j.gate = gate
	e.j.mu.Unlock()
	a := &cgm{id: "A"}
	done := make(chan *kmsg.ConsumerGroupHeartbeatResponse, 1)
	go func() { done <- e.m.ConsumerHeartbeat(ctx(t), cgID(), a.req("g")) }()
	checkfor.Eventually(t, 5*time.Second, "the join at the log", func() error {
		return checkfor.True(e.j.waiting() == 1, "%d appends waiting", e.j.waiting())
	})
	if r := e.join(joinReq("g", "")); r.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("classic join during the consumer join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	close(gate)
	if r := recv(t, done, "consumer join"); r.ErrorCode != 0 || r.MemberEpoch != 1 {
		t.Fatalf("consumer join: %+v", r)
	}
	if r := e.join(joinReq("g", "")); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("classic join of the consumer group: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
