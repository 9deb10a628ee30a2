package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

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
	resp, err := c.s.cfg.Groups.DeleteGroups(req.ctx, c.identity(req), req.kreq.(*kmsg.DeleteGroupsRequest))
	if err == nil {
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
