package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// Heartbeat: v0-4
//
// Behavior:
//   - Served by Config.Groups: keeps the member's session alive; REBALANCE_IN_PROGRESS tells
//     it to rejoin, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID that it is out of the group.
//   - v3+ group.instance.id fences a stale member id of a static instance.
//
// Not implemented:
// * Nothing of the classic protocol.
func init() { regGroupKey(heartbeatKey, 0, 4) }

func (c *conn) handleHeartbeat(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.HeartbeatRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.Heartbeat(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
