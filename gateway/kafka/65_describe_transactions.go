package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// DescribeTransactions: v0
//
// Behavior:
//   - Served by Config.Txns: each id's state as its coordinator log partition holds it, for
//     the ids this gateway coordinates; NOT_COORDINATOR for the others (the client asks each
//     id's coordinator), TRANSACTIONAL_ID_NOT_FOUND for an id the partition does not hold.
func init() { regTxnKey(describeTransactionsKey, 0, 0) }

func (c *conn) handleDescribeTransactions(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.DescribeTransactions(req.ctx, c.identity(req), req.kreq.(*kmsg.DescribeTransactionsRequest))
	if err == nil {
		for _, s := range resp.TransactionStates {
			req.setErr(s.ErrorCode)
		}
	}
	return resp, err
}
