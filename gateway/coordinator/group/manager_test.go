package group

import (
	"context"
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

func TestJoinMemberIDRequired(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []joinOpt
		wantCode int16
	}{
		{"v4 dynamic gets its id first", []joinOpt{withVersion(4)}, kerr.MemberIDRequired.Code},
		{"v9 dynamic gets its id first", nil, kerr.MemberIDRequired.Code},
		{"v3 joins at once", []joinOpt{withVersion(3)}, 0},
		{"v5 static joins at once", []joinOpt{withVersion(5), withInstance("i1")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			r := e.join(joinReq("g", "", tc.opts...))
			if r.ErrorCode != tc.wantCode || r.MemberID == "" {
				t.Fatalf("code %d member %q, want %d with an id", r.ErrorCode, r.MemberID, tc.wantCode)
			}
			if tc.wantCode == 0 {
				if r.Generation != 1 || r.LeaderID != r.MemberID || len(r.Members) != 1 {
					t.Fatalf("join: %+v", r)
				}
				return
			}
			r2 := e.join(joinReq("g", r.MemberID, tc.opts...))
			if r2.ErrorCode != 0 || r2.MemberID != r.MemberID || r2.Generation != 1 {
				t.Fatalf("second join: %+v", r2)
			}
		})
	}
}

func TestJoinErrors(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MinSessionTimeout = time.Second; c.MaxSessionTimeout = time.Minute })
	ids, gen := e.stableGroup("g", 1)
	for _, tc := range []struct {
		name string
		req  *kmsg.JoinGroupRequest
		want int16
	}{
		{"session below min", joinReq("g", "", withTimeouts(999*time.Millisecond, time.Minute)), kerr.InvalidSessionTimeout.Code},
		{"session above max", joinReq("g", "", withTimeouts(time.Minute+time.Millisecond, time.Minute)), kerr.InvalidSessionTimeout.Code},
		{"unknown member of unknown group", joinReq("nope", "m-1"), kerr.UnknownMemberID.Code},
		{"unknown member", joinReq("g", "m-1"), kerr.UnknownMemberID.Code},
		{"other protocol type", joinReq("g", "", withType("connect")), kerr.InconsistentGroupProtocol.Code},
		{"no common protocol", joinReq("g", "", withProtocols("roundrobin")), kerr.InconsistentGroupProtocol.Code},
		{"empty protocol type", joinReq("new", "", withType("")), kerr.InconsistentGroupProtocol.Code},
		{"no protocols", joinReq("new", "", withProtocols()), kerr.InconsistentGroupProtocol.Code},
		{"no group id", joinReq("", ""), kerr.InvalidGroupID.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := e.join(tc.req); r.ErrorCode != tc.want {
				t.Fatalf("code %d, want %d", r.ErrorCode, tc.want)
			}
		})
	}
	if got := e.generation("g"); got != gen || e.members("g") != 1 {
		t.Fatalf("a refused join changed the group: generation %d members %d", got, e.members("g"))
	}
	if c := e.heartbeat("g", ids[0], gen, nil); c != 0 {
		t.Fatalf("heartbeat after refused joins: %d", c)
	}
	if gs := e.m.Groups(); len(gs) != 1 {
		t.Fatalf("refused joins left groups behind: %v", gs)
	}
}

func TestHeartbeatAndSyncCodes(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 2)
	for _, tc := range []struct {
		name   string
		group  string
		member string
		gen    int32
		want   int16
	}{
		{"ok", "g", ids[1], gen, 0},
		{"unknown member", "g", "x", gen, kerr.UnknownMemberID.Code},
		{"unknown group", "h", ids[1], gen, kerr.UnknownMemberID.Code},
		{"old generation", "g", ids[1], gen - 1, kerr.IllegalGeneration.Code},
	} {
		t.Run("heartbeat "+tc.name, func(t *testing.T) {
			if c := e.heartbeat(tc.group, tc.member, tc.gen, nil); c != tc.want {
				t.Fatalf("code %d, want %d", c, tc.want)
			}
		})
		t.Run("sync "+tc.name, func(t *testing.T) {
			r := recv(t, e.syncAsync(tc.group, tc.member, tc.gen, nil), "sync")
			if r.ErrorCode != tc.want {
				t.Fatalf("code %d, want %d", r.ErrorCode, tc.want)
			}
			if tc.want == 0 && string(r.MemberAssignment) != "assign-"+tc.member {
				t.Fatalf("stable sync returned %q", r.MemberAssignment)
			}
		})
	}
	// SyncGroup v5 checks protocol type and name.
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version, req.Group, req.MemberID, req.Generation = 5, "g", ids[1], gen
	req.ProtocolType = kmsg.StringPtr("connect")
	if r, _ := e.m.Sync(ctx(t), testID, req); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("sync with other protocol type: %d", r.ErrorCode)
	}
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("sticky")
	if r, _ := e.m.Sync(ctx(t), testID, req); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("sync with other protocol: %d", r.ErrorCode)
	}

	// A third member starts a rebalance: heartbeats say so and the session stays alive.
	_, third := e.joinNew("g")
	e.checkState("g", "PreparingRebalance")
	if c := e.heartbeat("g", ids[1], gen, nil); c != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat while preparing: %d", c)
	}
	if r := recv(t, e.syncAsync("g", ids[1], gen, nil), "sync"); r.ErrorCode != kerr.RebalanceInProgress.Code {
		t.Fatalf("sync while preparing: %d", r.ErrorCode)
	}
	notYet(t, third, "third member")
}

// Two members, then a third: everyone rejoins, the leader gets every member's metadata, and
// nobody gets an assignment before the leader's snapshot is in the log.
func TestRebalanceAndSyncWaitsForTheLog(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 2)
	leader, follower := ids[0], ids[1]

	newID, newJoin := e.joinNew("g", withProtocols("range", "roundrobin"))
	if c := e.heartbeat("g", follower, gen, nil); c != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat: %d", c)
	}
	lj := e.rejoin("g", leader)
	notYet(t, lj, "leader join before the follower rejoined")
	fj := e.rejoin("g", follower)
	var leaderResp *kmsg.JoinGroupResponse
	for _, ch := range []<-chan joinResult{lj, fj, newJoin} {
		r := recv(t, ch, "join").resp
		if r.ErrorCode != 0 || r.Generation != gen+1 || r.LeaderID != leader || r.Protocol == nil || *r.Protocol != "range" {
			t.Fatalf("join: %+v", r)
		}
		if r.MemberID == leader {
			leaderResp = r
		} else if len(r.Members) != 0 {
			t.Fatalf("a follower got the member list")
		}
	}
	if len(leaderResp.Members) != 3 {
		t.Fatalf("leader got %d members", len(leaderResp.Members))
	}

	gate := make(chan struct{})
	e.j.mu.Lock()
	e.j.gate = gate
	e.j.mu.Unlock()
	fs := e.syncAsync("g", follower, gen+1, nil)
	ns := e.syncAsync("g", newID, gen+1, nil)
	ls := e.syncAsync("g", leader, gen+1, map[string][]byte{leader: []byte("L"), follower: []byte("F")})
	checkfor.Eventually(t, 5*time.Second, "snapshot append", func() error {
		return checkfor.True(e.j.waiting() == 1, "%d appends waiting", e.j.waiting())
	})
	notYet(t, fs, "follower sync before the log")
	notYet(t, ls, "leader sync before the log")
	if c := e.heartbeat("g", follower, gen+1, nil); c != 0 {
		t.Fatalf("heartbeat while completing: %d", c)
	}
	e.j.mu.Lock()
	e.j.gate = nil
	e.j.mu.Unlock()
	close(gate)
	want := map[string]string{leader: "L", follower: "F", newID: string(emptyConsumerAssignment)}
	for id, ch := range map[string]<-chan *kmsg.SyncGroupResponse{leader: ls, follower: fs, newID: ns} {
		r := recv(t, ch, "sync")
		if r.ErrorCode != 0 || string(r.MemberAssignment) != want[id] || r.Protocol == nil || *r.Protocol != "range" || r.ProtocolType == nil || *r.ProtocolType != "consumer" {
			t.Fatalf("sync of %s: %+v", id, r)
		}
	}
	snap := e.j.lastGroup("g")
	if snap == nil || snap.Generation != gen+1 || snap.State != "Stable" || snap.Leader != leader || len(snap.Members) != 3 {
		t.Fatalf("snapshot: %+v", snap)
	}
	for _, m := range snap.Members {
		if string(m.Assignment) != want[m.MemberID] {
			t.Fatalf("snapshot assignment of %s: %q", m.MemberID, m.Assignment)
		}
		if m.MemberID == newID && (len(m.Protocols) != 2 || m.Protocols[1].Name != "roundrobin") {
			t.Fatalf("snapshot lost protocols: %+v", m.Protocols)
		}
	}
	e.checkState("g", "Stable")
}

// A failed snapshot append gives no assignment; the group rebalances.
func TestSyncJournalFailure(t *testing.T) {
	e := newEnv(t, nil)
	r := e.join(joinReq("g", "", withVersion(3)))
	e.j.mu.Lock()
	e.j.fail = errBoom
	e.j.mu.Unlock()
	s := recv(t, e.syncAsync("g", r.MemberID, r.Generation, map[string][]byte{r.MemberID: []byte("a")}), "sync")
	if s.ErrorCode != kerr.CoordinatorNotAvailable.Code || len(s.MemberAssignment) != 0 {
		t.Fatalf("sync on a failing log: %+v", s)
	}
	e.checkState("g", "PreparingRebalance")
	if !e.m.Serving() {
		t.Fatal("an ordinary log error stopped the manager")
	}
}

// Losing the partition answers NOT_COORDINATOR and stops the manager; Close releases parked
// joins with NOT_COORDINATOR.
func TestNotCoordinator(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 2)
	e.j.mu.Lock()
	e.j.fail = fmt.Errorf("claim 7 follows ours: %w", ErrNotCoordinator)
	e.j.mu.Unlock()
	resp := e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, "t1", 0, 5))
	if c := resp.Topics[0].Partitions[0].ErrorCode; c != kerr.NotCoordinator.Code {
		t.Fatalf("commit: %d", c)
	}
	if e.m.Serving() {
		t.Fatal("still serving after the partition was lost")
	}
	if c := e.heartbeat("g", ids[0], gen, nil); c != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat after loss: %d", c)
	}

	// The same from a snapshot append: the leader's SyncGroup answers NOT_COORDINATOR.
	e3 := newEnv(t, nil)
	j3 := e3.join(joinReq("g3", "", withVersion(3)))
	e3.j.mu.Lock()
	e3.j.fail = fmt.Errorf("fenced: %w", ErrNotCoordinator)
	e3.j.mu.Unlock()
	if s := recv(t, e3.syncAsync("g3", j3.MemberID, j3.Generation, nil), "sync"); s.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("sync on a lost partition: %+v", s)
	}
	if e3.m.Serving() {
		t.Fatal("still serving after the snapshot found the partition lost")
	}

	e2 := newEnv(t, nil)
	_, j := e2.joinNew("g2")
	recv(t, j, "first")
	_, parked := e2.joinNew("g2")
	e2.m.Close()
	if r := recv(t, parked, "parked join"); r.resp.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("parked join on close: %d", r.resp.ErrorCode)
	}
	if r := e2.join(joinReq("g2", "")); r.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("join after close: %d", r.ErrorCode)
	}
}

// Timeouts fire exactly when the fake clock passes them.
func TestTimeouts(t *testing.T) {
	t.Run("session", func(t *testing.T) {
		e := newEnv(t, nil)
		ids, gen := e.stableGroup("g", 2, withTimeouts(10*time.Second, 20*time.Second))
		e.clk.Advance(5 * time.Second)
		if c := e.heartbeat("g", ids[0], gen, nil); c != 0 {
			t.Fatalf("heartbeat: %d", c)
		}
		// ids[1]'s session started at the end of its sync, 5 s ago.
		e.clk.Advance(5*time.Second - time.Nanosecond)
		if e.members("g") != 2 {
			t.Fatal("a member expired early")
		}
		e.clk.Advance(time.Nanosecond)
		checkfor.Eventually(t, 5*time.Second, "member expiry", func() error {
			return checkfor.True(e.members("g") == 1, "%d members", e.members("g"))
		})
		if c := e.heartbeat("g", ids[1], gen, nil); c != kerr.UnknownMemberID.Code {
			t.Fatalf("expired member's heartbeat: %d", c)
		}
		// The other member's session runs from its heartbeat, 5 s after the start.
		e.clk.Advance(5*time.Second - time.Nanosecond)
		e.checkState("g", "PreparingRebalance")
		e.clk.Advance(time.Nanosecond)
		e.checkState("g", "Empty")
		checkfor.Eventually(t, 5*time.Second, "empty snapshot", func() error {
			s := e.j.lastGroup("g")
			return checkfor.True(s != nil && s.State == "Empty" && len(s.Members) == 0 && s.Generation == gen+1, "snapshot %+v", s)
		})
	})
	t.Run("rebalance", func(t *testing.T) {
		e := newEnv(t, nil)
		ids, gen := e.stableGroup("g", 2, withTimeouts(30*time.Second, 20*time.Second))
		_, third := e.joinNew("g", withTimeouts(30*time.Second, 20*time.Second))
		lj := e.rejoin("g", ids[0], withTimeouts(30*time.Second, 20*time.Second))
		e.clk.Advance(20*time.Second - time.Nanosecond)
		notYet(t, lj, "join before the rebalance timeout")
		e.clk.Advance(time.Nanosecond)
		r := recv(t, lj, "join at the rebalance timeout").resp
		if r.ErrorCode != 0 || r.Generation != gen+1 || len(r.Members) != 2 {
			t.Fatalf("join: %+v", r)
		}
		recv(t, third, "third")
		if c := e.heartbeat("g", ids[1], gen, nil); c != kerr.UnknownMemberID.Code {
			t.Fatalf("member that did not rejoin: %d", c)
		}
	})
	t.Run("pending sync", func(t *testing.T) {
		e := newEnv(t, nil)
		ids, gen := e.stableGroup("g", 2, withTimeouts(30*time.Second, 20*time.Second))
		_, third := e.joinNew("g", withTimeouts(30*time.Second, 20*time.Second))
		a := e.rejoin("g", ids[0], withTimeouts(30*time.Second, 20*time.Second))
		b := e.rejoin("g", ids[1], withTimeouts(30*time.Second, 20*time.Second))
		for _, ch := range []<-chan joinResult{a, b, third} {
			recv(t, ch, "join")
		}
		if r := recv(t, e.syncAsync("g", ids[0], gen+1, map[string][]byte{}), "leader sync"); r.ErrorCode != 0 {
			t.Fatalf("leader sync: %d", r.ErrorCode)
		}
		// ids[1] and the third member never sync: after the rebalance timeout they are gone,
		// although the leader's assignment made the group Stable.
		e.clk.Advance(20*time.Second - time.Nanosecond)
		if e.members("g") != 3 || e.mustDescribe("g").State != "Stable" {
			t.Fatalf("members removed early: %+v", e.mustDescribe("g"))
		}
		e.clk.Advance(time.Nanosecond)
		checkfor.Eventually(t, 5*time.Second, "unsynced members removed", func() error {
			return checkfor.True(e.members("g") == 1, "%d members", e.members("g"))
		})
		if c := e.heartbeat("g", ids[0], gen+1, nil); c != kerr.RebalanceInProgress.Code {
			t.Fatalf("leader heartbeat after the removal: %d", c)
		}
	})
	t.Run("initial delay", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.InitialRebalanceDelay = 3 * time.Second })
		_, a := e.joinNew("g", withTimeouts(30*time.Second, 10*time.Second))
		e.clk.Advance(2 * time.Second)
		_, b := e.joinNew("g", withTimeouts(30*time.Second, 10*time.Second))
		// A member came during the first 3 s: the delay runs again, to 6 s.
		seq := e.timerSeq("g")
		e.clk.Advance(time.Second)
		checkfor.Eventually(t, 5*time.Second, "delay extended", func() error {
			return checkfor.True(e.timerSeq("g") != seq, "timer %d", seq)
		})
		e.clk.Advance(3*time.Second - time.Nanosecond)
		notYet(t, a, "join before the extended delay")
		e.clk.Advance(time.Nanosecond)
		ra, rb := recv(t, a, "a").resp, recv(t, b, "b").resp
		if ra.Generation != 1 || rb.Generation != 1 || (len(ra.Members)+len(rb.Members)) != 2 {
			t.Fatalf("joins: %+v %+v", ra, rb)
		}
	})
	t.Run("pending member", func(t *testing.T) {
		e := newEnv(t, nil)
		r := e.join(joinReq("g", "", withTimeouts(10*time.Second, 20*time.Second)))
		e.clk.Advance(10*time.Second - time.Nanosecond)
		if len(e.m.Groups()) != 1 {
			t.Fatal("pending member dropped early")
		}
		e.clk.Advance(time.Nanosecond)
		checkfor.Eventually(t, 5*time.Second, "pending member dropped", func() error {
			return checkfor.True(len(e.m.Groups()) == 0, "groups %v", e.m.Groups())
		})
		if j := e.join(joinReq("g", r.MemberID)); j.ErrorCode != kerr.UnknownMemberID.Code {
			t.Fatalf("expired pending member joins: %d", j.ErrorCode)
		}
	})
}

// A static member restarting with its group.instance.id takes its place without a rebalance;
// its old member id is fenced.
func TestStaticMemberReplacement(t *testing.T) {
	e := newEnv(t, nil)
	first := e.join(joinReq("g", "", withInstance("i1")))
	if first.ErrorCode != 0 {
		t.Fatalf("static join: %d", first.ErrorCode)
	}
	dynID, dyn := e.joinNew("g")
	sj := e.rejoin("g", first.MemberID, withInstance("i1"))
	recv(t, dyn, "dynamic")
	r := recv(t, sj, "static").resp
	gen := r.Generation
	ls := e.syncAsync("g", first.MemberID, gen, map[string][]byte{first.MemberID: []byte("S"), dynID: []byte("D")})
	recv(t, e.syncAsync("g", dynID, gen, nil), "dynamic sync")
	recv(t, ls, "static sync")
	e.checkState("g", "Stable")
	recsBefore := len(e.j.records())

	// Restart: new metadata (owned partitions differ after a restart), same protocol.
	restart := joinReq("g", "", withInstance("i1"))
	restart.Protocols[0].Metadata = consumerMeta("t1", "t2")
	re := e.join(restart)
	if re.ErrorCode != 0 || re.MemberID == first.MemberID || re.Generation != gen || re.LeaderID != re.MemberID || !re.SkipAssignment {
		t.Fatalf("static rejoin: %+v", re)
	}
	if e.generation("g") != gen || e.mustDescribe("g").State != "Stable" {
		t.Fatal("static rejoin rebalanced")
	}
	if c := e.heartbeat("g", dynID, gen, nil); c != 0 {
		t.Fatalf("other member after static rejoin: %d", c)
	}
	if c := e.heartbeat("g", first.MemberID, gen, kmsg.StringPtr("i1")); c != kerr.FencedInstanceID.Code {
		t.Fatalf("old static id: %d", c)
	}
	if s := recv(t, e.syncAsync("g", re.MemberID, gen, nil), "sync"); string(s.MemberAssignment) != "S" {
		t.Fatalf("replaced member's assignment: %q", s.MemberAssignment)
	}
	snap := e.j.lastGroup("g")
	if len(e.j.records()) != recsBefore+1 || snap.Generation != gen || snap.Leader != re.MemberID {
		t.Fatalf("replacement journaled as %+v", snap)
	}
	var found bool
	for _, m := range snap.Members {
		if m.InstanceID == "i1" {
			found = m.MemberID == re.MemberID && string(m.Assignment) == "S" && reflect.DeepEqual(m.Protocols[0].Metadata, consumerMeta("t1", "t2"))
		}
	}
	if !found {
		t.Fatalf("snapshot members: %+v", snap.Members)
	}
	// A static leave by instance id with a stale member id is fenced; by the current one works.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 5, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: first.MemberID, InstanceID: kmsg.StringPtr("i1")}, {InstanceID: kmsg.StringPtr("i9")}}
	lr := e.m.Leave(ctx(t), testID, leave)
	if lr.Members[0].ErrorCode != kerr.FencedInstanceID.Code || lr.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave: %+v", lr.Members)
	}
}

func TestLeaveBatch(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 3)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version, req.Group = 3, "g"
	req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[1]}, {MemberID: "nobody"}, {MemberID: ids[2]}}
	r := e.m.Leave(ctx(t), testID, req)
	want := []int16{0, kerr.UnknownMemberID.Code, 0}
	for i, m := range r.Members {
		if m.ErrorCode != want[i] || m.MemberID != req.Members[i].MemberID {
			t.Fatalf("member %d: %+v", i, m)
		}
	}
	e.checkState("g", "PreparingRebalance")
	j := e.join(joinReq("g", ids[0]))
	if j.Generation != gen+1 || len(j.Members) != 1 {
		t.Fatalf("rejoin after leave: %+v", j)
	}
	// v0-2 answer at the top level.
	old := kmsg.NewPtrLeaveGroupRequest()
	old.Version, old.Group, old.MemberID = 1, "g", "nobody"
	if r := e.m.Leave(ctx(t), testID, old); r.ErrorCode != kerr.UnknownMemberID.Code || len(r.Members) != 0 {
		t.Fatalf("v1 leave: %+v", r)
	}
	old.MemberID = ids[0]
	if r := e.m.Leave(ctx(t), testID, old); r.ErrorCode != 0 {
		t.Fatalf("v1 leave: %+v", r)
	}
	e.checkState("g", "Empty")
}

// A batched leave of a group this manager never knew answers each member, not a panic.
func TestLeaveUnknownGroup(t *testing.T) {
	e := newEnv(t, nil)
	for _, v := range []int16{3, 5} {
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version, req.Group = v, "never-seen"
		req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "a"}, {MemberID: "b", InstanceID: kmsg.StringPtr("i")}}
		r := e.m.Leave(ctx(t), testID, req)
		if r.ErrorCode != 0 || len(r.Members) != 2 {
			t.Fatalf("v%d: %+v", v, r)
		}
		for _, m := range r.Members {
			if m.ErrorCode != kerr.UnknownMemberID.Code {
				t.Fatalf("v%d member %s: code %d", v, m.MemberID, m.ErrorCode)
			}
		}
	}
}

func commitReq(group, member string, gen int32, topic string, part int32, off int64) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.MemberID, req.Generation = group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = part, off, 4, kmsg.StringPtr("meta")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func (e *env) fetch(group, topic string, parts ...int32) []kmsg.OffsetFetchResponseGroupTopicPartition {
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if topic != "" {
		topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: parts}}
	}
	g := e.m.FetchOffsets(ctx(e.t), testID, group, topics, false, nil, -1)
	var out []kmsg.OffsetFetchResponseGroupTopicPartition
	for _, t := range g.Topics {
		out = append(out, t.Partitions...)
	}
	return out
}

// Config.CommitTopic is asked once per topic of a commit, before the commit is journaled: a
// topic it refuses is answered with its code and not journaled, the others are committed, and a
// drop it makes of the same manager's offsets lands in the log ahead of the commit.
func TestCommitTopicHook(t *testing.T) {
	var asked []string
	e := newEnv(t, func(c *Config) {
		c.CommitTopic = func(ctx context.Context, m *Manager, topic string) error {
			asked = append(asked, topic)
			switch topic {
			case "gone":
				return kerr.UnknownTopicOrPartition
			case "renewed":
				return m.DropTopics(ctx, func(name string) bool { return name == topic })
			}
			return nil
		}
	})
	if c := e.m.CommitOffsets(ctx(t), testID, commitReq("other", "", -1, "renewed", 0, 70)).Topics[0].Partitions[0].ErrorCode; c != 0 {
		t.Fatalf("first commit: %d", c)
	}
	req := commitReq("g", "", -1, "t1", 0, 5)
	for _, topic := range []string{"gone", "renewed", "t1"} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 1, 6
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	asked = nil
	resp := e.m.CommitOffsets(ctx(t), testID, req)
	if fmt.Sprint(asked) != "[t1 gone renewed]" {
		t.Fatalf("asked about %v, want each topic once in request order", asked)
	}
	codes := map[string][]int16{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			codes[rt.Topic] = append(codes[rt.Topic], rp.ErrorCode)
		}
	}
	if fmt.Sprint(codes) != fmt.Sprint(map[string][]int16{"t1": {0, 0}, "gone": {kerr.UnknownTopicOrPartition.Code}, "renewed": {0}}) {
		t.Fatalf("codes %v", codes)
	}
	if got := e.fetch("g", "gone", 1); got[0].Offset != -1 {
		t.Fatalf("a refused topic was committed: %+v", got)
	}
	if got := e.fetch("other", "renewed", 0); got[0].Offset != -1 {
		t.Fatalf("the hook's drop did not happen: %+v", got)
	}
	var order []string
	for _, r := range e.j.records() {
		switch r.Type {
		case record.TypeOffsetCommit:
			order = append(order, "commit "+r.OffsetCommit.Group+" "+r.OffsetCommit.Topic)
		case record.TypeOffsetDeleted:
			order = append(order, "deleted "+r.OffsetDeleted.Group+" "+r.OffsetDeleted.Topic)
		}
	}
	want := "[commit other renewed deleted other renewed commit g t1 commit g renewed commit g t1]"
	if fmt.Sprint(order) != want {
		t.Fatalf("journal %v, want %s", order, want)
	}
}

func TestOffsetCommit(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.FallbackOffset = func(_ context.Context, _ kafka.Identity, group, topic string, p int32) (int64, bool, error) {
			if topic == "native" && p == 1 {
				return 77, true, nil
			}
			return 0, false, nil
		}
	})
	// The simple-consumer pattern: no members, generation -1.
	code := func(r *kmsg.OffsetCommitResponse) int16 { return r.Topics[0].Partitions[0].ErrorCode }
	if c := code(e.m.CommitOffsets(ctx(t), testID, commitReq("simple", "", -1, "t1", 0, 42))); c != 0 {
		t.Fatalf("simple commit: %d", c)
	}
	got := e.fetch("simple", "t1", 0, 1)
	if got[0].Offset != 42 || got[0].LeaderEpoch != 4 || got[0].Metadata == nil || *got[0].Metadata != "meta" || got[1].Offset != -1 || got[1].LeaderEpoch != -1 {
		t.Fatalf("fetch: %+v", got)
	}
	if got := e.fetch("simple", "native", 0, 1); got[0].Offset != -1 || got[1].Offset != 77 {
		t.Fatalf("fallback: %+v", got)
	}
	if got := e.fetch("nobody", "t1", 3); got[0].Offset != -1 || got[0].ErrorCode != 0 {
		t.Fatalf("unknown group: %+v", got)
	}
	rec := e.j.records()
	if len(rec) != 1 || rec[0].Type != record.TypeOffsetCommit || *rec[0].OffsetCommit != (record.OffsetCommit{
		Group: "simple", Topic: "t1", Partition: 0, Offset: 42, LeaderEpoch: 4, Metadata: "meta", Expire: t0.Add(7 * 24 * time.Hour)}) {
		t.Fatalf("journal: %+v", rec[0].OffsetCommit)
	}

	ids, gen := e.stableGroup("g", 2)
	for _, tc := range []struct {
		name   string
		member string
		gen    int32
		want   int16
	}{
		{"member", ids[1], gen, 0},
		{"simple commit to a group with members", "", -1, kerr.UnknownMemberID.Code},
		{"unknown member", "x", gen, kerr.UnknownMemberID.Code},
		{"old generation", ids[1], gen - 1, kerr.IllegalGeneration.Code},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := code(e.m.CommitOffsets(ctx(t), testID, commitReq("g", tc.member, tc.gen, "t1", 3, 9))); c != tc.want {
				t.Fatalf("code %d, want %d", c, tc.want)
			}
		})
	}
	if c := code(e.m.CommitOffsets(ctx(t), testID, commitReq("other", "m", 3, "t1", 0, 1))); c != kerr.IllegalGeneration.Code {
		t.Fatalf("generation commit to an unknown group: %d", c)
	}
	big := commitReq("g", ids[0], gen, "t1", 0, 1)
	big.Topics[0].Partitions[0].Metadata = kmsg.StringPtr(string(make([]byte, maxMetadata+1)))
	if c := code(e.m.CommitOffsets(ctx(t), testID, big)); c != kerr.OffsetMetadataTooLarge.Code {
		t.Fatalf("large metadata: %d", c)
	}
	v10 := commitReq("g", ids[0], gen, "", 0, 1)
	v10.Version = 10
	if c := code(e.m.CommitOffsets(ctx(t), testID, v10)); c != kerr.UnknownTopicID.Code {
		t.Fatalf("v10: %d", c)
	}
	// While completing a rebalance, commits wait for the next generation.
	_, third := e.joinNew("g")
	a := e.rejoin("g", ids[0])
	b := e.rejoin("g", ids[1])
	for _, ch := range []<-chan joinResult{a, b, third} {
		recv(t, ch, "join")
	}
	if c := code(e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[1], gen+1, "t1", 3, 10))); c != kerr.RebalanceInProgress.Code {
		t.Fatalf("commit while completing: %d", c)
	}
	all := e.fetch("g", "")
	if len(all) != 1 || all[0].Partition != 3 || all[0].Offset != 9 {
		t.Fatalf("all offsets: %+v", all)
	}
	// A failed append is not acknowledged and not visible.
	e.j.mu.Lock()
	e.j.fail = errBoom
	e.j.mu.Unlock()
	if c := code(e.m.CommitOffsets(ctx(t), testID, commitReq("simple", "", -1, "t1", 0, 50))); c != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit on a failing log: %d", c)
	}
	if got := e.fetch("simple", "t1", 0); got[0].Offset != 42 {
		t.Fatalf("unacknowledged commit visible: %+v", got)
	}
}

func TestOffsetExpiry(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.OffsetRetention = time.Hour; c.RetentionCheckInterval = time.Minute })
	e.m.CommitOffsets(ctx(t), testID, commitReq("simple", "", -1, "t1", 0, 1))
	ids, gen := e.stableGroup("g", 1)
	e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, "t1", 0, 1))
	e.clk.Advance(time.Hour)
	checkfor.Eventually(t, 5*time.Second, "simple group expired", func() error {
		return checkfor.True(len(e.m.Groups()) == 1, "groups %v", e.m.Groups())
	})
	if got := e.fetch("g", "t1", 0); got[0].Offset != 1 {
		t.Fatalf("a group with members lost its offsets: %+v", got)
	}
}

func TestDeleteAndDescribe(t *testing.T) {
	e := newEnv(t, nil)
	e.stableGroup("g", 2)
	e.m.CommitOffsets(ctx(t), testID, commitReq("e", "", -1, "t1", 0, 1))

	d := e.m.Describe(5, "g")
	if d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "range" || len(d.Members) != 2 {
		t.Fatalf("describe: %+v", d)
	}
	for _, m := range d.Members {
		if m.ClientID != "cli" || m.ClientHost != "10.0.0.7" || len(m.MemberAssignment) == 0 || !reflect.DeepEqual(m.ProtocolMetadata, consumerMeta("t1")) {
			t.Fatalf("member: %+v", m)
		}
	}
	if d := e.m.Describe(5, "zz"); d.State != "Dead" || d.ErrorCode != 0 {
		t.Fatalf("describe unknown v5: %+v", d)
	}
	if d := e.m.Describe(6, "zz"); d.State != "Dead" || d.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("describe unknown v6: %+v", d)
	}

	for _, tc := range []struct {
		states, types []string
		want          []string
	}{
		{nil, nil, []string{"e", "g"}},
		{[]string{"stable"}, nil, []string{"g"}},
		{[]string{"Empty", "Dead"}, nil, []string{"e"}},
		{nil, []string{"consumer"}, nil},
		{nil, []string{"Classic"}, []string{"e", "g"}},
	} {
		var got []string
		for _, l := range e.m.List(tc.states, tc.types) {
			got = append(got, l.Group)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("list %v %v: %v, want %v", tc.states, tc.types, got, tc.want)
		}
	}

	if c := e.m.Delete(ctx(t), "g"); c != kerr.NonEmptyGroup.Code {
		t.Fatalf("delete with members: %d", c)
	}
	if c := e.m.Delete(ctx(t), "zz"); c != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete unknown: %d", c)
	}
	if c := e.m.Delete(ctx(t), "e"); c != 0 {
		t.Fatalf("delete empty: %d", c)
	}
	if got := e.fetch("e", "t1", 0); got[0].Offset != -1 {
		t.Fatalf("offsets survived delete: %+v", got)
	}
	recs := e.j.records()
	if last := recs[len(recs)-1]; last.Type != record.TypeGroupDeleted || last.GroupDeleted.Group != "e" {
		t.Fatalf("last record: %+v", last)
	}
}

func TestOffsetDelete(t *testing.T) {
	e := newEnv(t, nil)
	ids, gen := e.stableGroup("g", 1)
	for _, topic := range []string{"t1", "t2"} {
		e.m.CommitOffsets(ctx(t), testID, commitReq("g", ids[0], gen, topic, 0, 5))
	}
	del := func(group string, topics ...string) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		for _, t := range topics {
			req.Topics = append(req.Topics, kmsg.OffsetDeleteRequestTopic{Topic: t, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}})
		}
		return e.m.DeleteOffsets(ctx(e.t), testID, req)
	}
	r := del("g", "t1", "t2")
	if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code || r.Topics[1].Partitions[0].ErrorCode != 0 {
		t.Fatalf("delete: %+v", r)
	}
	if got := e.fetch("g", "t2", 0); got[0].Offset != -1 {
		t.Fatalf("t2 offset survived: %+v", got)
	}
	if got := e.fetch("g", "t1", 0); got[0].Offset != 5 {
		t.Fatalf("subscribed t1 offset deleted: %+v", got)
	}
	recs := e.j.records()
	if last := recs[len(recs)-1]; last.Type != record.TypeOffsetDeleted || *last.OffsetDeleted != (record.OffsetDeleted{Group: "g", Topic: "t2"}) {
		t.Fatalf("last record: %+v", last)
	}
	if r := del("zz", "t1"); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("unknown group: %d", r.ErrorCode)
	}
	// A non-consumer group with members refuses.
	j := e.join(joinReq("c", "", withVersion(3), withType("connect")))
	recv(t, e.syncAsync("c", j.MemberID, j.Generation, nil), "sync")
	if r := del("c", "t1"); r.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("connect group: %d", r.ErrorCode)
	}
}

// Every field of a member survives Restore and comes back in State byte for byte.
func TestRestoreRoundTrip(t *testing.T) {
	groups := []record.Group{{Name: "empty", Generation: 3, ProtocolType: "consumer", State: "Empty"}, {
		Name: "g", Generation: 41, ProtocolType: "consumer", Protocol: "cooperative-sticky", Leader: "m1", State: "Stable",
		Members: []record.Member{
			{MemberID: "m1", InstanceID: "i1", ClientID: "c1", ClientHost: "10.1.1.1", SessionTimeout: 45 * time.Second,
				RebalanceTimeout: 5 * time.Minute, Assignment: []byte{0, 1, 2},
				Protocols: []record.Protocol{{Name: "cooperative-sticky", Metadata: []byte{9, 8}}, {Name: "range", Metadata: []byte{7}}}},
			{MemberID: "m2", InstanceID: "i2", ClientID: "c2", ClientHost: "10.1.1.2", SessionTimeout: 30 * time.Second,
				RebalanceTimeout: time.Minute, Assignment: []byte{3},
				Protocols: []record.Protocol{{Name: "cooperative-sticky", Metadata: []byte{6}}, {Name: "range", Metadata: []byte{5, 4}}}},
		},
	}}
	offsets := []record.OffsetCommit{
		{Group: "g", Topic: "t", Partition: 2, Offset: 100, LeaderEpoch: 3, Metadata: "m", Expire: t0.Add(time.Hour)},
		{Group: "simple", Topic: "u", Partition: 0, Offset: 5, LeaderEpoch: -1},
	}
	// The fixture must set every field, so that a field added to the record and dropped by
	// Restore makes this test fail.
	assertAllSet(t, reflect.ValueOf(groups[1]), "Group")

	e := newEnv(t, nil)
	e.m.Restore(groups, offsets)
	// The live members, not a copy of the input, make the snapshot.
	e.m.mu.Lock()
	e.m.groups["g"].lastSnap = nil
	live := e.m.snapshot(e.m.groups["g"], nil)
	e.m.groups["g"].lastSnap = &live
	e.m.mu.Unlock()
	if !reflect.DeepEqual(live, groups[1]) {
		t.Fatalf("live snapshot after restore:\n%+v\nwant\n%+v", live, groups[1])
	}
	gotG, gotO := e.m.State()
	if !reflect.DeepEqual(gotG, groups) {
		t.Fatalf("groups after restore:\n%+v\nwant\n%+v", gotG, groups)
	}
	if !reflect.DeepEqual(gotO, offsets) {
		t.Fatalf("offsets after restore:\n%+v\nwant\n%+v", gotO, offsets)
	}
	// The restored members are live: heartbeats work, the static mapping fences, and the
	// session timers run from the restore.
	if c := e.heartbeat("g", "m1", 41, kmsg.StringPtr("i1")); c != 0 {
		t.Fatalf("restored member's heartbeat: %d", c)
	}
	if c := e.heartbeat("g", "m9", 41, kmsg.StringPtr("i2")); c != kerr.FencedInstanceID.Code {
		t.Fatalf("restored static mapping: %d", c)
	}
	e.clk.Advance(30*time.Second - time.Nanosecond)
	if n := e.members("g"); n != 2 {
		t.Fatalf("%d members before m2's session ends", n)
	}
	e.clk.Advance(time.Nanosecond)
	checkfor.Eventually(t, 5*time.Second, "restored session expiry", func() error {
		d := e.mustDescribe("g")
		return checkfor.True(len(d.Members) == 1 && d.Members[0].MemberID == "m1" && d.State == "PreparingRebalance", "%+v", d)
	})
	// The restored maps and slices are copies: changing the input changes nothing.
	groups[1].Members[0].Protocols[0].Metadata[0] = 0
	e.m.mu.Lock()
	meta := e.m.groups["g"].lastSnap.Members[0].Protocols[0].Metadata[0]
	e.m.mu.Unlock()
	if meta != 9 {
		t.Fatal("restore kept the caller's bytes")
	}
}

func assertAllSet(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			assertAllSet(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			t.Fatalf("fixture leaves %s empty", path)
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			assertAllSet(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		if v.IsZero() {
			t.Fatalf("fixture leaves %s zero", path)
		}
	}
}

// The connection reuses request buffers: what a member sent must be kept as a copy.
func TestRequestBytesAreCopied(t *testing.T) {
	e := newEnv(t, nil)
	req := joinReq("g", "", withVersion(3))
	j := e.join(req)
	req.Protocols[0].Metadata[0] = 0xee
	sreq := kmsg.NewPtrSyncGroupRequest()
	sreq.Version, sreq.Group, sreq.MemberID, sreq.Generation = 5, "g", j.MemberID, j.Generation
	sreq.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: j.MemberID, MemberAssignment: []byte("mine")}}
	if r, err := e.m.Sync(ctx(t), testID, sreq); err != nil || r.ErrorCode != 0 {
		t.Fatalf("sync: %v %+v", err, r)
	}
	copy(sreq.GroupAssignment[0].MemberAssignment, "xxxx")
	d := e.mustDescribe("g")
	if string(d.Members[0].MemberAssignment) != "mine" || !reflect.DeepEqual(d.Members[0].ProtocolMetadata, consumerMeta("t1")) {
		t.Fatalf("stored bytes changed with the request's: %q %v", d.Members[0].MemberAssignment, d.Members[0].ProtocolMetadata)
	}
	if s := e.j.lastGroup("g"); string(s.Members[0].Assignment) != "mine" {
		t.Fatalf("journaled assignment changed: %q", s.Members[0].Assignment)
	}
}

// Appends of one group reach the log one at a time, in the order of their changes, and the
// group's memory follows the log's order.
func TestGroupAppendsInOrder(t *testing.T) {
	e := newEnv(t, nil)
	gate := make(chan struct{})
	e.j.mu.Lock()
	e.j.gate = gate
	e.j.mu.Unlock()
	done := make(chan int64, 2)
	commit := func(off int64) {
		r := e.m.CommitOffsets(ctx(t), testID, commitReq("g", "", -1, "t1", 0, off))
		if c := r.Topics[0].Partitions[0].ErrorCode; c != 0 {
			t.Errorf("commit %d: %d", off, c)
		}
		done <- off
	}
	go commit(1)
	checkfor.Eventually(t, 5*time.Second, "first append", func() error {
		return checkfor.True(e.j.waiting() == 1, "%d appending", e.j.waiting())
	})
	go commit(2)
	// The second commit waits for the first before it appends; another group does not.
	other := make(chan struct{})
	go func() {
		e.m.CommitOffsets(ctx(t), testID, commitReq("h", "", -1, "t1", 0, 9))
		close(other)
	}()
	checkfor.Eventually(t, 5*time.Second, "other group's append", func() error {
		return checkfor.True(e.j.waiting() == 2, "%d appending", e.j.waiting())
	})
	gate <- struct{}{}
	gate <- struct{}{}
	first := recv(t, done, "first commit")
	gate <- struct{}{}
	second := recv(t, done, "second commit")
	<-other
	var order []int64
	for _, r := range e.j.records() {
		if r.OffsetCommit.Group == "g" {
			order = append(order, r.OffsetCommit.Offset)
		}
	}
	if first != 1 || second != 2 || !reflect.DeepEqual(order, []int64{1, 2}) {
		t.Fatalf("answers %d then %d, log %v", first, second, order)
	}
	if got := e.fetch("g", "t1", 0); got[0].Offset != 2 {
		t.Fatalf("fetch: %+v", got)
	}
}
