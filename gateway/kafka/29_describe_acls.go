package kafka

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// DescribeAcls: v0-3
//
// Behavior:
//   - Lists, for every Iggy user, the ACLs its Iggy permissions amount to (package authz holds
//     the table): allow rules on literal names or the wildcard *, from every host, principal
//     User:<name>. The same rule authorizes the users' requests, so the list is what the
//     gateway enforces. Resources in name order, each with its ACLs.
//   - The filter matches as Kafka's does (ANY, MATCH, LITERAL; PREFIXED matches nothing, as
//     there are no prefixed ACLs); an UNKNOWN field is INVALID_REQUEST.
//   - Needs Iggy's read-users permission (DESCRIBE on the cluster): without it
//     CLUSTER_AUTHORIZATION_FAILED. A gateway without SASL keeps no users: SECURITY_DISABLED.
func init() { regKey(describeACLsKey, 0, 3) }

func (c *conn) handleDescribeACLs(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeACLsRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeACLsResponse)
	fail := func(err error) (kmsg.Response, error) {
		resp.ErrorCode = errCode(err)
		resp.ErrorMessage = errMessage(err)
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	f := aclFilter{resource: dreq.ResourceType, name: dreq.ResourceName, pattern: dreq.ResourcePatternType,
		principal: dreq.Principal, host: dreq.Host, op: dreq.Operation, permission: dreq.PermissionType}
	if dreq.Version == 0 {
		f.pattern = kmsg.ACLResourcePatternTypeLiteral
	}
	if err := f.check(); err != nil {
		return fail(err)
	}
	if err := c.aclAuthorized(req, false); err != nil {
		return fail(err)
	}
	all, err := c.s.aclsOf().Bindings(req.ctx)
	if err != nil {
		return fail(err)
	}
	type key struct {
		typ  kmsg.ACLResourceType
		name string
	}
	byRes := map[key][]ACLBinding{}
	var keys []key
	for _, b := range all {
		if !f.matches(b) {
			continue
		}
		k := key{b.Resource, b.Name}
		if _, ok := byRes[k]; !ok {
			keys = append(keys, k)
		}
		byRes[k] = append(byRes[k], b)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].typ != keys[j].typ {
			return keys[i].typ < keys[j].typ
		}
		return keys[i].name < keys[j].name
	})
	for _, k := range keys {
		r := kmsg.NewDescribeACLsResponseResource()
		r.ResourceType, r.ResourceName, r.ResourcePatternType = k.typ, k.name, kmsg.ACLResourcePatternTypeLiteral
		for _, b := range byRes[k] {
			a := kmsg.NewDescribeACLsResponseResourceACL()
			a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal(), authz.Wildcard, b.Op, kmsg.ACLPermissionTypeAllow
			r.ACLs = append(r.ACLs, a)
		}
		resp.Resources = append(resp.Resources, r)
	}
	return resp, nil
}
