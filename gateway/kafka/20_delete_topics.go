package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteTopics: v0-6
//
// Behavior:
//   - Deletes the Iggy topic, with its messages, at once.
//   - v6 names topics by name or by id (found among every topic; UNKNOWN_TOPIC_ID when none has
//     it), and the answer carries both.
//   - With a Fleet, a gateway that is not the controller answers NOT_CONTROLLER for every topic.
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
		if !c.s.notController() && dreq.Version >= 6 {
			if t.name == nil {
				if info, err := c.topicByID(req, t.id); err == nil {
					st.Topic = kmsg.StringPtr(info.Name)
				}
			} else if info, err := req.storage.Topic(req.ctx, *t.name, false); err == nil {
				st.TopicID = info.ID
			}
		}
		if c.s.notController() {
			st.ErrorCode = kerr.NotController.Code
		} else if st.Topic == nil {
			st.ErrorCode = kerr.UnknownTopicID.Code
		} else if reservedTopic(*st.Topic) {
			st.ErrorCode = kerr.InvalidTopicException.Code
			st.ErrorMessage = errMessage(errReserved(*st.Topic))
		} else if err := req.storage.DeleteTopic(req.ctx, *st.Topic); err != nil {
			st.ErrorCode = errCode(err)
			st.ErrorMessage = errMessage(err)
		}
		req.setErr(st.ErrorCode)
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
