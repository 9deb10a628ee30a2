package kafka

import (
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

func consumerOffsetsInfo() TopicInfo {
	return TopicInfo{Name: consumerOffsetsTopic, Partitions: consumerOffsetsPartitions, Internal: true}
}
