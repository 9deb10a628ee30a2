package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

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
	resp, err := c.s.cfg.Groups.DescribeGroups(req.ctx, c.identity(req), req.kreq.(*kmsg.DescribeGroupsRequest))
	if err == nil {
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
