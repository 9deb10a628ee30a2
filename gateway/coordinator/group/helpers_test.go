package group

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// memJournal is a Journal in memory. gate, when set, holds every Append until a value is sent
// on it; fail, when set, is returned instead of storing.
type memJournal struct {
	mu   sync.Mutex
	recs []record.Record
	fail error
	gate chan struct{}
	// appending counts Appends waiting at the gate.
	appending int
}

func (j *memJournal) Append(ctx context.Context, recs ...record.Record) error {
	j.mu.Lock()
	gate := j.gate
	j.appending++
	j.mu.Unlock()
	if gate != nil {
		<-gate
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.appending--
	if j.fail != nil {
		return j.fail
	}
	j.recs = append(j.recs, recs...)
	return nil
}

func (j *memJournal) records() []record.Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]record.Record(nil), j.recs...)
}

func (j *memJournal) waiting() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.appending
}

// lastGroup is the newest group snapshot journaled for name.
func (j *memJournal) lastGroup(name string) *record.Group {
	recs := j.records()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == record.TypeGroup && recs[i].Group.Name == name {
			return recs[i].Group
		}
	}
	return nil
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	t   *testing.T
	m   *Manager
	clk *clock.Fake
	j   *memJournal
}

func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	e := &env{t: t, clk: clock.NewFake(t0), j: &memJournal{}}
	cfg := Config{Clock: e.clk, Journal: e.j}
	if mod != nil {
		mod(&cfg)
	}
	e.m = NewManager(cfg)
	t.Cleanup(e.m.Close)
	return e
}

var testID = kafka.Identity{ClientID: "cli", ClientHost: "10.0.0.7"}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// consumerMeta is consumer-protocol metadata subscribing to topics.
func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

type joinOpt func(*kmsg.JoinGroupRequest)

func withInstance(id string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.InstanceID = kmsg.StringPtr(id) }
}

func withProtocols(ps ...string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.Protocols = nil
		for _, p := range ps {
			jp := kmsg.NewJoinGroupRequestProtocol()
			jp.Name = p
			jp.Metadata = consumerMeta("t1")
			r.Protocols = append(r.Protocols, jp)
		}
	}
}

func withType(pt string) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.ProtocolType = pt } }

func withVersion(v int16) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.Version = v } }

func withTimeouts(session, rebalance time.Duration) joinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.SessionTimeoutMillis = int32(session / time.Millisecond)
		r.RebalanceTimeoutMillis = int32(rebalance / time.Millisecond)
	}
}

func joinReq(group, member string, opts ...joinOpt) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = 9
	r.Group = group
	r.MemberID = member
	r.SessionTimeoutMillis = 10000
	r.RebalanceTimeoutMillis = 20000
	r.ProtocolType = "consumer"
	withProtocols("range")(r)
	for _, o := range opts {
		o(r)
	}
	return r
}

type joinResult struct {
	resp *kmsg.JoinGroupResponse
	err  error
}

// joinAsync starts a JoinGroup and returns where its answer arrives.
func (e *env) joinAsync(req *kmsg.JoinGroupRequest) <-chan joinResult {
	ch := make(chan joinResult, 1)
	go func() {
		r, err := e.m.Join(ctx(e.t), testID, req)
		ch <- joinResult{r, err}
	}()
	return ch
}

func (e *env) join(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	e.t.Helper()
	r, err := e.m.Join(ctx(e.t), testID, req)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: no answer", what)
	}
	var zero T
	return zero
}

func notYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	// An answer is sent by the call or timer that completes it, before that returns: a test
	// that checks after those finished sees any answer that was released.
	select {
	case v := <-ch:
		t.Fatalf("%s: answered too early: %+v", what, v)
	default:
	}
}

// sync performs a SyncGroup; the leader passes assignments.
func (e *env) syncAsync(group, member string, gen int32, assign map[string][]byte) <-chan *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, member, gen
	for id, a := range assign {
		sa := kmsg.NewSyncGroupRequestGroupAssignment()
		sa.MemberID, sa.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, sa)
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() {
		r, err := e.m.Sync(ctx(e.t), testID, req)
		if err != nil {
			r = nil
		}
		ch <- r
	}()
	return ch
}

func (e *env) heartbeat(group, member string, gen int32, instance *string) int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation, req.InstanceID = group, member, gen, instance
	return e.m.Heartbeat(ctx(e.t), testID, req).ErrorCode
}

// joinNew joins a new dynamic member through KIP-394's two steps and returns the second
// join's answer channel.
func (e *env) joinNew(group string, opts ...joinOpt) (string, <-chan joinResult) {
	e.t.Helper()
	r := e.join(joinReq(group, "", opts...))
	if r.ErrorCode != 79 || r.MemberID == "" {
		e.t.Fatalf("first join: code %d member %q, want 79 with an id", r.ErrorCode, r.MemberID)
	}
	ch := e.joinAsync(joinReq(group, r.MemberID, opts...))
	checkfor.Eventually(e.t, 5*time.Second, "member in the group", func() error {
		for _, m := range e.mustDescribe(group).Members {
			if m.MemberID == r.MemberID {
				return nil
			}
		}
		return fmt.Errorf("%s not a member yet", r.MemberID)
	})
	return r.MemberID, ch
}

// stableGroup forms a Stable group of n dynamic members; it returns their ids (the first is
// the leader) and the generation.
func (e *env) stableGroup(group string, n int, opts ...joinOpt) ([]string, int32) {
	e.t.Helper()
	ids := make([]string, n)
	chans := make([]<-chan joinResult, n)
	for i := range n {
		ids[i], chans[i] = e.joinNew(group, opts...)
		if i == 0 {
			// The first member completes a generation alone; the rest join the next.
			r := recv(e.t, chans[0], "first member")
			if r.resp.ErrorCode != 0 {
				e.t.Fatalf("first member: %d", r.resp.ErrorCode)
			}
			chans[0] = nil
			if n > 1 {
				e.checkState(group, "CompletingRebalance")
			}
		}
	}
	if n > 1 {
		// The first member rejoins for the members that came after it, once they all wait.
		checkfor.Eventually(e.t, 5*time.Second, "members joined", func() error {
			d := e.mustDescribe(group)
			return checkfor.True(len(d.Members) == n && d.State == "PreparingRebalance", "%d members, %s", len(d.Members), d.State)
		})
		chans[0] = e.joinAsync(joinReq(group, ids[0], opts...))
	}
	var gen int32
	var leader string
	for i := range n {
		if chans[i] == nil {
			continue
		}
		r := recv(e.t, chans[i], "join")
		if r.resp.ErrorCode != 0 {
			e.t.Fatalf("join %d: code %d", i, r.resp.ErrorCode)
		}
		gen, leader = r.resp.Generation, r.resp.LeaderID
	}
	if n == 1 {
		e.mustDescribe(group)
		gen = e.generation(group)
		leader = ids[0]
	}
	assign := map[string][]byte{}
	for _, id := range ids {
		assign[id] = []byte("assign-" + id)
	}
	var syncs []<-chan *kmsg.SyncGroupResponse
	for _, id := range ids {
		var a map[string][]byte
		if id == leader {
			a = assign
		}
		syncs = append(syncs, e.syncAsync(group, id, gen, a))
	}
	for i, ch := range syncs {
		r := recv(e.t, ch, "sync")
		if r == nil || r.ErrorCode != 0 || string(r.MemberAssignment) != "assign-"+ids[i] {
			e.t.Fatalf("sync %d: %+v", i, r)
		}
	}
	e.checkState(group, "Stable")
	// Put the leader first.
	for i, id := range ids {
		if id == leader {
			ids[0], ids[i] = ids[i], ids[0]
		}
	}
	return ids, gen
}

func (e *env) mustDescribe(group string) kmsg.DescribeGroupsResponseGroup {
	return e.m.Describe(6, group)
}

func (e *env) generation(group string) int32 {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	if g := e.m.groups[group]; g != nil {
		return g.generation
	}
	return -1
}

func (e *env) checkState(group, want string) {
	e.t.Helper()
	checkfor.Eventually(e.t, 5*time.Second, "group state", func() error {
		if got := e.mustDescribe(group).State; got != want {
			return fmt.Errorf("state %s, want %s", got, want)
		}
		return nil
	})
}

func (e *env) members(group string) int {
	return len(e.mustDescribe(group).Members)
}

var errBoom = errors.New("log unavailable")

// rejoin starts a JoinGroup of a known member and waits until it is parked or answered.
func (e *env) rejoin(group, member string, opts ...joinOpt) <-chan joinResult {
	e.t.Helper()
	ch := e.joinAsync(joinReq(group, member, opts...))
	checkfor.Eventually(e.t, 5*time.Second, "join parked", func() error {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		if len(ch) > 0 {
			return nil
		}
		if g := e.m.groups[group]; g != nil && g.members[member] != nil && g.members[member].joinWait != nil {
			return nil
		}
		return fmt.Errorf("%s not parked", member)
	})
	return ch
}

func (e *env) timerSeq(group string) uint64 {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	return e.m.groups[group].timerSeq
}
