package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetDelete: v0
//
// Behavior:
//   - Served by Config.Groups: deletes committed offsets of an empty group, or of a consumer
//     group for topics no member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC per partition for
//     the others, read from the members' consumer-protocol metadata); a non-empty group of
//     another protocol type is NON_EMPTY_GROUP, an unknown group GROUP_ID_NOT_FOUND.
//
// Not implemented:
// * Nothing.
func init() { regGroupKey(offsetDeleteKey, 0, 0) }

func (c *conn) handleOffsetDelete(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.OffsetDeleteRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationDelete); code != 0 {
		resp := greq.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.OffsetDelete(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				req.setErr(p.ErrorCode)
			}
		}
	}
	return resp, err
}
