package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// DeleteGroups: v0-3
//
// Behavior:
//   - Served by Config.Groups, per group, for the groups this gateway coordinates: an empty
//     group is deleted with its offsets (written to the coordinator log first); a group with
//     members is NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
//
// Not implemented:
// * Nothing; there are no share groups to delete.
func init() { regGroupKey(deleteGroupsKey, 0, 3) }

func (c *conn) handleDeleteGroups(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.DeleteGroupsRequest)
	if code := c.groupCode(req, authz.Wildcard, kmsg.ACLOperationDelete); code != 0 {
		resp := greq.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, g := range greq.Groups {
			sg := kmsg.NewDeleteGroupsResponseGroup()
			sg.Group, sg.ErrorCode = g, code
			resp.Groups = append(resp.Groups, sg)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.DeleteGroups(req.ctx, c.identity(req), greq)
	if err == nil {
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
