package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// AddPartitionsToTxn: v0-3
//
// Behavior:
//   - Served by Config.Txns: adds the partitions to the producer's transaction on the
//     coordinator log, answered once the transaction record is read back. Every partition of
//     the request gets the same code; a topic that does not exist is
//     UNKNOWN_TOPIC_OR_PARTITION and, as Kafka does, the others OPERATION_NOT_ATTEMPTED.
//
// Not implemented:
//   - v4 (KIP-890's batches of transactional ids and verify-only requests, which brokers send
//     each other): not advertised, so a client sends v3.
func init() { regTxnKey(addPartitionsToTxnKey, 0, 3) }

func (c *conn) handleAddPartitionsToTxn(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.AddPartitionsToTxn(req.ctx, c.identity(req), req.kreq.(*kmsg.AddPartitionsToTxnRequest))
	if err == nil {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				req.setErr(p.ErrorCode)
			}
		}
	}
	return resp, err
}
