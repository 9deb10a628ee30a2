package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeProducers: v0
//
// Behavior:
//   - Each partition's idempotent and transactional producers, from what Iggy holds
//     (Storage.Producers): producer id, epoch, the last sequence and timestamp of its newest
//     batch, and the first offset of its open transaction (-1 none). What `kafka-transactions
//     describe-producers` prints and `find-hanging` looks for.
//   - Any gateway answers for any partition, since every one reads the same Iggy partition: no
//     NOT_LEADER_OR_FOLLOWER, so `--broker-id` of any gateway gets the same answer.
//   - A topic the connection's identity cannot see, or a partition past the topic's count, is
//     UNKNOWN_TOPIC_OR_PARTITION (Iggy's permission to read the topic decides, as for Fetch);
//     the internal __consumer_offsets has no producers.
//
// Not implemented:
//   - The coordinator epoch is not kept: every producer answers -1.
func init() { regKey(describeProducersKey, 0, 0) }

func (c *conn) handleDescribeProducers(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeProducersRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range dreq.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		var info TopicInfo
		var lookup error
		if reservedTopic(t.Topic) {
			info = consumerOffsetsInfo()
		} else {
			info, lookup = req.storage.Topic(req.ctx, t.Topic, false)
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = p
			switch {
			case lookup != nil:
				rp.ErrorCode = errCode(lookup)
			case p < 0 || p >= info.Partitions:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case reservedTopic(t.Topic):
			default:
				states, err := req.storage.Producers(req.ctx, t.Topic, p)
				if err != nil {
					rp.ErrorCode = errCode(err)
					break
				}
				for _, s := range states {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch = s.ProducerID, int32(s.Epoch)
					ap.LastSequence, ap.LastTimestamp = s.LastSequence, s.LastTimestamp
					ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = -1, s.TxnStartOffset
					rp.ActiveProducers = append(rp.ActiveProducers, ap)
				}
			}
			req.setErr(rp.ErrorCode)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}
