package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// IncrementalAlterConfigs: v0-1
//
// Behavior:
//   - A topic resource's operations change the topic's own configs, as read from the Storage
//     (what DescribeConfigs reports with a source other than DEFAULT_CONFIG): SET sets a
//     value, DELETE takes the config back to its default, APPEND and SUBTRACT add and remove
//     comma-separated values of a list config (cleanup.policy), starting from its current
//     value, as Kafka does. The result replaces the topic's own configs as AlterConfigs does,
//     under the same rule: a config the Storage does not take, or a bad value, is
//     INVALID_CONFIG and nothing changes. DELETE of a config the topic does not set changes
//     nothing.
//   - The change is kept in Iggy: every gateway and every restart sees it, and DescribeConfigs
//     reads it back, source DYNAMIC_TOPIC_CONFIG.
//   - ValidateOnly checks the operations and the result, and changes nothing.
//   - Broker resources (this node's id, or "" for the cluster): the operations apply to the
//     resource's dynamic broker configs (brokerconfigs.go), kept in Iggy for every gateway and
//     described back, without effect. The gateway's own settings (its flags, read-only) are
//     INVALID_REQUEST when set, as Kafka refuses a config it cannot update dynamically; a name
//     Kafka does not define INVALID_CONFIG; DELETEs of configs not set change nothing and
//     succeed. Needs ALTER_CONFIGS on the cluster.
//   - Refused as in Kafka: an unknown operation, a resource named twice (each time), a config
//     named twice, a null value for anything but DELETE, the default topic resource "",
//     another broker's id and other resource types (BROKER_LOGGER, CLIENT_METRICS, GROUP) are
//     INVALID_REQUEST; APPEND or SUBTRACT on a config that is not a list INVALID_CONFIG. A
//     missing topic is UNKNOWN_TOPIC_OR_PARTITION, the internal __consumer_offsets
//     INVALID_TOPIC_EXCEPTION, and without the Iggy permission to manage the topic
//     TOPIC_AUTHORIZATION_FAILED.
//
// Not implemented:
//   - Two gateways changing one topic at the same moment: each reads the topic's configs and
//     writes them back changed, so the later write wins whole (Kafka serializes them on its
//     controller).
func init() { regKey(incAlterConfigsKey, 0, 1) }

func (c *conn) handleIncrementalAlterConfigs(req *request) (kmsg.Response, error) {
	ireq := req.kreq.(*kmsg.IncrementalAlterConfigsRequest)
	resp := ireq.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	keys := make([]resourceKey, len(ireq.Resources))
	for i, r := range ireq.Resources {
		keys[i] = resourceKey{r.ResourceType, r.ResourceName}
	}
	repeated := repeatedResources(keys)
	for i := range ireq.Resources {
		err := c.incrementalAlter(req, &ireq.Resources[i], repeated[keys[i]], ireq.ValidateOnly)
		sr := kmsg.NewIncrementalAlterConfigsResponseResource()
		sr.ResourceType, sr.ResourceName = keys[i].typ, keys[i].name
		sr.ErrorCode, sr.ErrorMessage = errCode(err), errMessage(err)
		req.setErr(sr.ErrorCode)
		resp.Resources = append(resp.Resources, sr)
	}
	return resp, nil
}

func (c *conn) incrementalAlter(req *request, r *kmsg.IncrementalAlterConfigsRequestResource, repeated, validateOnly bool) error {
	key := resourceKey{r.ResourceType, r.ResourceName}
	names := make([]string, 0, len(r.Configs))
	var nulls []string
	for _, rc := range r.Configs {
		names = append(names, rc.Name)
		if rc.Op != kmsg.IncrementalAlterConfigOpDelete && rc.Value == nil {
			nulls = append(nulls, rc.Name)
		}
	}
	if err := c.checkAlter(key, repeated, names, nulls); err != nil {
		return err
	}
	if err := checkOps(r.Configs); err != nil {
		return err
	}
	if key.typ == kmsg.ConfigResourceTypeBroker {
		if code := c.clusterCode(req, kmsg.ACLOperationAlterConfigs); code != 0 {
			return codeErr(code, "altering broker configs needs ALTER_CONFIGS on the cluster (Iggy's manage-servers)")
		}
		return c.incrementalAlterBroker(req, key.name, r.Configs, validateOnly)
	}
	entries, err := req.storage.TopicConfigs(req.ctx, key.name)
	if err != nil || len(r.Configs) == 0 {
		return err
	}
	own := make(map[string]*string, len(entries))
	value := make(map[string]string, len(entries))
	for _, e := range entries {
		value[e.Name] = e.Value
		if !e.Default {
			own[e.Name] = kmsg.StringPtr(e.Value)
		}
	}
	applyOps(own, value, r.Configs)
	return req.storage.AlterTopicConfigs(req.ctx, key.name, own, validateOnly)
}
