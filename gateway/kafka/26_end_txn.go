package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// EndTxn: v0-3
//
// Behavior:
//   - Served by Config.Txns: commits or aborts the producer's transaction, answered once its
//     PrepareCommit or PrepareAbort record is read back; the markers follow (package txn).
//
// Not implemented:
//   - v4 (TRANSACTION_ABORTABLE) and v5 (transactions v2, KIP-890 part 2).
func init() { regTxnKey(endTxnKey, 0, 3) }

func (c *conn) handleEndTxn(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.EndTxn(req.ctx, c.identity(req), req.kreq.(*kmsg.EndTxnRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
