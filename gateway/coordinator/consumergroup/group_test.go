package consumergroup

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// A first member gets every partition in its join answer, at epoch 1, and the group is Stable.
func TestFirstMemberGetsEverything(t *testing.T) {
	w := newWorld(t, topic("a", 1, 4))
	a := newClient(t, "A", "a")
	o := w.beat(a)
	if a.epoch != 1 || a.count() != 4 || o.Change == nil {
		t.Fatalf("epoch %d, %d partitions, change %v", a.epoch, a.count(), o.Change)
	}
	if w.g.State() != "Stable" || w.g.Epoch() != 1 || w.g.AssignmentEpoch() != 1 {
		t.Fatalf("state %s epoch %d/%d", w.g.State(), w.g.Epoch(), w.g.AssignmentEpoch())
	}
	// A keepalive changes nothing and carries no assignment.
	o = w.apply(w.g.Heartbeat(a.keepalive(), Client{ID: "cl", Host: "h"}, w.topics))
	if o.Change != nil || o.Resp.Assignment != nil || o.Resp.MemberEpoch != 1 || o.Alive != "A" {
		t.Fatalf("keepalive: change %v assignment %v epoch %d", o.Change, o.Resp.Assignment, o.Resp.MemberEpoch)
	}
}

// A second member gets nothing the first still owns: the first is told to revoke half, stays at
// its epoch until it says it did, and only then does the second get those partitions.
func TestRevokeBeforeAssign(t *testing.T) {
	w := newWorld(t, topic("a", 1, 4))
	a, b := newClient(t, "A", "a"), newClient(t, "B", "a")
	w.beat(a)
	w.beat(b)
	if b.epoch != 2 || b.count() != 0 {
		t.Fatalf("B at epoch %d with %d partitions while A owns them all", b.epoch, b.count())
	}
	if m, _ := w.g.Member("B"); m.State != record.MemberUnreleasedPartitions {
		t.Fatalf("B state %v", m.State)
	}
	// A's next heartbeat, still owning all four, is told to keep two.
	o := w.apply(w.g.Heartbeat(a.req(), Client{}, w.topics))
	if o.Resp.MemberEpoch != 1 || o.Resp.Assignment == nil || count(record.Assignment{{Partitions: o.Resp.Assignment.Topics[0].Partitions}}) != 2 {
		t.Fatalf("A answer: epoch %d assignment %+v", o.Resp.MemberEpoch, o.Resp.Assignment)
	}
	if m, _ := w.g.Member("A"); m.State != record.MemberUnrevokedPartitions || count(m.PendingRevocation) != 2 {
		t.Fatalf("A state %v pending %v", m.State, m.PendingRevocation)
	}
	// B heartbeats before A confirmed: still nothing.
	w.beat(b)
	if b.count() != 0 {
		t.Fatalf("B got %d partitions A has not revoked", b.count())
	}
	// A keepalive (owned not sent) keeps A revoking: nothing is assumed revoked.
	w.apply(w.g.Heartbeat(a.keepalive(), Client{}, w.topics))
	if m, _ := w.g.Member("A"); m.State != record.MemberUnrevokedPartitions {
		t.Fatalf("a keepalive ended A's revocation: %v", m.State)
	}
	// A takes the answer (dropping the two revoked) and says so: it moves to epoch 2.
	a.take(o)
	w.beat(a)
	if a.epoch != 2 || a.count() != 2 {
		t.Fatalf("A epoch %d with %d", a.epoch, a.count())
	}
	w.beat(b)
	if b.count() != 2 || b.epoch != 2 {
		t.Fatalf("B epoch %d with %d after A revoked", b.epoch, b.count())
	}
	clientsDisjoint(t, a, b)
	if w.g.State() != "Stable" {
		t.Fatalf("state %s", w.g.State())
	}
}

// Random joins, leaves, keepalives, lost answers and topic growth: no partition is ever held by
// two members or owned by two clients, every change folds to the group in memory, and once the
// members stop changing they all end Stable with every partition assigned, within one of each
// other.
func TestRandomConvergence(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 1))
		w := newWorld(t, topic("a", 1, 5), topic("b", 2, 3))
		var cs []*client
		next := 0
		for range 300 {
			switch k := rng.IntN(10); {
			case k == 0 && len(cs) < 6:
				next++
				cs = append(cs, newClient(t, string(rune('A'+next)), "a", "b"))
			case k == 1 && len(cs) > 1:
				i := rng.IntN(len(cs))
				r := cs[i].keepalive()
				r.MemberEpoch = LeaveEpoch
				w.apply(w.g.Heartbeat(r, Client{}, w.topics))
				cs = slices.Delete(cs, i, i+1)
			case k == 2 && len(cs) > 0:
				// An answer the client never got.
				w.apply(w.g.Heartbeat(cs[rng.IntN(len(cs))].req(), Client{}, w.topics))
			case k == 3 && seed%2 == 0:
				w.topics[0].Partitions = min(w.topics[0].Partitions+1, 9)
			case len(cs) > 0:
				c := cs[rng.IntN(len(cs))]
				var o Outcome
				if rng.IntN(3) == 0 && c.epoch > 0 {
					o = w.apply(w.g.Heartbeat(c.keepalive(), Client{}, w.topics))
				} else {
					o = w.apply(w.g.Heartbeat(c.req(), Client{}, w.topics))
				}
				if o.Resp.ErrorCode == kerr.FencedMemberEpoch.Code {
					c.epoch, c.owned = 0, nil
					continue
				}
				c.take(o)
			}
			clientsDisjoint(t, cs...)
		}
		if len(cs) == 0 {
			continue
		}
		for range 10 {
			for _, c := range cs {
				o := w.apply(w.g.Heartbeat(c.req(), Client{}, w.topics))
				if o.Resp.ErrorCode == kerr.FencedMemberEpoch.Code {
					c.epoch, c.owned = 0, nil
					continue
				}
				c.take(o)
			}
			clientsDisjoint(t, cs...)
		}
		if w.g.State() != "Stable" {
			t.Fatalf("seed %d: state %s after the members settled", seed, w.g.State())
		}
		total := int(w.topics[0].Partitions + w.topics[1].Partitions)
		sum, lo, hi := 0, total, 0
		for _, c := range cs {
			sum += c.count()
			lo, hi = min(lo, c.count()), max(hi, c.count())
		}
		if sum != total || hi-lo > 1 {
			t.Fatalf("seed %d: %d of %d partitions owned, counts from %d to %d", seed, sum, total, lo, hi)
		}
	}
}

func heartbeatCode(t *testing.T, g *Group, r *kmsg.ConsumerGroupHeartbeatRequest) int16 {
	t.Helper()
	return g.Heartbeat(r, Client{}, nil).Resp.ErrorCode
}

// Epochs as Kafka checks them: ahead is fenced, behind is fenced unless it is the previous epoch
// and the member owns no more than its assignment (its answer was lost).
func TestMemberEpochChecks(t *testing.T) {
	w := newWorld(t, topic("a", 1, 2))
	a, b := newClient(t, "A", "a"), newClient(t, "B", "a")
	w.beat(a)
	w.beat(b)
	w.beat(a) // revoke one
	a.owned = map[[16]byte][]int32{tid(1): a.owned[tid(1)]}
	w.beat(a) // epoch 2
	if a.epoch != 2 {
		t.Fatalf("A at %d", a.epoch)
	}
	r := a.req()
	r.MemberEpoch = 3
	if c := heartbeatCode(t, w.g, r); c != kerr.FencedMemberEpoch.Code {
		t.Fatalf("epoch ahead: %v", kerr.ErrorForCode(c))
	}
	r = a.req()
	r.MemberEpoch = 1 // the previous epoch, owning its assignment: accepted
	if c := heartbeatCode(t, w.g, r); c != 0 {
		t.Fatalf("previous epoch with a subset: %v", kerr.ErrorForCode(c))
	}
	r.Topics = append(r.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: tid(1), Partitions: []int32{0, 1}})
	if c := heartbeatCode(t, w.g, r); c != kerr.FencedMemberEpoch.Code {
		t.Fatalf("previous epoch owning more: %v", kerr.ErrorForCode(c))
	}
	r = a.keepalive()
	r.MemberEpoch = 1 // the previous epoch without saying what it owns
	if c := heartbeatCode(t, w.g, r); c != kerr.FencedMemberEpoch.Code {
		t.Fatalf("previous epoch, owned not sent: %v", kerr.ErrorForCode(c))
	}
	r = a.keepalive()
	r.MemberID = "nobody"
	if c := heartbeatCode(t, w.g, r); c != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %v", kerr.ErrorForCode(c))
	}
	// A member that rejoins with epoch 0 keeps its epoch and assignment and gets them whole.
	rejoin := newClient(t, "A", "a")
	o := w.apply(w.g.Heartbeat(rejoin.req(), Client{}, w.topics))
	if o.Resp.ErrorCode != 0 || o.Resp.MemberEpoch != 2 || o.Resp.Assignment == nil || len(o.Resp.Assignment.Topics) != 1 {
		t.Fatalf("rejoin: %+v", o.Resp)
	}
}

// Offset commits and fetches of a consumer group check the member epoch as Kafka does.
func TestCommitAndFetchCodes(t *testing.T) {
	w := newWorld(t, topic("a", 1, 2))
	if c, _ := w.g.CommitCode("", -1, 9); c != 0 {
		t.Fatalf("commit to an empty group: %v", kerr.ErrorForCode(c))
	}
	a := newClient(t, "A", "a")
	w.beat(a)
	for _, c := range []struct {
		member  string
		epoch   int32
		version int16
		want    *kerr.Error
	}{
		{"A", 1, 9, nil},
		{"A", 2, 9, kerr.StaleMemberEpoch},
		{"A", 1, 8, kerr.UnsupportedVersion},
		{"B", 1, 9, kerr.UnknownMemberID},
		{"", -1, 9, kerr.UnknownMemberID},
	} {
		want := int16(0)
		if c.want != nil {
			want = c.want.Code
		}
		if got, per := w.g.CommitCode(c.member, c.epoch, c.version); got != want || per != nil {
			t.Errorf("commit %+v: %v (per partition %v)", c, kerr.ErrorForCode(got), per != nil)
		}
	}
	if c := w.g.FetchCode(nil, -1); c != 0 {
		t.Fatalf("fetch without member: %v", kerr.ErrorForCode(c))
	}
	for _, e := range []int32{0, 2} {
		if c := w.g.FetchCode(kmsg.StringPtr("A"), e); c != kerr.StaleMemberEpoch.Code {
			t.Fatalf("fetch at epoch %d, the member's being 1: %v", e, kerr.ErrorForCode(c))
		}
	}
	if c := w.g.FetchCode(kmsg.StringPtr("Z"), 1); c != kerr.UnknownMemberID.Code {
		t.Fatalf("fetch of an unknown member: %v", kerr.ErrorForCode(c))
	}
}

// KIP-1251: a commit at an older member epoch (it raced the heartbeat that moved the member on)
// is taken for the partitions the member already held at that epoch, and refused as
// STALE_MEMBER_EPOCH for those it was given later.
func TestCommitAtAnOlderEpoch(t *testing.T) {
	w := newWorld(t, topic("a", 1, 2), topic("b", 2, 2))
	a := newClient(t, "A", "a")
	w.beat(a) // epoch 1, owns a/0 and a/1
	a.topics = []string{"a", "b"}
	w.beat(a) // epoch 2, owns a/0, a/1, b/0, b/1
	if a.epoch != 2 || a.count() != 4 {
		t.Fatalf("epoch %d with %v", a.epoch, a.owned)
	}
	code, per := w.g.CommitCode("A", 1, 9)
	if code != 0 || per == nil {
		t.Fatalf("commit at epoch 1: %v, per partition %v", kerr.ErrorForCode(code), per != nil)
	}
	for _, c := range []struct {
		topic string
		p     int32
		want  int16
	}{
		{"a", 0, 0}, {"a", 1, 0}, {"b", 0, kerr.StaleMemberEpoch.Code}, {"b", 1, kerr.StaleMemberEpoch.Code}, {"nope", 0, kerr.StaleMemberEpoch.Code},
	} {
		if got := per(c.topic, c.p); got != c.want {
			t.Errorf("%s/%d at epoch 1: %v, want %v", c.topic, c.p, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
}

// Kafka's request checks, with the codes it answers.
func TestValidate(t *testing.T) {
	base := func() *kmsg.ConsumerGroupHeartbeatRequest { return newClient(t, "A", "a").req() }
	cases := []struct {
		name string
		edit func(*kmsg.ConsumerGroupHeartbeatRequest)
		want *kerr.Error
	}{
		{"ok", func(*kmsg.ConsumerGroupHeartbeatRequest) {}, nil},
		{"no group", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Group = "" }, kerr.InvalidRequest},
		{"v1 join without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID = "" }, kerr.InvalidRequest},
		{"v0 join without member id", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID, r.Version = "", 0 }, nil},
		{"join owning partitions", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: tid(1), Partitions: []int32{0}}}
		}, kerr.InvalidRequest},
		{"join without owned", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.Topics = nil }, kerr.InvalidRequest},
		{"join without subscription", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }, kerr.InvalidRequest},
		{"join without rebalance timeout", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeoutMillis = -1 }, kerr.InvalidRequest},
		{"empty instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID = kmsg.StringPtr("") }, kerr.InvalidRequest},
		{"epoch -3", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -3 }, kerr.InvalidRequest},
		{"static leave without instance", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = LeftStatic }, kerr.InvalidRequest},
		{"unknown assignor", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = kmsg.StringPtr("sticky") }, kerr.UnsupportedAssignor},
		{"range", func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = kmsg.StringPtr("range") }, nil},
		{"bad regex", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("a(")
		}, kerr.InvalidRegularExpression},
		{"regex only", func(r *kmsg.ConsumerGroupHeartbeatRequest) {
			r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("a.*")
		}, nil},
	}
	for _, c := range cases {
		r := base()
		c.edit(r)
		got, _ := Validate(r)
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A static member that leaves for now (-2) keeps its partitions; the instance's next member,
// under a new member id, takes them over without a group epoch bump. While the instance's member
// is active, another member of it is UNRELEASED_INSTANCE_ID, and a stale member id is fenced.
func TestStaticMembers(t *testing.T) {
	w := newWorld(t, topic("a", 1, 4))
	a, b := newClient(t, "A1", "a"), newClient(t, "B", "a")
	a.instance = "ia"
	w.beat(a)
	w.beat(b)
	for range 3 {
		w.beat(a)
		w.beat(b)
	}
	if a.count() != 2 || b.count() != 2 {
		t.Fatalf("counts %d %d", a.count(), b.count())
	}
	// Keepalives carry no instance id; the member stays the instance's.
	if o := w.apply(w.g.Heartbeat(a.keepalive(), Client{ID: "cl", Host: "h"}, w.topics)); o.Resp.ErrorCode != 0 || o.Change != nil {
		t.Fatalf("static keepalive: %+v, change %+v", o.Resp, o.Change)
	}
	epoch := w.g.Epoch()
	clash := newClient(t, "A2", "a")
	clash.instance = "ia"
	if c := heartbeatCode(t, w.g, clash.req()); c != kerr.UnreleasedInstanceID.Code {
		t.Fatalf("second member of an active instance: %v", kerr.ErrorForCode(c))
	}
	r := a.keepalive()
	r.InstanceID = kmsg.StringPtr("ia")
	r.MemberEpoch = LeftStatic
	o := w.apply(w.g.Heartbeat(r, Client{}, w.topics))
	if o.Resp.ErrorCode != 0 || o.Resp.MemberEpoch != LeftStatic {
		t.Fatalf("static leave: %+v", o.Resp)
	}
	// B cannot take A's partitions while A's instance is away.
	w.beat(b)
	if b.count() != 2 {
		t.Fatalf("B took %d partitions of an away static member", b.count())
	}
	back := newClient(t, "A2", "a")
	back.instance = "ia"
	o = w.beat(back)
	if back.count() != 2 || !reflect.DeepEqual(back.owned, a.owned) || w.g.Epoch() != epoch {
		t.Fatalf("the instance came back with %v (had %v), epoch %d (was %d)", back.owned, a.owned, w.g.Epoch(), epoch)
	}
	if !slices.Equal(o.Change.Removed, []string{"A1"}) {
		t.Fatalf("removed %v", o.Change.Removed)
	}
	stale := a.keepalive()
	stale.InstanceID = kmsg.StringPtr("ia")
	if c := heartbeatCode(t, w.g, stale); c != kerr.FencedInstanceID.Code {
		t.Fatalf("old member id of the instance: %v", kerr.ErrorForCode(c))
	}
}

// Leaving bumps the group epoch and frees the member's partitions for the others; the last
// member leaving leaves an Empty group whose target is as new as it.
func TestLeaveAndFence(t *testing.T) {
	w := newWorld(t, topic("a", 1, 2))
	a, b := newClient(t, "A", "a"), newClient(t, "B", "a")
	w.beat(a)
	w.beat(b)
	w.beat(a)
	a.owned = map[[16]byte][]int32{tid(1): a.owned[tid(1)]}
	w.beat(a)
	w.beat(b)
	epoch := w.g.Epoch()
	r := b.keepalive()
	r.MemberEpoch = LeaveEpoch
	o := w.apply(w.g.Heartbeat(r, Client{}, w.topics))
	if o.Resp.ErrorCode != 0 || o.Resp.MemberEpoch != LeaveEpoch || w.g.Epoch() != epoch+1 {
		t.Fatalf("leave: %+v, epoch %d", o.Resp, w.g.Epoch())
	}
	w.beat(a)
	if a.count() != 2 {
		t.Fatalf("A has %d after B left", a.count())
	}
	if n, ch := w.g.Fence("A", ptr(int32(99))); n != nil || ch != nil {
		t.Fatal("fenced at an epoch the member is not at")
	}
	w.apply(func() Outcome {
		n, ch := w.g.Fence("A", nil)
		return Outcome{Resp: &kmsg.ConsumerGroupHeartbeatResponse{}, Next: n, Change: ch}
	}())
	if !w.g.Empty() || w.g.State() != "Empty" || w.g.AssignmentEpoch() != w.g.Epoch() {
		t.Fatalf("state %s epochs %d/%d", w.g.State(), w.g.Epoch(), w.g.AssignmentEpoch())
	}
}

func ptr[T any](v T) *T { return &v }

// A member subscribed by regex gets the topics whose whole name matches, and a topic created
// later that matches bumps the epoch and is assigned.
func TestRegexSubscription(t *testing.T) {
	w := newWorld(t, topic("orders", 1, 2), topic("orders-eu", 2, 1), topic("xorders", 3, 1))
	a := newClient(t, "A")
	a.regex = "orders.*"
	w.beat(a)
	if a.count() != 3 || len(a.owned[tid(3)]) != 0 {
		t.Fatalf("regex gave %v", a.owned)
	}
	epoch := w.g.Epoch()
	w.topics = append(w.topics, topic("orders-us", 4, 2))
	w.beat(a)
	if w.g.Epoch() != epoch+1 || len(a.owned[tid(4)]) != 2 {
		t.Fatalf("new matching topic: epoch %d, owned %v", w.g.Epoch(), a.owned)
	}
}

// The range assignor as Kafka documents it: two members, two topics of three partitions, the
// first member takes partitions 0 and 1 of both; static members come first, by instance id.
func TestRangeAssignor(t *testing.T) {
	topics := []record.TopicMeta{topic("t1", 1, 3), topic("t2", 2, 3)}
	both := map[string]bool{"t1": true, "t2": true}
	got := assignRange([]spec{{id: "m1", topics: both}, {id: "m0", topics: both}}, topics)
	want := map[string]record.Assignment{
		"m0": {{TopicID: tid(1), Partitions: []int32{0, 1}}, {TopicID: tid(2), Partitions: []int32{0, 1}}},
		"m1": {{TopicID: tid(1), Partitions: []int32{2}}, {TopicID: tid(2), Partitions: []int32{2}}},
	}
	for id, a := range want {
		if !reflect.DeepEqual(got[id].record(), a) {
			t.Errorf("%s: %v, want %v", id, got[id].record(), a)
		}
	}
	got = assignRange([]spec{{id: "a", topics: both}, {id: "z", instance: "i0", topics: both}}, topics)
	if !reflect.DeepEqual(got["z"].record(), want["m0"]) {
		t.Errorf("static member z: %v", got["z"].record())
	}
}

// The uniform assignor keeps what it can: a third member takes its share from the others, and
// no partition moves between the two that stay.
func TestUniformSticky(t *testing.T) {
	topics := []record.TopicMeta{topic("t", 1, 6)}
	sub := map[string]bool{"t": true}
	first := assignUniform([]spec{{id: "a", topics: sub}, {id: "b", topics: sub}}, topics)
	second := assignUniform([]spec{
		{id: "a", topics: sub, previous: first["a"].record()},
		{id: "b", topics: sub, previous: first["b"].record()},
		{id: "c", topics: sub},
	}, topics)
	for _, id := range []string{"a", "b", "c"} {
		if n := count(second[id].record()); n != 2 {
			t.Fatalf("%s owns %d", id, n)
		}
	}
	for _, id := range []string{"a", "b"} {
		for _, p := range second[id].record()[0].Partitions {
			if !contains(first[id].record(), tid(1), p) {
				t.Errorf("%s was given partition %d it did not have", id, p)
			}
		}
	}
}

// A group with members of both assignors uses the one most ask for.
func TestAssignorVote(t *testing.T) {
	w := newWorld(t, topic("a", 1, 3))
	a, b, c := newClient(t, "A", "a"), newClient(t, "B", "a"), newClient(t, "C", "a")
	b.assignor, c.assignor = Range, Range
	w.beat(a)
	if w.g.Assignor() != Uniform {
		t.Fatal(w.g.Assignor())
	}
	w.beat(b)
	w.beat(c)
	if w.g.Assignor() != Range || w.g.Describe().AssignorName != Range {
		t.Fatalf("assignor %s", w.g.Assignor())
	}
}
