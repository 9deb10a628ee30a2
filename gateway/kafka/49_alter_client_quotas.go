package kafka

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/quota"

	"maps"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterClientQuotas: v0-1
//
// Behavior:
//
//   - Sets and removes client quotas per entity (user, client-id, or both; a null name is the
//     type's default), kept in Iggy (Config.ClientQuotas) so every gateway of a fleet reads the
//     same. One result per entry, in order; an entry is applied whole or not at all.
//
//   - Refused with INVALID_REQUEST and a message, changing nothing of the entry: an entity type
//     other than user and client-id, a type named twice, an empty name, an unknown key, a key
//     named twice, a value of zero or below (a quota is removed, not set to zero), a byte rate
//     that is not a whole number.
//
//   - Needs ALTER_CONFIGS on the cluster (Iggy's manage-servers): CLUSTER_AUTHORIZATION_FAILED.
//
//   - Enforced by every gateway of the fleet (throttle.go, gateway/quota): this one reads
//     the quotas again at once, the others within their refresh interval.
func init() { regKey(alterClientQuotasKey, 0, 1) }

func (c *conn) handleAlterClientQuotas(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.AlterClientQuotasRequest)
	resp := areq.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	authCode := c.clusterCode(req, kmsg.ACLOperationAlterConfigs)
	var all map[string]map[string]string
	var allErr error
	if authCode == 0 {
		all, allErr = c.s.clientQuotasOf().ClientQuotas(req.ctx)
	}
	for _, entry := range areq.Entries {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		var entity []quota.Component
		for _, ee := range entry.Entity {
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = ee.Type, ee.Name
			r.Entity = append(r.Entity, re)
			entity = append(entity, quota.Component{Type: ee.Type, Name: ee.Name})
		}
		err := allErr
		if authCode != 0 {
			err = codeErr(authCode, "altering client quotas needs ALTER_CONFIGS on the cluster (Iggy's manage-servers)")
		}
		if err == nil {
			err = c.alterQuotaEntry(req, all, entity, entry.Ops, areq.ValidateOnly)
		}
		if err != nil {
			r.ErrorCode, r.ErrorMessage = errCode(err), errMessage(err)
			req.setErr(r.ErrorCode)
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp, nil
}

// alterQuotaEntry checks one entry whole, then applies it to the entity's current quotas.
func (c *conn) alterQuotaEntry(req *request, all map[string]map[string]string, entity []quota.Component, ops []kmsg.AlterClientQuotasRequestEntryOp, validateOnly bool) error {
	if err := checkEntity(entity); err != nil {
		return err
	}
	named := map[string]bool{}
	for _, op := range ops {
		if named[op.Key] {
			return Refuse(kerr.InvalidRequest, "quota key %q named twice", op.Key)
		}
		named[op.Key] = true
		if !quota.Known(op.Key) || !op.Remove {
			if err := checkQuotaValue(op.Key, op.Value); err != nil {
				return err
			}
		}
	}
	key := quota.EncodeEntity(entity)
	next := maps.Clone(all[key])
	if next == nil {
		next = map[string]string{}
	}
	for _, op := range ops {
		if op.Remove {
			delete(next, op.Key)
		} else {
			next[op.Key] = strconv.FormatFloat(op.Value, 'g', -1, 64)
		}
	}
	if validateOnly || maps.Equal(next, all[key]) {
		return nil
	}
	if err := c.s.clientQuotasOf().SetClientQuotas(req.ctx, key, next); err != nil {
		return err
	}
	if q := c.s.cfg.Quotas; q != nil {
		q.Refresh()
	}
	if all != nil {
		all[key] = next
	}
	return nil
}
