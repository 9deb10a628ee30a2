package kafka

import (
	"context"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group APIs plug in here. What a group handler file (08_offset_commit.go, ...) has:
//
//   - regGroupKey(key, min, max) in its init, instead of regKey: the key is then advertised by
//     ApiVersions and decoded only by a Server with a Config.Groups; without one it is refused
//     as unsupported, like a key nobody registered. The key constants (offsetCommitKey, ...)
//     are in handle.go, whose switch calls the handler.
//   - one handler, func (c *conn) handleX(req *request) (kmsg.Response, error), which finds
//     the coordinator in c.s.cfg.Groups and the caller in c.identity(req).
//   - nothing to do for ordering: the group requests of one connection reach their handlers one
//     at a time, in the order the client sent them (order.go), while the connection's other
//     requests keep running in parallel.

// Identity is who a connection acts as, handed to the group coordinator with every request.
type Identity struct {
	// User is the SASL user the connection authenticated as; "" without SASL.
	User string
	// ClientID is the client id of the request's header; ClientHost the peer's IP address
	// (DescribeGroups reports both for every member).
	ClientID, ClientHost string
	// Storage is the storage bound to the connection's Iggy identity, for the checks a
	// coordinator makes against topics (OffsetCommit to a topic the user cannot see).
	Storage Storage
}

// GroupCoordinator serves the consumer-group APIs. A Server has at most one (Config.Groups),
// shared by every connection; without one the group keys are not advertised by ApiVersions and
// are refused as unsupported.
//
// The request reaching a method is decoded and of a version the handler file of its key in this
// package serves; the method answers with req.ResponseKind() filled in (its Version is already
// set). A method may block until ctx ends (JoinGroup waits for the rebalance to finish). The
// group requests of one connection reach the coordinator one at a time, in the order the client
// sent them, so an OffsetCommit sent before a LeaveGroup is applied before it.
//
// An error closes the connection; answers a Kafka client should see are error codes in the
// response.
type GroupCoordinator interface {
	FindCoordinator(ctx context.Context, id Identity, req *kmsg.FindCoordinatorRequest) (*kmsg.FindCoordinatorResponse, error)
	JoinGroup(ctx context.Context, id Identity, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error)
	SyncGroup(ctx context.Context, id Identity, req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, error)
	Heartbeat(ctx context.Context, id Identity, req *kmsg.HeartbeatRequest) (*kmsg.HeartbeatResponse, error)
	LeaveGroup(ctx context.Context, id Identity, req *kmsg.LeaveGroupRequest) (*kmsg.LeaveGroupResponse, error)
	OffsetCommit(ctx context.Context, id Identity, req *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitResponse, error)
	OffsetFetch(ctx context.Context, id Identity, req *kmsg.OffsetFetchRequest) (*kmsg.OffsetFetchResponse, error)
	ListGroups(ctx context.Context, id Identity, req *kmsg.ListGroupsRequest) (*kmsg.ListGroupsResponse, error)
	DescribeGroups(ctx context.Context, id Identity, req *kmsg.DescribeGroupsRequest) (*kmsg.DescribeGroupsResponse, error)
	DeleteGroups(ctx context.Context, id Identity, req *kmsg.DeleteGroupsRequest) (*kmsg.DeleteGroupsResponse, error)
	OffsetDelete(ctx context.Context, id Identity, req *kmsg.OffsetDeleteRequest) (*kmsg.OffsetDeleteResponse, error)
	// ConsumerGroupHeartbeat and ConsumerGroupDescribe are KIP-848's consumer group protocol.
	ConsumerGroupHeartbeat(ctx context.Context, id Identity, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error)
	ConsumerGroupDescribe(ctx context.Context, id Identity, req *kmsg.ConsumerGroupDescribeRequest) (*kmsg.ConsumerGroupDescribeResponse, error)
}

// identity is who req's connection acts as: the SASL user and the Storage it had when req was
// read, the request's client id, and the peer's IP address.
func (c *conn) identity(req *request) Identity {
	id := Identity{User: req.user, Storage: req.storage}
	if req.clientID != nil {
		id.ClientID = *req.clientID
	}
	addr := c.nc.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	id.ClientHost = addr
	return id
}
