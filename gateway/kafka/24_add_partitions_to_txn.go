package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// AddPartitionsToTxn: v0-5
//
// Behavior:
//   - Served by Config.Txns: adds the partitions to the producer's transaction on the
//     coordinator log, answered once the transaction record is read back. Every partition of
//     the request gets the same code; a topic that does not exist is
//     UNKNOWN_TOPIC_OR_PARTITION and, as Kafka does, the others OPERATION_NOT_ATTEMPTED.
//   - v4 (KIP-890 part 1) is what gateways send each other, as Kafka's brokers do: batches of
//     transactional ids, authorized as CLUSTER_ACTION on the cluster (else
//     CLUSTER_AUTHORIZATION_FAILED for the whole request). A verify-only batch adds nothing and
//     answers whether each partition is in the producer's open transaction
//     (INVALID_TXN_STATE when not); partition N of __consumer_offsets is in it once a group of
//     coordinator log partition N was added with AddOffsetsToTxn. A gateway asks this before
//     it stores a transactional produce or a TxnOffsetCommit for a transaction another gateway
//     coordinates. A batch that is not verify-only adds the partitions (a gateway asks this for
//     a Produce v12 or a TxnOffsetCommit v5 of transactions v2); partition N of
//     __consumer_offsets is then coordinator log partition N (N < 16).
//   - v5 is v4 that allows TRANSACTION_ABORTABLE (KIP-890), which is never answered.
func init() { regTxnKey(addPartitionsToTxnKey, 0, 5) }

func (c *conn) handleAddPartitionsToTxn(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.AddPartitionsToTxnRequest)
	if areq.Version >= 4 {
		if code := c.clusterCode(req, kmsg.ACLOperationClusterAction); code != 0 {
			resp := areq.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = code
			req.setErr(code)
			return resp, nil
		}
	}
	resp, err := c.s.cfg.Txns.AddPartitionsToTxn(req.ctx, c.identity(req), areq)
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				req.setErr(p.ErrorCode)
			}
		}
		for _, tx := range resp.Transactions {
			for _, t := range tx.Topics {
				for _, p := range t.Partitions {
					req.setErr(p.ErrorCode)
				}
			}
		}
	}
	return resp, err
}
