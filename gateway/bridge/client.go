package bridge

import (
	"context"
	"errors"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// iggyClient adapts *iggy.Client to iggyAPI. Streams and topics are named
// by string identifiers, so the hot paths need no id lookup.
type iggyClient struct{ c *iggy.Client }

func wrap(c *iggy.Client) iggyAPI { return iggyClient{c} }

func (cb iggyClient) ensureStream(ctx context.Context, stream string) error {
	_, err := cb.c.GetStream(ctx, wire.NamedID(stream))
	if err == nil || !isNotFound(err) {
		return err
	}
	_, err = cb.c.CreateStream(ctx, stream)
	if errors.Is(err, wire.StreamNameAlreadyExists) {
		return nil // another gateway created it meanwhile
	}
	return err
}

func topicMetaOf(t *wire.Topic, parts []wire.Partition) topicMeta {
	tm := topicMeta{ID: t.ID, CreatedAt: t.CreatedAt, Name: t.Name, Options: topicOptions{MessageExpiryMicros: t.MessageExpiry, MaxTopicSize: t.MaxTopicSize}}
	n := int(t.PartitionsCount)
	if parts != nil {
		n = len(parts)
	}
	tm.Partitions = make([]partMeta, n)
	for _, p := range parts {
		if int(p.ID) < n {
			tm.Partitions[p.ID] = partMeta{CurrentOffset: p.CurrentOffset, Messages: p.MessagesCount, Segments: p.SegmentsCount}
		}
	}
	return tm
}

func (cb iggyClient) topic(ctx context.Context, stream, name string) (topicMeta, error) {
	t, err := cb.c.GetTopic(ctx, wire.NamedID(stream), wire.NamedID(name))
	if err != nil {
		return topicMeta{}, err
	}
	return topicMetaOf(&t.Topic, t.Partitions), nil
}

func (cb iggyClient) topics(ctx context.Context, stream string) ([]topicMeta, error) {
	ts, err := cb.c.GetTopics(ctx, wire.NamedID(stream))
	if err != nil {
		return nil, err
	}
	out := make([]topicMeta, len(ts))
	for i := range ts {
		out[i] = topicMetaOf(&ts[i], nil)
	}
	return out, nil
}

func (cb iggyClient) createTopic(ctx context.Context, stream, name string, partitions uint32, o topicOptions) error {
	_, err := cb.c.CreateTopic(ctx, wire.NamedID(stream), name, partitions, iggy.TopicOptions{
		MessageExpiryMicros: o.MessageExpiryMicros,
		MaxTopicSize:        o.MaxTopicSize,
	})
	return err
}

func (cb iggyClient) deleteTopic(ctx context.Context, stream, name string) error {
	return cb.c.DeleteTopic(ctx, wire.NamedID(stream), wire.NamedID(name))
}

func (cb iggyClient) createPartitions(ctx context.Context, stream, name string, count uint32) error {
	return cb.c.CreatePartitions(ctx, wire.NamedID(stream), wire.NamedID(name), count)
}

func (cb iggyClient) updateTopic(ctx context.Context, stream, name string, o topicOptions) error {
	// Both entries always go: an update keeps what it does not name. Iggy reads a zero in an
	// update as not given, so a Kafka config deleted (zero here) goes as Iggy's default itself,
	// never and unlimited.
	return cb.c.UpdateTopic(ctx, wire.NamedID(stream), wire.NamedID(name), name, iggy.TopicOptions{Extra: []wire.TLVEntry{
		wire.Uint64Entry(wire.OptMessageExpiry, orDefault(o.MessageExpiryMicros)),
		wire.Uint64Entry(wire.OptMaxTopicSize, orDefault(o.MaxTopicSize)),
	}})
}

// orDefault is v, or for zero Iggy's default of both retention options, wire.Unlimited.
func orDefault(v uint64) uint64 {
	if v == 0 {
		return wire.Unlimited
	}
	return v
}

func (cb iggyClient) send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error) {
	return cb.c.SendBatch(ctx, wire.NamedID(stream), wire.NamedID(topic), partition, batch)
}

func (cb iggyClient) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	p, err := cb.c.Poll(ctx, iggy.PollRequest{
		Stream:    wire.NamedID(stream),
		Topic:     wire.NamedID(topic),
		Partition: partition,
		Strategy:  wire.PollingStrategy{Kind: wire.PollOffset, Value: offset},
		Count:     count,
	})
	if err != nil {
		return polled{}, err
	}
	return polled{Records: p.Batches, CurrentOffset: p.CurrentOffset, Count: p.Count, Release: p.Release}, nil
}

func singleConsumer(name string) wire.Consumer {
	return wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID(name)}
}

func (cb iggyClient) consumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string) (uint64, bool, error) {
	off, ok, err := cb.c.GetOffset(ctx, singleConsumer(consumer), wire.NamedID(stream), wire.NamedID(topic), partition)
	return off.StoredOffset, ok, err
}

func (cb iggyClient) storeConsumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string, offset uint64) error {
	return cb.c.StoreOffset(ctx, singleConsumer(consumer), wire.NamedID(stream), wire.NamedID(topic), partition, offset)
}

func (cb iggyClient) deleteSegments(ctx context.Context, stream, topic string, partition, count uint32) error {
	return cb.c.DeleteSegments(ctx, wire.NamedID(stream), wire.NamedID(topic), partition, count)
}
