package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// iggyAPI is the part of an Iggy client the bridge uses, in the bridge's own
// terms. The real one wraps *iggy.Client (client.go); tests also run the
// bridge over an in-memory one, so the mapping rules are tested apart from
// the network.
type iggyAPI interface {
	ensureStream(ctx context.Context, stream string) error
	topic(ctx context.Context, stream, name string) (topicMeta, error) // wire.TopicNameNotFound style error when missing
	topics(ctx context.Context, stream string) ([]topicMeta, error)
	createTopic(ctx context.Context, stream, name string, partitions uint32, opts topicOptions) error
	deleteTopic(ctx context.Context, stream, name string) error
	createPartitions(ctx context.Context, stream, name string, count uint32) error
	// updateTopic sets the topic's retention settings to opts, a zero field going back to the
	// server default (needs the permission to manage the topic).
	updateTopic(ctx context.Context, stream, name string, opts topicOptions) error
	send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error)
	// poll returns the batch records holding at most count messages from
	// offset on, the partition's current offset (the highest stored, 0 when
	// empty) and the number of messages. release hands the buffer back.
	poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error)
	// consumerOffset is the offset stored for the single Iggy consumer named consumer on a
	// partition; ok false when none is. storeConsumerOffset stores one.
	consumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string) (offset uint64, ok bool, err error)
	storeConsumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string, offset uint64) error
	// deleteSegments removes the count oldest sealed segments of a partition (0: none, which
	// still needs the permission to manage the topic).
	deleteSegments(ctx context.Context, stream, topic string, partition, count uint32) error
}

type topicMeta struct {
	ID         uint32
	CreatedAt  uint64 // µs, as Iggy reports it
	Name       string
	Partitions []partMeta
	Options    topicOptions
}

type partMeta struct {
	CurrentOffset uint64
	Messages      uint64
	Segments      uint32 // Iggy segments, the active one included
}

// topicOptions are the Iggy topic settings Kafka configs map onto. Zero
// means the server default.
type topicOptions struct {
	MessageExpiryMicros uint64 // retention.ms
	MaxTopicSize        uint64 // retention.bytes
}

type polled struct {
	Records       []byte
	CurrentOffset uint64
	Count         uint32
	Release       func()
}

// highWatermark is the offset after the last stored message. Iggy reports
// the highest stored offset, which is 0 both for an empty partition and for
// one holding only offset 0; the message count tells them apart.
func (p partMeta) highWatermark() int64 { return HighWatermark(p.CurrentOffset, p.Messages) }

// HighWatermark is a partition's Kafka end offset from the counters Iggy reports of it in a
// topic's details: its current offset (the highest stored) and its message count. A node of an
// Iggy cluster reports them a moment behind, so the gateways answer clients from polls instead
// (exactEnd); the console's topic rates, which read the details of every topic at once, take
// the end offset from here.
func HighWatermark(current, messages uint64) int64 {
	if messages == 0 && current == 0 {
		return 0
	}
	return int64(current) + 1
}

// kafkaErr maps an Iggy error of a partition's produce or fetch onto the
// Kafka error a handler should answer, keeping the original in the chain for
// logs. Errors already carrying a Kafka code pass through; anything unknown
// stays a plain error. An unreachable store is NOT_LEADER_OR_FOLLOWER, as Kafka
// answers for a partition whose leader is gone: clients refresh metadata,
// find the partition offline (outage.go) and wait, and a resent idempotent
// batch that did land is recognised from Iggy, so retrying is safe. It is
// never KAFKA_STORAGE_ERROR, which librdkafka's idempotent producer takes as
// fatal.
func kafkaErr(err error) error { return kafkaErrOr(err, kerr.NotLeaderForPartition) }

// adminErr is kafkaErr for topic administration (create, delete, grow,
// configs): an unreachable store is REQUEST_TIMED_OUT, retriable.
func adminErr(err error) error { return kafkaErrOr(err, kerr.RequestTimedOut) }

// kafkaErrOr is kafkaErr answering down for an unreachable store.
func kafkaErrOr(err error, down *kerr.Error) error {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return err
	}
	if unreachable(err) || errors.Is(err, iggy.ErrUnresolved) {
		return fmt.Errorf("%w: %w", down, err)
	}
	var code wire.Code
	if !errors.As(err, &code) {
		return err
	}
	var k *kerr.Error
	switch code {
	case wire.ResourceNotFound, wire.StreamIDNotFound, wire.StreamNameNotFound, wire.TopicIDNotFound,
		wire.TopicNameNotFound, wire.PartitionNotFound, wire.NoPartitions:
		k = kerr.UnknownTopicOrPartition
	case wire.Unauthorized, wire.Unauthenticated:
		k = kerr.TopicAuthorizationFailed
	case wire.TopicNameAlreadyExists:
		k = kerr.TopicAlreadyExists
	case wire.TooManyPartitions, wire.InvalidPartitionsCount:
		k = kerr.InvalidPartitions
	case wire.InvalidTopicName:
		k = kerr.InvalidTopicException
	case wire.TooBigMessagePayload, wire.TooBigUserHeaders:
		k = kerr.MessageTooLarge
	case wire.InvalidTopicSize, wire.InvalidOptionValue:
		k = kerr.InvalidConfig
	default:
		return err
	}
	return fmt.Errorf("%w: %w", k, err)
}

// isNotFound reports whether err says a stream or topic does not exist.
func isNotFound(err error) bool {
	return errors.Is(kafkaErr(err), kerr.UnknownTopicOrPartition)
}
