package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// TxnOffsetCommit: v0-5
//
// Behavior:
//   - Served by Config.Txns, at the group's coordinator (the client finds it with FindCoordinator
//     key type 0): the member is checked against the group as KIP-447 has it (v3's generation,
//     member id and group instance id for a classic group, the member epoch for a KIP-848
//     group: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, STALE_MEMBER_EPOCH), then
//     the offsets are staged in the producer's transaction on the coordinator log, answered once
//     the transaction record is read back. They become the group's committed offsets when the
//     transaction commits and are dropped when it aborts; meanwhile OffsetFetch with
//     RequireStable answers their partitions UNSTABLE_OFFSET_COMMIT.
//   - Topics the identity cannot see, partitions past the topic's count and metadata over 4 KiB
//     are refused per partition (UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE); the
//     others are staged.
//   - The transaction is checked at its coordinator, on this gateway or another (an
//     AddPartitionsToTxn v4 verify-only batch); one that is moving or cannot be reached is
//     COORDINATOR_NOT_AVAILABLE, which the client retries.
//   - v5 (transactions v2, KIP-890 part 2): the client sends no AddOffsetsToTxn; the request
//     adds the group's coordinator log partition (__consumer_offsets N) to the producer's
//     transaction at its coordinator, beginning one when none is open, as Kafka's group
//     coordinator has the transaction coordinator add it. v4 only allows TRANSACTION_ABORTABLE,
//     which is never answered.
//
// Not implemented:
//   - v6 (topic ids, KIP-516).
func init() { regTxnKey(txnOffsetCommitKey, 0, 5) }

func (c *conn) handleTxnOffsetCommit(req *request) (kmsg.Response, error) {
	resp, err := c.s.cfg.Txns.TxnOffsetCommit(req.ctx, c.identity(req), req.kreq.(*kmsg.TxnOffsetCommitRequest))
	if err == nil {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				req.setErr(p.ErrorCode)
			}
		}
	}
	return resp, err
}
