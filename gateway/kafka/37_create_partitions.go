package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreatePartitions: v0-3
//
// Behavior:
// * Grows a topic to Count partitions (the new total); fewer than it has is INVALID_PARTITIONS.
// * Replica assignments are accepted and ignored, as replication is Iggy's business.
// * ValidateOnly checks without changing. A topic named twice is INVALID_REQUEST.
// * With a Fleet, a gateway that is not the controller answers NOT_CONTROLLER for every topic.
func init() { regKey(createPartitionsKey, 0, 3) }

func (c *conn) handleCreatePartitions(req *request) (kmsg.Response, error) {
	preq := req.kreq.(*kmsg.CreatePartitionsRequest)
	resp := preq.ResponseKind().(*kmsg.CreatePartitionsResponse)
	count := make(map[string]int, len(preq.Topics))
	for _, t := range preq.Topics {
		count[t.Topic]++
	}
	for _, t := range preq.Topics {
		st := kmsg.NewCreatePartitionsResponseTopic()
		st.Topic = t.Topic
		switch {
		case c.s.notController():
			st.ErrorCode = kerr.NotController.Code
		case reservedTopic(t.Topic):
			st.ErrorCode = kerr.InvalidTopicException.Code
			st.ErrorMessage = errMessage(errReserved(t.Topic))
		case count[t.Topic] > 1:
			st.ErrorCode = kerr.InvalidRequest.Code
		case t.Count <= 0:
			st.ErrorCode = kerr.InvalidPartitions.Code
		default:
			if err := req.storage.CreatePartitions(req.ctx, t.Topic, t.Count, preq.ValidateOnly); err != nil {
				st.ErrorCode = errCode(err)
				st.ErrorMessage = errMessage(err)
			}
		}
		req.setErr(st.ErrorCode)
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
