package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// DescribeGroups: v0-6
//
// Behavior:
//   - Served by Config.Groups, only for the groups this gateway coordinates (the others answer
//     NOT_COORDINATOR each). Members carry client id and host, v4+ their group.instance.id;
//     protocol metadata and assignments while the group is Stable, as Kafka shows them.
//   - An unknown group is Dead; v6+ adds GROUP_ID_NOT_FOUND. So is a KIP-848 consumer group,
//     with the message "Group g is not a classic group." as Kafka 4 answers (ConsumerGroupDescribe
//     describes it).
//
// Not implemented:
// * v3+ authorized operations: reported as zero (no ACLs; Iggy permissions decide).
func init() { regGroupKey(describeGroupsKey, 0, 6) }

func (c *conn) handleDescribeGroups(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.DescribeGroupsRequest)
	if code := c.groupCode(req, authz.Wildcard, kmsg.ACLOperationDescribe); code != 0 {
		resp := greq.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range greq.Groups {
			sg := kmsg.NewDescribeGroupsResponseGroup()
			sg.Group, sg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, sg)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.DescribeGroups(req.ctx, c.identity(req), greq)
	if err == nil {
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
