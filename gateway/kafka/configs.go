package kafka

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configDef is what Kafka defines about one config the gateway reports: its type
// (DescribeConfigs v3+) and, for a topic config, the broker config whose value a topic has
// while it sets none of its own, which DescribeConfigs lists as the entry's synonym.
type configDef struct {
	typ    kmsg.ConfigType
	broker string
}

// configDefs are Kafka's definitions of the configs the Storage and the broker resource report
// (Kafka's LogConfig, KafkaConfig and ServerTopicConfigSynonyms) with a broker synonym; a topic
// config not here has its type from topicConfigs, any other name is reported with type UNKNOWN
// and no broker synonym.
var configDefs = map[string]configDef{
	"cleanup.policy":         {kmsg.ConfigTypeList, "log.cleanup.policy"},
	"compression.type":       {kmsg.ConfigTypeString, "compression.type"},
	"max.message.bytes":      {kmsg.ConfigTypeInt, "message.max.bytes"},
	"message.timestamp.type": {kmsg.ConfigTypeString, "log.message.timestamp.type"},
	"retention.bytes":        {kmsg.ConfigTypeLong, "log.retention.bytes"},
	"retention.ms":           {kmsg.ConfigTypeLong, "log.retention.ms"},

	"auto.create.topics.enable": {typ: kmsg.ConfigTypeBoolean},
	"broker.id":                 {typ: kmsg.ConfigTypeInt},
	"socket.request.max.bytes":  {typ: kmsg.ConfigTypeInt},
}

// configSource is where an entry's value comes from, as Kafka names it: a topic's own setting
// (DYNAMIC_TOPIC_CONFIG), the gateway's default for topics (DEFAULT_CONFIG, the broker config
// behind it at its default), or the gateway's own settings for the broker resource
// (STATIC_BROKER_CONFIG, as Kafka reports what server.properties set).
func configSource(e *ConfigEntry, resource kmsg.ConfigResourceType) kmsg.ConfigSource {
	switch {
	case e.Source != kmsg.ConfigSourceUnknown:
		return e.Source
	case e.Default:
		return kmsg.ConfigSourceDefaultConfig
	case resource == kmsg.ConfigResourceTypeTopic:
		return kmsg.ConfigSourceDynamicTopicConfig
	default:
		return kmsg.ConfigSourceStaticBrokerConfig
	}
}

// configSynonyms are the values an entry stands for, highest precedence first, as Kafka lists
// them (v1+, with IncludeSynonyms): the entry's own when it is set rather than defaulted, then,
// for a topic config, the broker config behind it with the gateway's default value. Sensitive
// values are left out, as in the entry.
func configSynonyms(e *ConfigEntry, resource kmsg.ConfigResourceType, source kmsg.ConfigSource) []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	var out []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
	add := func(name, value string, source kmsg.ConfigSource) {
		s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
		s.Name, s.Source = name, source
		if !e.Sensitive {
			s.Value = kmsg.StringPtr(value)
		}
		out = append(out, s)
	}
	if resource != kmsg.ConfigResourceTypeTopic {
		add(e.Name, e.Value, source)
		return out
	}
	if !e.Default {
		add(e.Name, e.Value, source)
	}
	if broker := configDefs[e.Name].broker; broker != "" {
		switch {
		case e.Default:
			add(broker, e.Value, kmsg.ConfigSourceDefaultConfig)
		case e.DefaultValue != "":
			add(broker, e.DefaultValue, kmsg.ConfigSourceDefaultConfig)
		}
	}
	return out
}

// ownBroker reports whether a broker resource's name is this gateway's: its node id, or empty
// for the cluster, as Kafka takes it.
func (c *conn) ownBroker(name string) bool {
	return name == "" || name == strconv.Itoa(int(c.s.cfg.NodeID))
}

// resourceKey names a config resource of a request.
type resourceKey struct {
	typ  kmsg.ConfigResourceType
	name string
}

// repeatedResources are the resources named more than once among keys, which Kafka refuses
// each time they appear.
func repeatedResources(keys []resourceKey) map[resourceKey]bool {
	seen := make(map[resourceKey]int, len(keys))
	for _, k := range keys {
		seen[k]++
	}
	out := map[resourceKey]bool{}
	for k, n := range seen {
		if n > 1 {
			out[k] = true
		}
	}
	return out
}

// checkAlter is what AlterConfigs and IncrementalAlterConfigs refuse of one resource before its
// configs are looked at, as Kafka refuses it (INVALID_REQUEST): a resource named twice in the
// request, a config named twice, a missing value (nulls, the configs whose value may not be
// null), the default topic resource "", a broker other than this gateway or the cluster (""),
// and resource types other than topics and brokers. The internal __consumer_offsets, kept by
// the gateway, is INVALID_TOPIC_EXCEPTION.
func (c *conn) checkAlter(key resourceKey, repeated bool, names, nulls []string) error {
	sorted := slices.Sorted(slices.Values(names))
	switch {
	case repeated:
		return fmt.Errorf("%w: each resource must appear at most once", kerr.InvalidRequest)
	case len(slices.Compact(sorted)) != len(names):
		return fmt.Errorf("%w: a config is named more than once", kerr.InvalidRequest)
	case len(nulls) > 0:
		return fmt.Errorf("%w: null value not supported for: %s", kerr.InvalidRequest, strings.Join(nulls, ", "))
	}
	switch key.typ {
	case kmsg.ConfigResourceTypeTopic:
		if key.name == "" {
			return fmt.Errorf("%w: default topic resources are not allowed", kerr.InvalidRequest)
		}
		if reservedTopic(key.name) {
			return errReserved(key.name)
		}
	case kmsg.ConfigResourceTypeBroker:
		if !c.ownBroker(key.name) {
			return fmt.Errorf("%w: unexpected broker id, expected %d, but received %s", kerr.InvalidRequest, c.s.cfg.NodeID, key.name)
		}
	default:
		return fmt.Errorf("%w: resource type %s is not served", kerr.InvalidRequest, key.typ)
	}
	return nil
}

// checkOps refuses IncrementalAlterConfigs operations as Kafka does before it reads the
// resource: an unknown operation is INVALID_REQUEST, APPEND or SUBTRACT on a config whose type
// is not a list (or that is not known) INVALID_CONFIG.
func checkOps(ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) error {
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete:
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if configType(op.Name) != kmsg.ConfigTypeList {
				return fmt.Errorf("%w: can't %s to key %s because its type is not LIST", kerr.InvalidConfig, op.Op, op.Name)
			}
		default:
			return fmt.Errorf("%w: unknown operation type %d", kerr.InvalidRequest, op.Op)
		}
	}
	return nil
}

// applyOps applies checked IncrementalAlterConfigs operations to own, a topic's own configs,
// as Kafka applies them: SET sets, DELETE goes back to the default, APPEND adds the
// comma-separated values not yet in the list and SUBTRACT removes them, both starting from the
// config's current value (value, as DescribeConfigs reports it), which is its default when the
// topic has none of its own.
func applyOps(own map[string]*string, value map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) {
	for _, op := range ops {
		switch op.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			own[op.Name] = kmsg.StringPtr(*op.Value)
		case kmsg.IncrementalAlterConfigOpDelete:
			delete(own, op.Name)
		default:
			cur := value[op.Name]
			if v, ok := own[op.Name]; ok {
				cur = *v
			}
			var list []string
			for _, s := range strings.Split(cur, ",") {
				if s != "" {
					list = append(list, s)
				}
			}
			for _, s := range strings.Split(*op.Value, ",") {
				switch {
				case s == "":
				case op.Op == kmsg.IncrementalAlterConfigOpSubtract:
					if i := slices.Index(list, s); i >= 0 {
						list = slices.Delete(list, i, i+1)
					}
				case !slices.Contains(list, s):
					list = append(list, s)
				}
			}
			own[op.Name] = kmsg.StringPtr(strings.Join(list, ","))
		}
	}
}

// configType is Kafka's type of a config, UNKNOWN for a name Kafka does not define.
func configType(name string) kmsg.ConfigType {
	if d, ok := configDefs[name]; ok {
		return d.typ
	}
	if d, ok := topicConfigs[name]; ok {
		return d.typ
	}
	return brokerConfigs[name].typ
}
