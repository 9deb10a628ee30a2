package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ElectLeaders: v0-2
//
// Behavior:
//   - A partition has one replica, the leader Metadata names, which is also its preferred one,
//     and Iggy keeps its data: no election is ever needed. Each partition named answers
//     ELECTION_NOT_NEEDED, for a preferred and an unclean election alike; a partition of an
//     unknown topic, or beyond its topic's count, UNKNOWN_TOPIC_OR_PARTITION; a partition of a
//     topic whose store cannot be reached PREFERRED_LEADER_NOT_AVAILABLE (preferred) or
//     ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean). A partition named twice is answered once.
//   - Null topics, every partition, answers no partition: Kafka leaves out those that needed no
//     election.
//   - Any gateway answers, controller or not: nothing changes.
//   - An election type other than 0 (preferred) and 1 (unclean) is INVALID_REQUEST, at the top
//     level (v1+) and for each partition.
func init() { regKey(electLeadersKey, 0, 2) }

func (c *conn) handleElectLeaders(req *request) (kmsg.Response, error) {
	ereq := req.kreq.(*kmsg.ElectLeadersRequest)
	resp := ereq.ResponseKind().(*kmsg.ElectLeadersResponse)
	code := c.clusterCode(req, kmsg.ACLOperationAlter)
	if code != 0 && ereq.Version >= 1 {
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	badType := ereq.ElectionType != 0 && ereq.ElectionType != 1
	if badType {
		resp.ErrorCode = kerr.InvalidRequest.Code
		req.setErr(resp.ErrorCode)
	}
	for _, rt := range mergeTopicPartitions(ereq.Topics) {
		st := kmsg.NewElectLeadersResponseTopic()
		st.Topic = rt.topic
		info, err := c.requestTopic(req, rt.topic)
		for _, p := range rt.partitions {
			sp := kmsg.NewElectLeadersResponseTopicPartition()
			sp.Partition = p
			switch {
			case code != 0: // v0 has no top-level error
				sp.ErrorCode = code
			case badType:
				sp.ErrorCode = kerr.InvalidRequest.Code
			case err != nil:
				sp.ErrorCode = errCode(err)
			case p < 0 || p >= info.Partitions:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case info.Offline && ereq.ElectionType == 0:
				sp.ErrorCode = kerr.PreferredLeaderNotAvailable.Code
			case info.Offline:
				sp.ErrorCode = kerr.EligibleLeadersNotAvailable.Code
			default:
				sp.ErrorCode = kerr.ElectionNotNeeded.Code
				msg := "the partition's only replica is its leader, already the preferred one"
				sp.ErrorMessage = &msg
			}
			req.setErr(sp.ErrorCode)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// topicPartitions is one topic of a request with its partitions, each once.
type topicPartitions struct {
	topic      string
	partitions []int32
}

// mergeTopicPartitions merges the topics of an ElectLeaders request, a topic or a partition
// named twice once, in the order first named.
func mergeTopicPartitions(topics []kmsg.ElectLeadersRequestTopic) []topicPartitions {
	var out []topicPartitions
	at := map[string]int{}
	seen := map[string]map[int32]bool{}
	for _, t := range topics {
		i, ok := at[t.Topic]
		if !ok {
			i = len(out)
			at[t.Topic] = i
			out = append(out, topicPartitions{topic: t.Topic})
			seen[t.Topic] = map[int32]bool{}
		}
		for _, p := range t.Partitions {
			if !seen[t.Topic][p] {
				seen[t.Topic][p] = true
				out[i].partitions = append(out[i].partitions, p)
			}
		}
	}
	return out
}

// requestTopic is the topic an admin request about partitions names, as Metadata shows it:
// __consumer_offsets, or the Storage's topic (kerr.UnknownTopicOrPartition when missing).
func (c *conn) requestTopic(req *request, name string) (TopicInfo, error) {
	if reservedTopic(name) {
		return consumerOffsetsInfo(), nil
	}
	return req.storage.Topic(req.ctx, name, false)
}
