package kafka

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeUserScramCredentials: v0
//
// Behavior:
//   - Answers each user's SCRAM mechanisms (1 SCRAM-SHA-256, 2 SCRAM-SHA-512) and iteration
//     counts from Config.SCRAM, which every gateway reads from Iggy, so any gateway answers
//     what any other one altered. Users null or empty asks for every user with a credential,
//     in name order.
//   - A user named twice is DUPLICATE_RESOURCE, a user without a credential RESOURCE_NOT_FOUND.
//   - A connection authenticated with SASL sees its own user, and every user when its user has
//     Iggy's read-users (or manage-users) permission; another user named without it is
//     CLUSTER_AUTHORIZATION_FAILED, and asking for every user answers its own alone. A
//     connection of a gateway without SASL sees every user. (Kafka asks for DESCRIBE on the
//     cluster, which the ACL view maps to read-users.)
//   - When the credentials cannot be read, the top-level error says why (Iggy's error mapped
//     to Kafka's, else UNKNOWN_SERVER_ERROR).
//   - A server without Config.SCRAM keeps no credentials: every user named is RESOURCE_NOT_FOUND.
func init() { regKey(describeUserSCRAMKey, 0, 0) }

func (c *conn) handleDescribeUserSCRAMCredentials(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	creds, err := c.s.scramUsers().Credentials(req.ctx)
	if err != nil {
		resp.ErrorCode = errCode(err)
		msg := err.Error()
		resp.ErrorMessage = &msg
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	all := req.user == ""
	if !all {
		if all, err = c.s.scramUsers().Manages(req.ctx, req.user, false); err != nil {
			resp.ErrorCode = errCode(err)
			msg := err.Error()
			resp.ErrorMessage = &msg
			req.setErr(resp.ErrorCode)
			return resp, nil
		}
	}
	var names []string
	seen := map[string]int{}
	for _, u := range dreq.Users {
		if seen[u.Name]++; seen[u.Name] == 1 {
			names = append(names, u.Name)
		}
	}
	if len(dreq.Users) == 0 {
		for name := range creds {
			if all || name == req.user {
				names = append(names, name)
			}
		}
		sort.Strings(names)
	}
	for _, name := range names {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = name
		switch {
		case seen[name] > 1:
			r.ErrorCode = kerr.DuplicateResource.Code
		case !all && name != req.user:
			r.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			msg := "describing the SCRAM credentials of another user needs Iggy's read-users permission"
			r.ErrorMessage = &msg
		case len(creds[name]) == 0:
			r.ErrorCode = kerr.ResourceNotFound.Code
		}
		if r.ErrorCode == 0 {
			for _, cr := range creds[name] {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = int8(cr.Mechanism), cr.Iterations
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
			sort.Slice(r.CredentialInfos, func(i, j int) bool { return r.CredentialInfos[i].Mechanism < r.CredentialInfos[j].Mechanism })
		}
		req.setErr(r.ErrorCode)
		resp.Results = append(resp.Results, r)
	}
	return resp, nil
}
