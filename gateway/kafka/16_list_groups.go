package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

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
	resp, err := c.s.cfg.Groups.ListGroups(req.ctx, c.identity(req), req.kreq.(*kmsg.ListGroupsRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
