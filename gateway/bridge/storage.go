package bridge

import (
	"context"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// As returns the bridge acting as the Iggy identity of c: every Iggy call goes through c, so
// Iggy's permissions for that user apply to what the Kafka connection does. The gateway makes
// one for its own login and one per SASL user; they share the bridge's caches.
// Authorize of such a Storage allows everything: what Iggy does not check, nobody restricts
// for the gateway's own login.
func (b *Bridge) As(c *iggy.Client) kafka.Storage { return boundStorage{b: b, as: b.guard(wrap(c))} }

// Authorizer answers whether a connection's user may do what an ACL names, by Iggy's rule
// (package authz).
type Authorizer func(ctx context.Context, acl authz.ACL) (bool, error)

// AsUser is As for a SASL user's own Iggy login: Iggy checks every call, and who answers the
// questions the gateway asks itself (groups, the cluster), which Iggy has no command for.
func (b *Bridge) AsUser(c *iggy.Client, who Authorizer) kafka.Storage {
	return boundStorage{b: b, as: b.guard(wrap(c)), who: who}
}

// boundStorage is a Bridge bound to one Iggy identity, the kafka.Storage the handlers speak to.
type boundStorage struct {
	b   *Bridge
	as  iggyAPI
	who Authorizer // nil: every question is allowed
}

func (s boundStorage) Authorize(ctx context.Context, acl authz.ACL) (bool, error) {
	if s.who == nil {
		return true, nil
	}
	return s.who(ctx, acl)
}

var _ kafka.Storage = boundStorage{}

func (s boundStorage) ListTopics(ctx context.Context) ([]kafka.TopicInfo, error) {
	return s.b.listTopics(ctx, s.as)
}

func (s boundStorage) Topic(ctx context.Context, name string, autoCreate bool) (kafka.TopicInfo, error) {
	return s.b.topicInfo(ctx, s.as, name, autoCreate)
}

func (s boundStorage) CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]*string, validateOnly bool) error {
	return s.b.createTopic(ctx, s.as, name, partitions, configs, validateOnly)
}

func (s boundStorage) DeleteTopic(ctx context.Context, name string) error {
	return s.b.deleteTopic(ctx, s.as, name)
}

func (s boundStorage) CreatePartitions(ctx context.Context, name string, total int32, validateOnly bool) error {
	return s.b.createPartitions(ctx, s.as, name, total, validateOnly)
}

func (s boundStorage) TopicConfigs(ctx context.Context, name string) ([]kafka.ConfigEntry, error) {
	return s.b.topicConfigs(ctx, s.as, name)
}

func (s boundStorage) AlterTopicConfigs(ctx context.Context, name string, configs map[string]*string, validateOnly bool) error {
	return s.b.alterTopicConfigs(ctx, s.as, name, configs, validateOnly)
}

func (s boundStorage) Produce(ctx context.Context, topic string, partition int32, records []byte) (kafka.ProduceResult, error) {
	res, err := s.b.produce(ctx, s.as, topic, partition, records)
	if err == nil {
		s.b.learn(ctx, s.as, topic, partition)
	}
	return res, err
}

func (s boundStorage) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (kafka.FetchResult, error) {
	res, err := s.b.fetch(ctx, s.as, topic, partition, offset, maxBytes, version)
	if err == nil {
		s.b.learn(ctx, s.as, topic, partition)
	}
	return res, err
}

func (s boundStorage) Offsets(ctx context.Context, topic string, partition int32) (int64, int64, error) {
	return s.b.offsets(ctx, s.as, topic, partition)
}

func (s boundStorage) ListOffset(ctx context.Context, topic string, partition int32, timestamp int64) (int64, int64, error) {
	return s.b.listOffset(ctx, s.as, topic, partition, timestamp)
}

func (s boundStorage) Wait(ctx context.Context, topic string, partition int32, offset int64) {
	s.b.Wait(ctx, topic, partition, offset)
}

func (s boundStorage) InitProducerID(ctx context.Context) (int64, int16, error) {
	return s.b.initProducerID(ctx, s.as)
}

func (s boundStorage) DeleteRecords(ctx context.Context, topic string, partition int32, offset int64) (int64, error) {
	return s.b.deleteRecords(ctx, s.as, topic, partition, offset)
}

func (s boundStorage) Producers(ctx context.Context, topic string, partition int32) ([]kafka.ProducerState, error) {
	return s.b.producerStates(ctx, s.as, topic, partition)
}

func (s boundStorage) Stable(ctx context.Context, topic string, partition int32, from, hw int64) (int64, []kafka.AbortedTxn, error) {
	return s.b.stable(ctx, s.as, topic, partition, from, hw)
}
