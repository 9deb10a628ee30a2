package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// OffsetFetch: v0-9
//
// Behavior:
//   - Served by Config.Groups: one group (v0-7) or several (v8+, each answered by the gateway
//     owning it here, or with its own error code). Null topics (v2+) return every committed
//     offset of the group. A partition without a committed offset answers -1, or the offset an
//     Iggy consumer group of the same name stored, when the coordinator log never held one.
//   - v5+ returns the committed leader epoch; metadata always.
//   - require_stable (v7+) is accepted and needs no wait: without transactions no committed
//     offset is ever pending.
//   - v9 member id and epoch: checked against a KIP-848 consumer group's member as Kafka does
//     (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH for another epoch, as the group's error code);
//     without them (null, -1) the fetch is answered; a classic group ignores them.
//
// Not implemented:
//   - v10 (topics by id only): clients use v9, which names topics, when v10 is not listed, as
//     franz-go and librdkafka do.
func init() { regGroupKey(offsetFetchKey, 0, 9) }

func (c *conn) handleOffsetFetch(req *request) (kmsg.Response, error) {
	greq := req.kreq.(*kmsg.OffsetFetchRequest)
	if code := c.groupCode(req, authz.Wildcard, kmsg.ACLOperationDescribe); code != 0 {
		resp := greq.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = code
		for _, t := range greq.Topics {
			st := kmsg.NewOffsetFetchResponseTopic()
			st.Topic = t.Topic
			for _, p := range t.Partitions {
				sp := kmsg.NewOffsetFetchResponseTopicPartition()
				sp.Partition, sp.Offset, sp.ErrorCode = p, -1, code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		for _, g := range greq.Groups {
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group, sg.ErrorCode = g.Group, code
			resp.Groups = append(resp.Groups, sg)
		}
		req.setErr(code)
		return resp, nil
	}
	resp, err := c.s.cfg.Groups.OffsetFetch(req.ctx, c.identity(req), greq)
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
