package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

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
	resp, err := c.s.cfg.Groups.FindCoordinator(req.ctx, c.identity(req), req.kreq.(*kmsg.FindCoordinatorRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, k := range resp.Coordinators {
			req.setErr(k.ErrorCode)
		}
	}
	return resp, err
}
