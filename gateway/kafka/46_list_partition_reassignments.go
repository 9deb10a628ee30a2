package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListPartitionReassignments: v0
//
// Behavior:
//   - No reassignment is ever in progress (see AlterPartitionReassignments): the answer lists
//     no topic, whether the request names topics (known or not, as Kafka lists only those with
//     a reassignment) or asks for every one (null).
func init() { regKey(listPartitionReassignmentsKey, 0, 0) }

func (c *conn) handleListPartitionReassignments(req *request) (kmsg.Response, error) {
	lreq := req.kreq.(*kmsg.ListPartitionReassignmentsRequest)
	resp := lreq.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	if code := c.clusterCode(req, kmsg.ACLOperationDescribe); code != 0 {
		resp.ErrorCode = code
		req.setErr(code)
	}
	return resp, nil
}
