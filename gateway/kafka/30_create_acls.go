package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateAcls: v0-3
//
// Behavior:
//   - Each creation sets the Iggy permission its ACL stands for (package authz) on its user, in
//     Iggy, so every gateway enforces it at once. One result per creation, in order.
//   - What Iggy's permissions cannot express is refused, with a message naming it, rather than
//     kept as an ACL nobody enforces: deny rules, hosts other than *, prefixed patterns, single
//     groups or transactional ids, CREATE on one topic, principals other than User:<name>, a
//     user Iggy does not know, a topic that does not exist (Iggy grants on existing topics).
//     These are INVALID_REQUEST; nothing of that creation changes.
//   - Needs Iggy's manage-users permission (ALTER on the cluster): without it every creation is
//     CLUSTER_AUTHORIZATION_FAILED. A gateway without SASL keeps no users: SECURITY_DISABLED.
func init() { regKey(createACLsKey, 0, 3) }

func (c *conn) handleCreateACLs(req *request) (kmsg.Response, error) {
	creq := req.kreq.(*kmsg.CreateACLsRequest)
	resp := creq.ResponseKind().(*kmsg.CreateACLsResponse)
	results := make([]error, len(creq.Creations))
	if err := c.aclAuthorized(req, true); err != nil {
		results = repeatErr(len(creq.Creations), err)
	} else {
		var bindings []ACLBinding
		var at []int
		for i, cr := range creq.Creations {
			if creq.Version == 0 {
				cr.ResourcePatternType = kmsg.ACLResourcePatternTypeLiteral
			}
			b, err := parseCreation(cr)
			if err != nil {
				results[i] = err
				continue
			}
			bindings = append(bindings, b)
			at = append(at, i)
		}
		if len(bindings) > 0 {
			for j, err := range c.s.aclsOf().Grant(req.ctx, bindings) {
				results[at[j]] = err
			}
		}
	}
	for _, err := range results {
		r := kmsg.NewCreateACLsResponseResult()
		if err != nil {
			r.ErrorCode, r.ErrorMessage = errCode(err), errMessage(err)
			req.setErr(r.ErrorCode)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
