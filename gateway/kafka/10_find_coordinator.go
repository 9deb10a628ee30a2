package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// FindCoordinator: v0-6
//
// Behavior:
//   - Served by Config.Groups: names the gateway owning the key's coordinator log partition,
//     or COORDINATOR_NOT_AVAILABLE while no owner is known. v4+ answers every key of the batch.
//
// Not implemented:
//   - Transaction (type 1) and share-group (type 2, v6) coordinators: the coordinator answers
//     them as it decides; the gateway's (gateway/coordinator) answers a transactional id
//     TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as InitProducerId does, and any other type
//     INVALID_REQUEST, errors clients give up on at once.
func init() { regGroupKey(findCoordinatorKey, 0, 6) }

func (c *conn) handleFindCoordinator(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.FindCoordinatorRequest)
	res := kmsg.ACLResourceTypeGroup
	if greq.CoordinatorType == 1 {
		res = kmsg.ACLResourceTypeTransactionalId
	}
	if code := c.authCode(req, res, authz.Wildcard, kmsg.ACLOperationDescribe); code != 0 {
		resp := greq.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode, resp.NodeID, resp.Port = code, -1, -1
		keys := greq.CoordinatorKeys
		if greq.Version < 4 {
			keys = nil
		}
		for _, k := range keys {
			sc := kmsg.NewFindCoordinatorResponseCoordinator()
			sc.Key, sc.NodeID, sc.Port, sc.ErrorCode = k, -1, -1, code
			resp.Coordinators = append(resp.Coordinators, sc)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.FindCoordinator(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, k := range resp.Coordinators {
			req.setErr(k.ErrorCode)
		}
	}
	return resp, err
}
