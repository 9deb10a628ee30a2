package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// JoinGroup: v0-9
//
// Behavior:
//   - Served by Config.Groups with Kafka's classic rebalance protocol: the answer waits until
//     the rebalance completes (members that do not rejoin within the rebalance timeout are
//     removed; v0 uses the session timeout as rebalance timeout). A new group's first rebalance
//     waits the initial rebalance delay for more members.
//   - v4+: a first join without member id is answered MEMBER_ID_REQUIRED with the id (KIP-394).
//   - v5+: group.instance.id makes a static member; a restarted static member takes its old
//     place without a rebalance when the group is Stable and keeps its protocol (KIP-345), and
//     its old member id is fenced (FENCED_INSTANCE_ID).
//   - protocol_type and the protocols are checked against the group
//     (INCONSISTENT_GROUP_PROTOCOL); session timeouts outside the coordinator's bounds are
//     INVALID_SESSION_TIMEOUT.
//   - v9 SkipAssignment is set for a static leader replaced without a rebalance.
//
// Not implemented:
// * GROUP_MAX_SIZE_REACHED: groups have no size limit.
// * v8 reason is accepted and not logged.
func init() { regGroupKey(joinGroupKey, 0, 9) }

func (c *conn) handleJoinGroup(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.JoinGroupRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.JoinGroup(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
