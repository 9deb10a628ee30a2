package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// LeaveGroup: v0-5
//
// Behavior:
//   - Served by Config.Groups: the member leaves and the group rebalances without it.
//   - v3+ leaves a batch of members, by member id or group.instance.id, each with its own
//     error code (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID).
//
// Not implemented:
// * v5 reason is accepted and not logged.
func init() { regGroupKey(leaveGroupKey, 0, 5) }

func (c *conn) handleLeaveGroup(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.LeaveGroupRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.LeaveGroup(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, m := range resp.Members {
			req.setErr(m.ErrorCode)
		}
	}
	return resp, err
}
