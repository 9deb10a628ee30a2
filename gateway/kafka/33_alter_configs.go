package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterConfigs: v0-2
//
// Behavior:
//   - A topic resource's configs replace all of the topic's own, as in Kafka: a config left out
//     goes back to its default. Which configs a topic takes, and what they do, is the Storage's
//     rule (the bridge's: docs/design.md, "Topic configs"); a config it does not take, or a bad
//     value, is INVALID_CONFIG, and then nothing changes.
//   - The change is kept in Iggy: every gateway and every restart sees it, and DescribeConfigs
//     reads it back, source DYNAMIC_TOPIC_CONFIG.
//   - ValidateOnly checks the values and the topic, and changes nothing.
//   - Broker resources (this node's id, or "" for the cluster): the resource's dynamic broker
//     configs (brokerconfigs.go) are replaced by those named, kept in Iggy for every gateway
//     and described back, without effect. The gateway's own settings (its flags, read-only) are
//     INVALID_REQUEST, as Kafka refuses a config it cannot update dynamically; a name Kafka does
//     not define, or a value not of its type, INVALID_CONFIG. Needs ALTER_CONFIGS on the
//     cluster.
//   - Refused as in Kafka (INVALID_REQUEST): a resource named twice (each time), a config named
//     twice, a null value, the default topic resource "", another broker's id, other resource
//     types. A missing topic is UNKNOWN_TOPIC_OR_PARTITION, the internal __consumer_offsets
//     INVALID_TOPIC_EXCEPTION, and without the Iggy permission to manage the topic
//     TOPIC_AUTHORIZATION_FAILED.
func init() { regKey(alterConfigsKey, 0, 2) }

func (c *conn) handleAlterConfigs(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.AlterConfigsRequest)
	resp := areq.ResponseKind().(*kmsg.AlterConfigsResponse)
	keys := make([]resourceKey, len(areq.Resources))
	for i, r := range areq.Resources {
		keys[i] = resourceKey{r.ResourceType, r.ResourceName}
	}
	repeated := repeatedResources(keys)
	for i := range areq.Resources {
		err := c.alterConfigs(req, &areq.Resources[i], repeated[keys[i]], areq.ValidateOnly)
		sr := kmsg.NewAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		sr.ErrorCode, sr.ErrorMessage = errCode(err), errMessage(err)
		req.setErr(sr.ErrorCode)
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

func (c *conn) alterConfigs(req *request, r *kmsg.AlterConfigsRequestResource, repeated, validateOnly bool) error {
	key := resourceKey{r.ResourceType, r.ResourceName}
	names := make([]string, 0, len(r.Configs))
	var nulls []string
	configs := make(map[string]*string, len(r.Configs))
	for _, rc := range r.Configs {
		names = append(names, rc.Name)
		if rc.Value == nil {
			nulls = append(nulls, rc.Name)
		}
		configs[rc.Name] = rc.Value
	}
	if err := c.checkAlter(key, repeated, names, nulls); err != nil {
		return err
	}
	if key.typ == kmsg.ConfigResourceTypeBroker {
		if code := c.clusterCode(req, kmsg.ACLOperationAlterConfigs); code != 0 {
			return codeErr(code, "altering broker configs needs ALTER_CONFIGS on the cluster (Iggy's manage-servers)")
		}
		set := make(map[string]string, len(configs))
		for n, v := range configs {
			set[n] = *v
		}
		return c.alterBrokerScope(req, key.name, set, validateOnly)
	}
	return req.storage.AlterTopicConfigs(req.ctx, key.name, configs, validateOnly)
}
