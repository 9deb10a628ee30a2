package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// AddOffsetsToTxn: v0-3
//
// Behavior:
//   - Served by Config.Txns: adds the group to the producer's transaction on the coordinator
//     log, answered once the transaction record is read back.
//
// Not implemented:
//   - v4 (its only change is the TRANSACTION_ABORTABLE code of KIP-890).
func init() { regTxnKey(addOffsetsToTxnKey, 0, 3) }

func (c *conn) handleAddOffsetsToTxn(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.AddOffsetsToTxn(req.ctx, c.identity(req), req.kreq.(*kmsg.AddOffsetsToTxnRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
