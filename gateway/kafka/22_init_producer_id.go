package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID: v0-4
//
// Behavior:
//   - Idempotent producers get an id that is unique across the fleet (the Storage allocates it
//     through Iggy) at the epoch it chooses.
//   - A producer that sends its current id and epoch (KIP-360, v3+) gets a fresh id rather than a
//     bumped epoch; clients accept either.
//   - A transactional id is served by Config.Txns (package txn): fencing of older epochs, the
//     previous incarnation's open transaction aborted, CONCURRENT_TRANSACTIONS meanwhile.
//
// Not implemented:
//   - Without a Config.Txns a transactional id is TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
//   - v5 (transactions v2).
func init() { regKey(initProducerIDKey, 0, 4) }

func (c *conn) handleInitProducerID(req *request) (kmsg.Response, error) {
	ireq := req.kreq.(*kmsg.InitProducerIDRequest)
	resp := ireq.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = -1, -1
	if ireq.TransactionalID != nil && c.s.cfg.Txns != nil {
		tresp, err := c.s.cfg.Txns.InitProducerID(req.ctx, c.identity(req), ireq)
		if err == nil {
			req.setErr(tresp.ErrorCode)
		}
		return tresp, err
	}
	if ireq.TransactionalID != nil {
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	if code := c.clusterCode(req, kmsg.ACLOperationIdempotentWrite); code != 0 {
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	id, epoch, err := req.storage.InitProducerID(req.ctx)
	if err != nil {
		resp.ErrorCode = errCode(err)
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	resp.ProducerID, resp.ProducerEpoch = id, epoch
	return resp, nil
}
