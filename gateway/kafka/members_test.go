package kafka

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatGroups answers every Heartbeat and JoinGroup with the code a test sets, and
// LeaveGroup with 0.
type heartbeatGroups struct {
	fakeGroups
	code atomic.Int32
}

func (h *heartbeatGroups) JoinGroup(ctx context.Context, id Identity, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error) {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = int16(h.code.Load())
	return resp, nil
}

func (h *heartbeatGroups) Heartbeat(ctx context.Context, id Identity, req *kmsg.HeartbeatRequest) (*kmsg.HeartbeatResponse, error) {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = int16(h.code.Load())
	return resp, nil
}

// A controlled shutdown waits until every connection whose member was last answered here as its
// coordinator has been told NOT_COORDINATOR, has left its group or has closed; alone in its fleet
// the gateway does not wait.
func TestWaitMembersTold(t *testing.T) {
	hg := &heartbeatGroups{fakeGroups: fakeGroups{left: make(chan struct{})}}
	fl := &fakeFleet{self: 1}
	ts := startServer(t, func(c *Config) { c.Fleet, c.Groups = fl, hg })
	heartbeat := func(c *rawConn) int16 {
		t.Helper()
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.MemberID, req.Generation = "g", "m", 1
		return c.roundTrip(t, req).(*kmsg.HeartbeatResponse).ErrorCode
	}
	told, left, closed, other := dialRaw(t, ts.addr), dialRaw(t, ts.addr), dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	for _, c := range []*rawConn{told, left, closed} {
		if code := heartbeat(c); code != 0 {
			t.Fatalf("heartbeat: code %d", code)
		}
	}
	other.roundTrip(t, kmsg.NewPtrApiVersionsRequest()) // a connection with no member
	done, cancel := context.WithCancel(context.Background())
	cancel()

	fl.set(1, Broker{1, "h1", 91})
	if err := ts.s.WaitMembersTold(done); err != nil {
		t.Fatalf("alone in its fleet: %v", err)
	}
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92})
	if err := ts.s.WaitMembersTold(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("three members served here: %v", err)
	}

	hg.code.Store(int32(kerr.NotCoordinator.Code))
	if code := heartbeat(told); code != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat: code %d", code)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.MemberID = "g", "m"
	if code := left.roundTrip(t, leave).(*kmsg.LeaveGroupResponse).ErrorCode; code != 0 {
		t.Fatalf("leave: code %d", code)
	}
	if err := ts.s.WaitMembersTold(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("one member served here, its connection open: %v", err)
	}

	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	waited := make(chan error, 1)
	go func() { waited <- ts.s.WaitMembersTold(ctx) }()
	closed.Close()
	if err := <-waited; err != nil {
		t.Fatalf("every member told, left or gone: %v", err)
	}
}

// A JoinGroup or SyncGroup answered here marks nothing (franz-go sends them on a connection of
// their own); answered NOT_COORDINATOR it counts as told.
func TestWaitMembersToldIgnoresJoins(t *testing.T) {
	hg := &heartbeatGroups{fakeGroups: fakeGroups{left: make(chan struct{})}}
	fl := &fakeFleet{self: 1}
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92})
	ts := startServer(t, func(c *Config) { c.Fleet, c.Groups = fl, hg })
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType = "g", "consumer"
	c := dialRaw(t, ts.addr)
	c.roundTrip(t, join)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ts.s.WaitMembersTold(done); err != nil {
		t.Fatalf("a JoinGroup answered here marked its connection: %v", err)
	}
	// A heartbeat marks it; a JoinGroup answered NOT_COORDINATOR tells it.
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = "g", "m", 1
	c.roundTrip(t, req)
	if err := ts.s.WaitMembersTold(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("a member's heartbeat answered here: %v", err)
	}
	hg.code.Store(int32(kerr.NotCoordinator.Code))
	c.roundTrip(t, join)
	if err := ts.s.WaitMembersTold(done); err != nil {
		t.Fatalf("told NOT_COORDINATOR by a JoinGroup: %v", err)
	}
}
