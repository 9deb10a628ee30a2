package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// AddOffsetsToTxn: v0-4
//
// Behavior:
//   - Served by Config.Txns: adds the group to the producer's transaction on the coordinator
//     log, answered once the transaction record is read back.
//   - v4 only allows TRANSACTION_ABORTABLE (KIP-890), which is never answered. A client of
//     transactions v2 sends TxnOffsetCommit v5 instead, which adds the group itself.
func init() { regTxnKey(addOffsetsToTxnKey, 0, 4) }

func (c *conn) handleAddOffsetsToTxn(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.AddOffsetsToTxn(req.ctx, c.identity(req), req.kreq.(*kmsg.AddOffsetsToTxnRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
