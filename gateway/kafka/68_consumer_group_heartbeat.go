package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// ConsumerGroupHeartbeat: v0-1 (KIP-848)
//
// Behavior:
//   - Served by Config.Groups, routed by the group's coordinator like the classic keys: the
//     broker assigns the partitions (server-side assignors "uniform", the default, and "range";
//     any other is UNSUPPORTED_ASSIGNOR), every member reconciles toward its target one
//     heartbeat at a time, revoking before anything it gave up goes to another member.
//   - Member epochs, the group epoch and the target assignment as Kafka 4 keeps them:
//     FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, epoch 0 to join (or rejoin in place), -1 to leave,
//     -2 for a static member (group.instance.id) to leave for now; UNRELEASED_INSTANCE_ID and
//     FENCED_INSTANCE_ID for static members. The answer carries the heartbeat interval; a
//     member that sends none within the session timeout is fenced, and one that does not revoke
//     within its rebalance timeout too.
//   - v1: the member id is the client's (KIP-1082) and subscriptions may be a regular
//     expression (RE2, matched against whole topic names; INVALID_REGULAR_EXPRESSION).
//   - Assignments name topics by id (Metadata v10+), as the bridge derives them.
//   - An answer that changes the group is sent only once the coordinator log holds the change.
//   - A classic group with members is GROUP_ID_NOT_FOUND; an empty one becomes a consumer group.
//
// Not implemented:
//   - Rack-aware assignment (the rack id is kept and shown, not used), group size limits.
func init() { regGroupKey(consumerGroupHeartbeatKey, 0, 1) }

func (c *conn) handleConsumerGroupHeartbeat(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.ConsumerGroupHeartbeatRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.ConsumerGroupHeartbeat(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
