package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteTopics: v0-6
//
// Behavior:
// * Deletes the Iggy topic, with its messages, at once.
// * With a Fleet, a gateway that is not the controller answers NOT_CONTROLLER for every topic.
//
// Not implemented:
// * Deletion by topic ID (v6): a topic named only by ID is UNKNOWN_TOPIC_ID.
func init() { regKey(deleteTopicsKey, 0, 6) }

func (c *conn) handleDeleteTopics(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DeleteTopicsRequest)
	resp := dreq.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if dreq.Version >= 6 {
		for _, t := range dreq.Topics {
			targets = append(targets, target{t.Topic, t.TopicID})
		}
	} else {
		for _, name := range dreq.TopicNames {
			targets = append(targets, target{name: &name})
		}
	}
	for _, t := range targets {
		st := kmsg.NewDeleteTopicsResponseTopic()
		st.Topic = t.name
		st.TopicID = t.id
		if c.s.notController() {
			st.ErrorCode = kerr.NotController.Code
		} else if t.name == nil {
			st.ErrorCode = kerr.UnknownTopicID.Code
		} else if reservedTopic(*t.name) {
			st.ErrorCode = kerr.InvalidTopicException.Code
			st.ErrorMessage = errMessage(errReserved(*t.name))
		} else if err := req.storage.DeleteTopic(req.ctx, *t.name); err != nil {
			st.ErrorCode = errCode(err)
			st.ErrorMessage = errMessage(err)
		}
		req.setErr(st.ErrorCode)
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
