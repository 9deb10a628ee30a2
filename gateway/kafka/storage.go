package kafka

import (
	"context"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Storage is the storage the handlers speak to. The gateway wires it to the Kafka <-> Iggy bridge,
// bound to one Iggy identity: connections without SASL share the gateway's own Storage, and a
// connection authenticated with SASL gets the Storage of its user from Config.Authenticate
// (PLAIN) or Config.SCRAM (SCRAM).
//
// Errors that map to a Kafka error code are *kerr.Error values (errors.As works through wrapping);
// any other error is answered as UNKNOWN_SERVER_ERROR.
type Storage interface {
	// Authorize reports whether the connection's user may do what acl names, by the rule that
	// package authz owns. Iggy itself checks the Storage's other calls; the handlers ask this
	// for what Iggy has no command for (groups, the cluster) and what the gateway keeps itself.
	Authorize(ctx context.Context, acl authz.ACL) (bool, error)
	ListTopics(ctx context.Context) ([]TopicInfo, error)
	// Topic describes one topic; with autoCreate it creates a missing one with the default
	// partition count. A missing topic is kerr.UnknownTopicOrPartition.
	Topic(ctx context.Context, name string, autoCreate bool) (TopicInfo, error)
	CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]*string, validateOnly bool) error
	DeleteTopic(ctx context.Context, name string) error
	// CreatePartitions grows a topic to total partitions.
	CreatePartitions(ctx context.Context, name string, total int32, validateOnly bool) error
	TopicConfigs(ctx context.Context, name string) ([]ConfigEntry, error)
	// AlterTopicConfigs replaces the topic's own configs with configs (values never nil): a
	// config left out goes back to its default, as Kafka's AlterConfigs has it. A config the
	// gateway does not take, or a bad value, is kerr.InvalidConfig; a missing topic
	// kerr.UnknownTopicOrPartition. validateOnly checks and changes nothing.
	AlterTopicConfigs(ctx context.Context, name string, configs map[string]*string, validateOnly bool) error

	// Produce stores one partition's records (one or more magic-2 record batches) and returns the
	// base offset of the first batch.
	Produce(ctx context.Context, topic string, partition int32, records []byte) (ProduceResult, error)
	// Fetch returns record batches starting at offset, about maxBytes but at least one whole
	// record; version is the Fetch request version so old clients get message sets. maxBytes 0
	// asks for the watermarks only: no records, as Kafka answers a partition past the request's
	// limit.
	Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (FetchResult, error)
	Offsets(ctx context.Context, topic string, partition int32) (logStart, highWatermark int64, err error)
	// ListOffset resolves a ListOffsets timestamp: -1 latest, -2 earliest, -3 max timestamp, else
	// the first offset whose timestamp is at or after it.
	ListOffset(ctx context.Context, topic string, partition int32, timestamp int64) (offset, ts int64, err error)
	// Wait returns when data at or past offset may be available, or when ctx ends.
	Wait(ctx context.Context, topic string, partition int32, offset int64)
	InitProducerID(ctx context.Context) (id int64, epoch int16, err error)
	// DeleteRecords moves the partition's log start offset forward to offset, -1 meaning the high
	// watermark, and returns the log start offset after it (never below what it was). An offset
	// below -1 or past the high watermark is kerr.OffsetOutOfRange.
	DeleteRecords(ctx context.Context, topic string, partition int32, offset int64) (logStart int64, err error)
	// Stable is what READ_COMMITTED readers of a partition may see, read up to hw: the last
	// stable offset (the first offset of the oldest transaction still open, else hw) and the
	// aborted transactions that end at or after from and begin before the last stable offset.
	Stable(ctx context.Context, topic string, partition int32, from, hw int64) (lso int64, aborted []AbortedTxn, err error)
	// Producers describes the idempotent and transactional producers of a partition
	// (DescribeProducers), ordered by producer id.
	Producers(ctx context.Context, topic string, partition int32) ([]ProducerState, error)
}

// ProducerState is one producer of a partition as DescribeProducers answers it.
type ProducerState struct {
	ProducerID int64
	Epoch      int16
	// LastSequence is the last sequence of the producer's newest batch; -1 when its epoch was
	// bumped since (by a transaction marker).
	LastSequence int32
	// LastTimestamp is the largest timestamp of the producer's newest batch or marker, in ms.
	LastTimestamp int64
	// TxnStartOffset is the first offset of the producer's open transaction; -1 when none is.
	TxnStartOffset int64
}

// AbortedTxn is one aborted transaction of a partition as Fetch lists it: its producer and the
// offset of its first record.
type AbortedTxn struct {
	ProducerID, FirstOffset int64
}

// TopicInfo describes one Kafka topic.
type TopicInfo struct {
	Name string
	// ID is the Kafka topic id (Metadata v10+, CreateTopics v7, DeleteTopics v6): never zero,
	// the same at every gateway, and new when a topic is deleted and created again. The bridge
	// derives it from what Iggy keeps about the topic (bridge.TopicID).
	ID         [16]byte
	Partitions int32
	Internal   bool
	// Offline says the store cannot be reached: Partitions is the last count it gave. Metadata
	// still names every partition's leader (see its header); ElectLeaders answers that no
	// leader is available.
	Offline bool
}

// ConfigEntry is one topic configuration value as DescribeConfigs reports it.
type ConfigEntry struct {
	Name, Value                  string
	ReadOnly, Default, Sensitive bool
	// DefaultValue is the value the topic would have without a setting of its own, when Default
	// is false (empty: not known); DescribeConfigs lists it as the broker config behind the
	// topic config.
	DefaultValue string
	// Source, when set, is where the value comes from; otherwise Default and the resource
	// type say (configSource).
	Source kmsg.ConfigSource
}

// ProduceResult is the outcome of one partition's produce.
type ProduceResult struct {
	BaseOffset, LogAppendTime, LogStartOffset int64
}

// FetchResult is one partition's fetched data. Release, when set, gives back the memory behind
// Records (a pooled buffer, or memory of a cache that stays pinned until then): the handler
// calls it exactly once, once the response is encoded or the records are dropped, and reads
// Records no more after.
type FetchResult struct {
	Records                                         []byte
	HighWatermark, LastStableOffset, LogStartOffset int64
	Release                                         func()
}
