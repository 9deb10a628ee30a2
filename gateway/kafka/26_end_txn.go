package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// EndTxn: v0-5
//
// Behavior:
//   - Served by Config.Txns: commits or aborts the producer's transaction, answered once its
//     PrepareCommit or PrepareAbort record is read back; the markers follow (package txn).
//   - v5 is transactions v2 (KIP-890 part 2): every end bumps the producer's epoch (a new
//     producer id at epoch 0 once the epochs are spent), the answer carries the producer id and
//     epoch to go on with, an abort with no transaction open bumps too, and a retry at the
//     epoch before the bump is answered with the current pair, and any end of the producer while
//     its previous end is being written is CONCURRENT_TRANSACTIONS (txn.Manager.EndTxnV2). v4
//     only allows TRANSACTION_ABORTABLE, which is never answered.
func init() { regTxnKey(endTxnKey, 0, 5) }

func (c *conn) handleEndTxn(req *request) (kmsg.Response, error) {
	ereq := req.kreq.(*kmsg.EndTxnRequest)
	// Which transaction protocol a client speaks shows in the version (v5: transactions v2).
	c.s.log.Debug("kafka EndTxn", append(c.logAttrs(), "transactional_id", ereq.TransactionalID, "version", req.version,
		"commit", ereq.Commit, "producer_id", ereq.ProducerID, "epoch", ereq.ProducerEpoch)...)
	resp, err := c.s.cfg.Txns.EndTxn(req.ctx, c.identity(req), ereq)
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
