package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// OffsetCommit: v0-9
//
// Behavior:
//   - Served by Config.Groups. A member commits with its generation and member id (v1+); a
//     commit with generation -1 and no member id to a group without members is the
//     simple-consumer pattern and creates the group. v6+ keeps the leader epoch, every version
//     the metadata; v2-4's retention time sets when an empty group's offset may expire.
//   - v7+ group.instance.id fences a stale member of a static instance (FENCED_INSTANCE_ID).
//   - A KIP-848 consumer group checks the member as Kafka does: the generation field is the
//     member epoch (UNKNOWN_MEMBER_ID; STALE_MEMBER_EPOCH ahead of the member's; behind it,
//     KIP-1251, per partition: taken for a partition the member held at that epoch,
//     STALE_MEMBER_EPOCH for the others), a member must commit with v9+ (UNSUPPORTED_VERSION
//     below), and a commit without a member epoch is taken while the group has no members.
//   - Acknowledged only once the coordinator log holds the commit.
//   - Topics the connection's identity cannot see, and partitions past the topic's count, are
//     UNKNOWN_TOPIC_OR_PARTITION per partition.
//
// Not implemented:
//   - v10 (topics by id only): clients use v9, which names topics, when v10 is not listed, as
//     franz-go and librdkafka do.
//   - v1's per-partition commit timestamp is ignored.
func init() { regGroupKey(offsetCommitKey, 0, 9) }

func (c *conn) handleOffsetCommit(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.OffsetCommitRequest)
	if code := c.groupCode(req, greq.Group, kmsg.ACLOperationRead); code != 0 {
		resp := greq.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range greq.Topics {
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p.Partition, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.OffsetCommit(req.ctx, c.identity(req), greq)
	if err == nil {
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				req.setErr(p.ErrorCode)
			}
		}
	}
	return resp, err
}
