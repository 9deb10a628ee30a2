package kafka

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/quota"

	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeClientQuotas: v0-1
//
// Behavior:
//   - Lists the client quotas kept in Iggy (Config.ClientQuotas) whose entity the filter
//     matches, as Kafka matches: each component by exact name (MatchType 0), the default
//     (1) or any name (2) of its type; Strict leaves out entities with other types.
//   - Needs DESCRIBE_CONFIGS on the cluster (Iggy's read-servers): CLUSTER_AUTHORIZATION_FAILED.
//   - A component of a type other than user and client-id, a type named twice, an exact match
//     without a name, or an unknown match type is INVALID_REQUEST.
//   - Enforced as throttle.go says.
func init() { regKey(describeClientQuotasKey, 0, 1) }

func (c *conn) handleDescribeClientQuotas(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeClientQuotasRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(err error) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = errCode(err), errMessage(err)
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	seen := map[string]bool{}
	for _, comp := range dreq.Components {
		switch {
		case comp.EntityType != "user" && comp.EntityType != "client-id":
			return fail(Refuse(kerr.InvalidRequest, "quota entity type %q: the gateway serves user and client-id quotas", comp.EntityType))
		case seen[comp.EntityType]:
			return fail(Refuse(kerr.InvalidRequest, "quota entity type %q named twice", comp.EntityType))
		case comp.MatchType == kmsg.QuotasMatchTypeExact && comp.Match == nil:
			return fail(Refuse(kerr.InvalidRequest, "an exact match of %s without a name", comp.EntityType))
		case comp.MatchType > kmsg.QuotasMatchTypeAny || comp.MatchType < 0:
			return fail(Refuse(kerr.InvalidRequest, "unknown match type %d", comp.MatchType))
		}
		seen[comp.EntityType] = true
	}
	if code := c.clusterCode(req, kmsg.ACLOperationDescribeConfigs); code != 0 {
		return fail(codeErr(code, "describing client quotas needs DESCRIBE_CONFIGS on the cluster (Iggy's read-servers)"))
	}
	all, err := c.s.clientQuotasOf().ClientQuotas(req.ctx)
	if err != nil {
		return fail(err)
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		entity, ok := quota.DecodeEntity(k)
		if !ok || !quotaMatches(dreq.Components, dreq.Strict, entity) {
			continue
		}
		e := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, comp := range entity {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = comp.Type, comp.Name
			e.Entity = append(e.Entity, ee)
		}
		names := make([]string, 0, len(all[k]))
		for n := range all[k] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v, err := strconv.ParseFloat(all[k][n], 64)
			if err != nil {
				continue
			}
			ev := kmsg.NewDescribeClientQuotasResponseEntryValue()
			ev.Key, ev.Value = n, v
			e.Values = append(e.Values, ev)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

// quotaMatches reports whether entity passes the filter's components.
func quotaMatches(comps []kmsg.DescribeClientQuotasRequestComponent, strict bool, entity []quota.Component) bool {
	byType := map[string]*string{}
	has := map[string]bool{}
	for _, c := range entity {
		byType[c.Type], has[c.Type] = c.Name, true
	}
	for _, comp := range comps {
		if !has[comp.EntityType] {
			return false
		}
		name := byType[comp.EntityType]
		switch comp.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if name == nil || *name != *comp.Match {
				return false
			}
		case kmsg.QuotasMatchTypeDefault:
			if name != nil {
				return false
			}
		}
	}
	return !strict || len(entity) == len(comps)
}
