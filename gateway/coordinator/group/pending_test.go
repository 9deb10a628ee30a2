package group

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A hostile client sends JoinGroups without a member id and never comes back with the ids it is
// given (KIP-394), spread over many groups and with the longest session timeout: the manager
// holds at most maxPending of them, drops the oldest past it (counted), a dropped id is refused
// as an unknown member, a client that comes back with its id still joins, and the groups left with
// nothing are forgotten.
func TestPendingMembersBounded(t *testing.T) {
	e := newEnv(t, nil)
	now0, dropped0 := e.m.cfg.Metrics.PendingMembers()
	const hostile = maxPending + 500
	ids := make([]string, hostile)
	for i := range hostile {
		name := fmt.Sprintf("new-%d", i%250)
		if i < 500 {
			name = fmt.Sprintf("old-%d", i%50) // every id of these groups is dropped
		}
		r := e.join(joinReq(name, "", withTimeouts(30*time.Minute, 30*time.Minute)))
		if r.ErrorCode != kerr.MemberIDRequired.Code {
			t.Fatalf("join %d: code %d", i, r.ErrorCode)
		}
		ids[i] = r.MemberID
	}
	e.m.mu.Lock()
	held := e.m.pendingOrder.Len()
	n := 0
	for _, g := range e.m.groups {
		n += len(g.pending)
	}
	e.m.mu.Unlock()
	now, dropped := e.m.cfg.Metrics.PendingMembers()
	if held > maxPending || n != held || now-now0 != int64(held) || dropped-dropped0 != hostile-maxPending {
		t.Fatalf("%d pending held (%d in groups, gauge +%d), %d dropped, after %d joins; want at most %d and %d dropped",
			held, n, now-now0, dropped-dropped0, hostile, maxPending, hostile-maxPending)
	}
	if r := e.join(joinReq("old-0", ids[0])); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("the oldest, dropped pending id joined: code %d", r.ErrorCode)
	}
	// A real client past the flood: its id is the newest, and it joins with it.
	r := e.join(joinReq("real", ""))
	if r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("the real client's first join: code %d", r.ErrorCode)
	}
	if j := e.join(joinReq("real", r.MemberID)); j.ErrorCode != 0 || j.MemberID != r.MemberID {
		t.Fatalf("the real client's join with its id: %+v", j)
	}
	e.m.mu.Lock()
	var kept []string
	for name := range e.m.groups {
		if strings.HasPrefix(name, "old-") {
			kept = append(kept, name)
		}
	}
	e.m.mu.Unlock()
	if len(kept) > 0 {
		t.Fatalf("groups whose pending members were all dropped are still held: %v", kept)
	}
	e.m.Close()
	if now, _ := e.m.cfg.Metrics.PendingMembers(); now != now0 {
		t.Fatalf("the gauge is %d after Close, was %d", now, now0)
	}
}
