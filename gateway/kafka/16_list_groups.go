package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// ListGroups: v0-5
//
// Behavior:
//   - Served by Config.Groups: the groups this gateway coordinates, with protocol type, v4+
//     state (and the states filter, case-insensitive), v5+ type "classic" or, for a KIP-848
//     consumer group, "consumer" with its states (Empty, Assigning, Reconciling, Stable) (and
//     the types filter).
//
// Not implemented:
// * Share groups: there are none.
func init() { regGroupKey(listGroupsKey, 0, 5) }

func (c *conn) handleListGroups(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.ListGroupsRequest)
	// Kafka lists the groups the user may describe; groups are granted all at once (group *).
	if code := c.groupCode(req, authz.Wildcard, kmsg.ACLOperationDescribe); code != 0 {
		resp := greq.ResponseKind().(*kmsg.ListGroupsResponse)
		if code != kerr.GroupAuthorizationFailed.Code {
			resp.ErrorCode = code
			req.setErr(code)
		}
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.ListGroups(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
