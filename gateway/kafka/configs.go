package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// configDef is what Kafka defines about one config the gateway reports: its type
// (DescribeConfigs v3+) and, for a topic config, the broker config whose value a topic has
// while it sets none of its own, which DescribeConfigs lists as the entry's synonym.
type configDef struct {
	typ    kmsg.ConfigType
	broker string
}

// configDefs are Kafka's definitions of the configs the Storage and the broker resource report
// (Kafka's LogConfig, KafkaConfig and ServerTopicConfigSynonyms); a name not here is reported
// with type UNKNOWN and no broker synonym.
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
