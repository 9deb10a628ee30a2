package kafka

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicConfigDef is Kafka's definition of one topic config: its type and its default (Kafka
// 4's LogConfig and ServerLogConfigs), and whether the gateway applies it over Iggy.
type topicConfigDef struct {
	typ     kmsg.ConfigType
	def     string
	applied bool
}

// topicConfigs are every topic config Kafka defines. The gateway stores each one a topic sets
// (the config log of package bridge) and describes it back; applied marks those that act on
// the topic. Any other name is INVALID_CONFIG, as Kafka answers an unknown topic config.
var topicConfigs = map[string]topicConfigDef{
	"cleanup.policy":                          {kmsg.ConfigTypeList, "delete", true},
	"compression.gzip.level":                  {kmsg.ConfigTypeInt, "-1", false},
	"compression.lz4.level":                   {kmsg.ConfigTypeInt, "9", false},
	"compression.type":                        {kmsg.ConfigTypeString, "producer", true},
	"compression.zstd.level":                  {kmsg.ConfigTypeInt, "3", false},
	"delete.retention.ms":                     {kmsg.ConfigTypeLong, "86400000", false},
	"file.delete.delay.ms":                    {kmsg.ConfigTypeLong, "60000", false},
	"flush.messages":                          {kmsg.ConfigTypeLong, "9223372036854775807", false},
	"flush.ms":                                {kmsg.ConfigTypeLong, "9223372036854775807", false},
	"follower.replication.throttled.replicas": {kmsg.ConfigTypeList, "", false},
	"index.interval.bytes":                    {kmsg.ConfigTypeInt, "4096", false},
	"leader.replication.throttled.replicas":   {kmsg.ConfigTypeList, "", false},
	"local.retention.bytes":                   {kmsg.ConfigTypeLong, "-2", false},
	"local.retention.ms":                      {kmsg.ConfigTypeLong, "-2", false},
	"max.compaction.lag.ms":                   {kmsg.ConfigTypeLong, "9223372036854775807", false},
	"max.message.bytes":                       {kmsg.ConfigTypeInt, "1048588", true},
	"message.downconversion.enable":           {kmsg.ConfigTypeBoolean, "true", false},
	"message.timestamp.after.max.ms":          {kmsg.ConfigTypeLong, "3600000", false},
	"message.timestamp.before.max.ms":         {kmsg.ConfigTypeLong, "9223372036854775807", false},
	"message.timestamp.difference.max.ms":     {kmsg.ConfigTypeLong, "9223372036854775807", false},
	"message.timestamp.type":                  {kmsg.ConfigTypeString, "CreateTime", true},
	"min.cleanable.dirty.ratio":               {kmsg.ConfigTypeDouble, "0.5", false},
	"min.compaction.lag.ms":                   {kmsg.ConfigTypeLong, "0", false},
	"min.insync.replicas":                     {kmsg.ConfigTypeInt, "1", false},
	"preallocate":                             {kmsg.ConfigTypeBoolean, "false", false},
	"remote.log.copy.disable":                 {kmsg.ConfigTypeBoolean, "false", false},
	"remote.log.delete.on.disable":            {kmsg.ConfigTypeBoolean, "false", false},
	"remote.storage.enable":                   {kmsg.ConfigTypeBoolean, "false", false},
	"retention.bytes":                         {kmsg.ConfigTypeLong, "-1", true},
	"retention.ms":                            {kmsg.ConfigTypeLong, "604800000", true},
	"segment.bytes":                           {kmsg.ConfigTypeInt, "1073741824", false},
	"segment.index.bytes":                     {kmsg.ConfigTypeInt, "10485760", false},
	"segment.jitter.ms":                       {kmsg.ConfigTypeLong, "0", false},
	"segment.ms":                              {kmsg.ConfigTypeLong, "604800000", false},
	"unclean.leader.election.enable":          {kmsg.ConfigTypeBoolean, "false", false},
}

// CheckTopicConfig checks that name is a Kafka topic config and value parses as its type, as
// Kafka checks before anything changes; kerr.InvalidConfig otherwise. The Storage checks the
// values of the configs it applies further.
func CheckTopicConfig(name, value string) error {
	d, ok := topicConfigs[name]
	if !ok {
		return fmt.Errorf("%w: unknown topic config %q", kerr.InvalidConfig, name)
	}
	err := checkType(d.typ, value)
	if err != nil {
		return fmt.Errorf("%w: %s=%q is not a valid %s", kerr.InvalidConfig, name, value, d.typ)
	}
	return nil
}

// StoredTopicConfigs are the topic configs the gateway keeps and describes without applying
// them (Iggy has nothing they would act on), in name order, with Kafka's default of each.
func StoredTopicConfigs() [][2]string {
	var out [][2]string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range topicConfigs {
			if !yield(n) {
				return
			}
		}
	}) {
		if d := topicConfigs[name]; !d.applied {
			out = append(out, [2]string{name, d.def})
		}
	}
	return out
}

// topicConfigDoc is the Documentation DescribeConfigs (v3+) gives a topic config: whether it
// takes effect over Iggy.
func topicConfigDoc(name string) *string {
	d, ok := topicConfigs[name]
	switch {
	case !ok:
		return nil
	case d.applied:
		return kmsg.StringPtr("Applied by the gateway over Iggy (see docs/compatibility.md).")
	}
	return kmsg.StringPtr("Stored and described back; it has no effect over Iggy (see docs/compatibility.md).")
}
