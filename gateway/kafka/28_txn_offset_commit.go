package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// TxnOffsetCommit: v0-3
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
//   - The gateway must coordinate the transactional id as well as the group (always with one
//     gateway; in a fleet when both log partitions are its): otherwise COORDINATOR_NOT_AVAILABLE,
//     which the client retries.
//
// Not implemented:
//   - v4 (TRANSACTION_ABORTABLE, KIP-890 part 1) and v5 (transactions v2, KIP-890 part 2).
func init() { regTxnKey(txnOffsetCommitKey, 0, 3) }

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
