package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A classic group member learns that its coordinator moved only from the answer to its next
// group request there (NOT_COORDINATOR), and asks again every heartbeat interval (3 s by
// default in franz-go, librdkafka and the Java client). A gateway that leaves the fleet and closes
// its listener before that answer was given leaves the member dialling a closed port, and
// franz-go's classic member ends its session on that (a rebalance). So the gateway keeps track of
// the connections whose last Heartbeat, OffsetCommit or ConsumerGroupHeartbeat it answered as the
// group's coordinator, and a controlled shutdown waits (WaitMembersTold) until each has been
// answered NOT_COORDINATOR, has left its group, or has closed. JoinGroup and SyncGroup mark
// nothing: franz-go sends them on a connection of their own, which would stay marked after the
// member's heartbeats, on another connection, were told.

// noteMember records what req's answer says about its connection's member: still served here,
// or told to go elsewhere. Group requests of one connection run one at a time (order.go).
func (c *conn) noteMember(req *request) {
	told := false
	switch req.errCode {
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
		told = true
	}
	switch req.key {
	case heartbeatKey, offsetCommitKey, consumerGroupHeartbeatKey:
		c.s.setMember(c, !told)
	case joinGroupKey, syncGroupKey:
		if told {
			c.s.setMember(c, false)
		}
	case leaveGroupKey:
		c.s.setMember(c, false)
	}
}

// setMember sets c's member flag and wakes WaitMembersTold when the count of flagged
// connections drops.
func (s *Server) setMember(c *conn, member bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.member == member {
		return
	}
	c.member = member
	if member {
		s.members++
		return
	}
	s.members--
	if s.membersDropped != nil {
		close(s.membersDropped)
		s.membersDropped = nil
	}
}

// WaitMembersTold waits until no connection's last member request was answered here as its
// group's coordinator (see above), or ctx ends. The gateway calls it in its controlled shutdown,
// after it left the fleet (every group request is then NOT_COORDINATOR here) and before it closes
// the listener. With no other broker listed it returns at once: members would have nowhere to go.
func (s *Server) WaitMembersTold(ctx context.Context) error {
	if len(s.othersListed()) == 0 {
		return nil
	}
	for {
		s.mu.Lock()
		if s.members == 0 {
			s.mu.Unlock()
			return nil
		}
		if s.membersDropped == nil {
			s.membersDropped = make(chan struct{})
		}
		ch := s.membersDropped
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
