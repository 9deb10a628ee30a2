package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopics: v0-7
//
// Behavior:
//
//   - NumPartitions -1 takes the Storage's default; a replica assignment gives the partition count.
//
//   - Replication factor: Iggy keeps the data (one copy on the embedded store, replicated by an
//     Iggy cluster) and gateways keep none, so there is nothing for a Kafka replica to be; every
//     topic has one replica, its leader (Metadata), and answers a replication factor of 1.
//     What Kafka refuses is refused all the same: -1 (the default) and 1 up to the number of
//     gateways Metadata lists are accepted, a larger factor is INVALID_REPLICATION_FACTOR (as
//     Kafka answers a factor above its live brokers), 0 or below -1 too, with validate_only as
//     without. A replica assignment comes with both NumPartitions and ReplicationFactor -1.
//
//   - Configs are handed to the Storage, which refuses the ones it cannot honour.
//
//   - ValidateOnly checks without creating. A topic named twice in one request is INVALID_REQUEST.
//
//   - With a Fleet, a gateway that is not the controller answers NOT_CONTROLLER for every topic;
//     clients then refresh Metadata and ask the controller.
//
//   - The answer names the created topic's id (v7) and partition count, read back from the
//     Storage; a validate-only answer has no id.
//
//   - From v5 a created topic's answer lists its configs as DescribeConfigs does (name, value,
//     read-only, source, sensitive), read back from the Storage; Kafka's Java admin client reads
//     that list for every topic created without an error, so it is never null then: a
//     validate-only answer, which has no topic to read, lists none.
func init() { regKey(createTopicsKey, 0, 7) }

func (c *conn) handleCreateTopics(req *request) (kmsg.Response, error) {
	creq := req.kreq.(*kmsg.CreateTopicsRequest)
	resp := creq.ResponseKind().(*kmsg.CreateTopicsResponse)
	live := len(c.s.brokerView().listed)
	count := make(map[string]int, len(creq.Topics))
	for _, t := range creq.Topics {
		count[t.Topic]++
	}
	for _, t := range creq.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = t.Topic
		st.NumPartitions = t.NumPartitions
		st.ReplicationFactor = 1
		partitions := t.NumPartitions
		if len(t.ReplicaAssignment) > 0 {
			partitions = int32(len(t.ReplicaAssignment))
		}
		switch {
		case c.s.notController():
			st.ErrorCode = kerr.NotController.Code
		case reservedTopic(t.Topic):
			st.ErrorCode = kerr.InvalidTopicException.Code
			st.ErrorMessage = errMessage(errReserved(t.Topic))
		case count[t.Topic] > 1:
			st.ErrorCode = kerr.InvalidRequest.Code
		case len(t.ReplicaAssignment) > 0 && (t.NumPartitions != -1 || t.ReplicationFactor != -1):
			st.ErrorCode = kerr.InvalidRequest.Code
		case partitions == 0 || partitions < -1:
			st.ErrorCode = kerr.InvalidPartitions.Code
		case t.ReplicationFactor == 0 || t.ReplicationFactor < -1 || int(t.ReplicationFactor) > live:
			st.ErrorCode = kerr.InvalidReplicationFactor.Code
			st.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("replication factor %d: %d gateways are live", t.ReplicationFactor, live))
		default:
			configs := make(map[string]*string, len(t.Configs))
			for _, cfg := range t.Configs {
				configs[cfg.Name] = cfg.Value
			}
			if err := req.storage.CreateTopic(req.ctx, t.Topic, partitions, configs, creq.ValidateOnly); err != nil {
				st.ErrorCode = errCode(err)
				st.ErrorMessage = errMessage(err)
			} else {
				st.Configs = []kmsg.CreateTopicsResponseTopicConfig{}
				if !creq.ValidateOnly {
					if info, err := req.storage.Topic(req.ctx, t.Topic, false); err == nil {
						st.NumPartitions, st.TopicID = info.Partitions, info.ID
					}
					st.Configs, st.ConfigErrorCode = createdConfigs(req, t.Topic)
				}
			}
		}
		req.setErr(st.ErrorCode)
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

// createdConfigs lists a created topic's configs for its CreateTopics answer (v5+), or answers
// the error of reading them as the topic's ConfigErrorCode with an empty list, as Kafka
// does when the configs cannot be described.
func createdConfigs(req *request, topic string) ([]kmsg.CreateTopicsResponseTopicConfig, int16) {
	out := []kmsg.CreateTopicsResponseTopicConfig{}
	entries, err := req.storage.TopicConfigs(req.ctx, topic)
	if err != nil {
		return out, errCode(err)
	}
	for _, e := range entries {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name = e.Name
		if !e.Sensitive {
			c.Value = kmsg.StringPtr(e.Value)
		}
		c.ReadOnly, c.IsSensitive = e.ReadOnly, e.Sensitive
		c.Source = int8(configSource(&e, kmsg.ConfigResourceTypeTopic))
		out = append(out, c)
	}
	return out, 0
}
