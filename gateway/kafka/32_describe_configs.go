package kafka

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs: v0-4
//
// Behavior:
//   - Topic resources list the Storage's configuration of the topic; ConfigNames filters them.
//     The internal __consumer_offsets lists the read-only configs Kafka gives it (internal.go).
//   - Broker resources (this node's id, or empty) list the read-only values the gateway
//     enforces (its flags, STATIC_BROKER_CONFIG) and the dynamic broker configs: for the node
//     each with its value by Kafka's precedence (DYNAMIC_BROKER_CONFIG, then
//     DYNAMIC_DEFAULT_BROKER_CONFIG, then DEFAULT_CONFIG), for "" those set cluster-wide.
//     Needs DESCRIBE_CONFIGS on the cluster.
//   - Every entry carries its Kafka config type (v3+, configs.go) and its source: a topic's own
//     setting is DYNAMIC_TOPIC_CONFIG, a topic config left at the gateway's default
//     DEFAULT_CONFIG, a broker value STATIC_BROKER_CONFIG; v0's is_default is source ==
//     DEFAULT_CONFIG, which is how Kafka's client reads it back.
//   - With IncludeSynonyms (v1+) an entry lists what it stands for, highest precedence first,
//     as Kafka does: a topic's own setting, then the broker config behind the topic config
//     (message.max.bytes behind max.message.bytes, ...) at the gateway's default; a broker
//     value lists itself.
//   - A topic lists every topic config Kafka defines: those it set (DYNAMIC_TOPIC_CONFIG) and
//     the others at their default (DEFAULT_CONFIG). With IncludeDocumentation (v3+) a topic
//     config's documentation says whether the gateway applies it over Iggy or only keeps it.
//   - Other resource types are INVALID_REQUEST.
//
// Not implemented:
// * Documentation of broker configs is empty.
func init() { regKey(describeConfigsKey, 0, 4) }

func (c *conn) handleDescribeConfigs(req *request) (kmsg.Response, error) {
	dreq := req.kreq.(*kmsg.DescribeConfigsRequest)
	resp := dreq.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range dreq.Resources {
		sr := kmsg.NewDescribeConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = r.ResourceType, r.ResourceName
		var entries []ConfigEntry
		var err error
		switch kmsg.ConfigResourceType(r.ResourceType) {
		case kmsg.ConfigResourceTypeTopic:
			if reservedTopic(r.ResourceName) {
				entries = consumerOffsetsConfigs()
				break
			}
			entries, err = req.storage.TopicConfigs(req.ctx, r.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			if !c.ownBroker(r.ResourceName) {
				sr.ErrorCode = kerr.InvalidRequest.Code
			} else if code := c.clusterCode(req, kmsg.ACLOperationDescribeConfigs); code != 0 {
				sr.ErrorCode = code
			} else {
				var scopes map[string]map[string]string
				if scopes, err = c.s.brokerConfigsOf().BrokerConfigs(req.ctx); err == nil {
					entries = append(c.brokerConfigs(), dynamicBrokerEntries(scopes, r.ResourceName)...)
				}
			}
		default:
			sr.ErrorCode = kerr.InvalidRequest.Code
		}
		if err != nil {
			sr.ErrorCode = errCode(err)
			sr.ErrorMessage = errMessage(err)
		}
		want := make(map[string]bool, len(r.ConfigNames))
		for _, n := range r.ConfigNames {
			want[n] = true
		}
		for _, e := range entries {
			if r.ConfigNames != nil && !want[e.Name] {
				continue
			}
			sc := kmsg.NewDescribeConfigsResponseResourceConfig()
			sc.Name = e.Name
			value := e.Value
			sc.Value = &value
			if e.Sensitive {
				sc.Value = nil
			}
			resource := kmsg.ConfigResourceType(r.ResourceType)
			sc.Source = configSource(&e, resource)
			sc.ReadOnly, sc.IsDefault, sc.IsSensitive = e.ReadOnly, sc.Source == kmsg.ConfigSourceDefaultConfig, e.Sensitive
			sc.ConfigType = configType(e.Name)
			if dreq.IncludeDocumentation && resource == kmsg.ConfigResourceTypeTopic {
				sc.Documentation = topicConfigDoc(e.Name)
			}
			if dreq.IncludeSynonyms {
				sc.ConfigSynonyms = configSynonyms(&e, resource, sc.Source)
			}
			sr.Configs = append(sr.Configs, sc)
		}
		req.setErr(sr.ErrorCode)
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

func (c *conn) brokerConfigs() []ConfigEntry {
	return []ConfigEntry{
		{Name: "auto.create.topics.enable", Value: strconv.FormatBool(c.s.cfg.AutoCreateTopics), ReadOnly: true},
		{Name: "broker.id", Value: strconv.Itoa(int(c.s.cfg.NodeID)), ReadOnly: true},
		{Name: "socket.request.max.bytes", Value: strconv.Itoa(int(c.s.cfg.MaxRequestBytes)), ReadOnly: true},
	}
}
