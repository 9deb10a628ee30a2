package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka clients know __consumer_offsets as the internal topic behind group coordination, and
// some of them (regex consumers, admin tools) expect Metadata to list it, marked internal. Here
// group state lives in the coordinator log (16 partitions in "<stream>.meta"), so the topic is
// advertised with that shape and reserved: it is never created, deleted, grown or written
// through Kafka, and a fetch from it finds no such Iggy topic.
const (
	consumerOffsetsTopic      = "__consumer_offsets"
	consumerOffsetsPartitions = 16
)

func reservedTopic(name string) bool { return name == consumerOffsetsTopic }

func errReserved(name string) error {
	return fmt.Errorf("%w: %s is an internal topic kept by the gateway", kerr.InvalidTopicException, name)
}

// consumerOffsetsID is the topic id Metadata gives __consumer_offsets. No Iggy topic stands
// behind it that could give one, and the topic is never created or deleted, so the id is a
// constant (a version-8 UUID, the first bytes of SHA-256("iggy-kafka __consumer_offsets")).
var consumerOffsetsID = [16]byte{0xe5, 0x8a, 0x68, 0x89, 0xdc, 0x35, 0x8b, 0xb4, 0x8e, 0x7f, 0xd8, 0x6b, 0xba, 0x6e, 0xfc, 0x97}

func consumerOffsetsInfo() TopicInfo {
	return TopicInfo{Name: consumerOffsetsTopic, ID: consumerOffsetsID, Partitions: consumerOffsetsPartitions, Internal: true}
}

// consumerOffsetsConfigs are what DescribeConfigs reports of __consumer_offsets: the configs
// Kafka creates it with that the gateway knows (cleanup.policy=compact,
// compression.type=producer), its own and read-only, as the gateway keeps the topic. Operator
// tools describe it with every other topic (kafka-topics --describe, kafka-configs --describe
// --entity-type topics), and fail whole on an error.
func consumerOffsetsConfigs() []ConfigEntry {
	return []ConfigEntry{
		{Name: "cleanup.policy", Value: "compact", ReadOnly: true, DefaultValue: "delete"},
		{Name: "compression.type", Value: "producer", ReadOnly: true},
	}
}

// consumerOffsetsListOffset answers ListOffsets for __consumer_offsets as for empty partitions,
// which is what a Kafka client finds there (group state lives in the coordinator log): the log
// start and the high watermark are 0, and no record has a timestamp (offset and timestamp -1).
// kafka-get-offsets without --topic asks for every partition of every topic, the internal one
// included, and retried an UNKNOWN_TOPIC_OR_PARTITION until its timeout.
func consumerOffsetsListOffset(_ context.Context, _ string, partition int32, ts int64) (offset, at int64, err error) {
	switch {
	case partition < 0 || partition >= consumerOffsetsPartitions:
		return 0, 0, kerr.UnknownTopicOrPartition
	case ts == -1 || ts == -2:
		return 0, -1, nil
	default:
		return -1, -1, nil
	}
}
