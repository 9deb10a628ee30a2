package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

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
	resp, err := c.s.cfg.Groups.OffsetFetch(req.ctx, c.identity(req), req.kreq.(*kmsg.OffsetFetchRequest))
	if err == nil {
		req.setErr(resp.ErrorCode)
		for _, g := range resp.Groups {
			req.setErr(g.ErrorCode)
		}
	}
	return resp, err
}
