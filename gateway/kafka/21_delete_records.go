package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords: v0-2
//
// Behavior:
//   - Moves each partition's log start offset forward to the offset asked (-1: the high
//     watermark) and answers it as the low watermark; an offset below the log start changes
//     nothing and answers the log start. Kafka readers then find the partition starting there:
//     ListOffsets earliest answers it, Fetch below it is OFFSET_OUT_OF_RANGE, and Fetch and
//     Produce answers carry it as LogStartOffset, at every gateway and across restarts (the
//     bridge keeps it in Iggy; what an Iggy reader sees is in the bridge's package doc).
//   - An offset below -1 or past the high watermark is OFFSET_OUT_OF_RANGE; a topic the
//     connection's identity cannot see, or a partition past the topic's count, is
//     UNKNOWN_TOPIC_OR_PARTITION; without the Iggy permission to manage the topic it is
//     TOPIC_AUTHORIZATION_FAILED; the internal __consumer_offsets is INVALID_TOPIC_EXCEPTION.
//   - Only the partition's leader in Metadata deletes, as in Kafka; another gateway answers
//     NOT_LEADER_OR_FOLLOWER, so the deletions of one partition are made one at a time.
//   - The answer comes once the log start is stored; TimeoutMillis is not needed.
func init() { regKey(deleteRecordsKey, 0, 2) }

func (c *conn) handleDeleteRecords(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DeleteRecordsRequest)
	resp := dreq.ResponseKind().(*kmsg.DeleteRecordsResponse)
	view := c.s.brokerView()
	for _, t := range dreq.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		var info TopicInfo
		var lookup error
		if !reservedTopic(t.Topic) {
			info, lookup = req.storage.Topic(req.ctx, t.Topic, false)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark = p.Partition, -1
			switch {
			case reservedTopic(t.Topic):
				rp.ErrorCode = kerr.InvalidTopicException.Code
			case lookup != nil:
				rp.ErrorCode = errCode(lookup)
			case p.Partition < 0 || p.Partition >= info.Partitions:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case view.leaderOf(t.Topic, info.Partitions, p.Partition) != c.s.cfg.NodeID:
				rp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				low, err := req.storage.DeleteRecords(req.ctx, t.Topic, p.Partition, p.Offset)
				if err != nil {
					rp.ErrorCode = errCode(err)
				} else {
					rp.LowWatermark = low
				}
			}
			req.setErr(rp.ErrorCode)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
