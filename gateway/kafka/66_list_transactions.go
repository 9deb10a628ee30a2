package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// ListTransactions: v0-1
//
// Behavior:
//   - Served by Config.Txns: the transactional ids this gateway coordinates, filtered by state,
//     producer id and (v1) how long the open transaction has run; a client lists the fleet by
//     asking every gateway, as it asks every Kafka broker. State names Kafka does not know are
//     returned as unknown filters.
//
// Not implemented:
//   - v2 (KIP-1152's transactional id pattern).
func init() { regTxnKey(listTransactionsKey, 0, 1) }

func (c *conn) handleListTransactions(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.ListTransactions(req.ctx, c.identity(req), req.kreq.(*kmsg.ListTransactionsRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
	}
	return resp, err
}
