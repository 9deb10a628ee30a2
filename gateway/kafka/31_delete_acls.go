package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// DeleteAcls: v0-3
//
// Behavior:
//   - Each filter selects ACLs of the DescribeAcls view (matched as Kafka matches); each one
//     selected clears the Iggy permission it stands for on its user. One result per filter,
//     each listing the ACLs it matched with an error per ACL.
//   - An ACL that the user's other permissions still allow (a global Iggy flag, or one that
//     implies it, such as manage-topic implying read) is not removed: its error says so and
//     nothing changes for it; remove the broader permission instead.
//   - An UNKNOWN filter field is INVALID_REQUEST for that filter.
//   - Needs Iggy's manage-users permission (ALTER on the cluster): without it every filter is
//     CLUSTER_AUTHORIZATION_FAILED. A gateway without SASL keeps no users: SECURITY_DISABLED.
func init() { regKey(deleteACLsKey, 0, 3) }

func (c *conn) handleDeleteACLs(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DeleteACLsRequest)
	resp := dreq.ResponseKind().(*kmsg.DeleteACLsResponse)
	fails := make([]error, len(dreq.Filters))
	matched := make([][]ACLBinding, len(dreq.Filters))
	var all []ACLBinding
	err := c.aclAuthorized(req, true)
	if err == nil {
		all, err = c.s.aclsOf().Bindings(req.ctx)
	}
	var revoke []ACLBinding
	type at struct{ filter, match int }
	var where []at
	for i, fl := range dreq.Filters {
		if err != nil {
			fails[i] = err
			continue
		}
		f := aclFilter{resource: fl.ResourceType, name: fl.ResourceName, pattern: fl.ResourcePatternType,
			principal: fl.Principal, host: fl.Host, op: fl.Operation, permission: fl.PermissionType}
		if dreq.Version == 0 {
			f.pattern = kmsg.ACLResourcePatternTypeLiteral
		}
		if ferr := f.check(); ferr != nil {
			fails[i] = ferr
			continue
		}
		for _, b := range all {
			if f.matches(b) {
				where = append(where, at{i, len(matched[i])})
				matched[i] = append(matched[i], b)
				revoke = append(revoke, b)
			}
		}
	}
	var errs []error
	if len(revoke) > 0 {
		errs = c.s.aclsOf().Revoke(req.ctx, revoke)
	}
	matchErr := make([][]error, len(dreq.Filters))
	for i := range matched {
		matchErr[i] = make([]error, len(matched[i]))
	}
	for j, w := range where {
		matchErr[w.filter][w.match] = errs[j]
	}
	for i := range dreq.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		if fails[i] != nil {
			r.ErrorCode, r.ErrorMessage = errCode(fails[i]), errMessage(fails[i])
			req.setErr(r.ErrorCode)
		}
		for j, b := range matched[i] {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = b.Resource, b.Name, kmsg.ACLResourcePatternTypeLiteral
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal(), authz.Wildcard, b.Op, kmsg.ACLPermissionTypeAllow
			if e := matchErr[i][j]; e != nil {
				m.ErrorCode, m.ErrorMessage = errCode(e), errMessage(e)
				req.setErr(m.ErrorCode)
			}
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
