package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// SyncGroup: v0-5
//
// Behavior:
//   - Served by Config.Groups: followers wait for the leader's assignment; the leader's
//     assignment is written to the coordinator log as a snapshot of the whole group before
//     any member gets its share.
//   - v3+ group.instance.id fences a stale member id of a static instance.
//   - v5+ protocol type and name are checked against the group (INCONSISTENT_GROUP_PROTOCOL)
//     and returned.
//
// Not implemented:
// * Nothing of the classic protocol.
func init() { regGroupKey(syncGroupKey, 0, 5) }

func (c *conn) handleSyncGroup(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.SyncGroupRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.SyncGroup(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
