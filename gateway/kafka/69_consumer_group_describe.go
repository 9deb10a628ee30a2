package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// ConsumerGroupDescribe: v0-1 (KIP-848)
//
// Behavior:
//   - Served by Config.Groups, only for the groups this gateway coordinates (the others answer
//     NOT_COORDINATOR each): state, group epoch, assignment epoch, the assignor in use, and per
//     member its epoch, client id and host, instance and rack ids, subscription (names or
//     regex), assignment and target assignment with topic ids and names; v1 the member type
//     (consumer).
//   - A group that is not a consumer group (none, or a classic one) is GROUP_ID_NOT_FOUND; an
//     empty group id INVALID_GROUP_ID.
//
// Not implemented:
//   - Authorized operations: not reported (Iggy permissions decide).
func init() { regGroupKey(consumerGroupDescribeKey, 0, 1) }

func (c *conn) handleConsumerGroupDescribe(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.ConsumerGroupDescribeRequest)
	if code := c.groupCode(req, authz.Wildcard, kmsg.ACLOperationDescribe); code != 0 {
		resp := greq.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range greq.Groups {
			sg := kmsg.NewConsumerGroupDescribeResponseGroup()
			sg.Group, sg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, sg)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.ConsumerGroupDescribe(req.ctx, c.identity(req), greq)
	if err == nil {
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
