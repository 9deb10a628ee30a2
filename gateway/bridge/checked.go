package bridge

import (
	"context"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// Permits says whom a checked Storage acts for: the Iggy user's id and permissions as Iggy
// holds them now. An error refuses the call it was asked for (the user was deleted, say).
type Permits func(ctx context.Context) (userID uint32, p *wire.Permissions, err error)

// AsChecked returns the bridge acting through c for a user whose own Iggy login the gateway
// does not hold: c (the gateway's own login) may do more than the user, so every Iggy call is first
// checked against the user's permissions with Iggy's own rule (package authz) and refused with
// wire.Unauthorized where Iggy would refuse it, after the same not-found answers. The Kafka
// connection then gets exactly the answers a login as the user would get.
// allow answers the gateway's own questions (Authorize) for the same user.
func (b *Bridge) AsChecked(c *iggy.Client, who Permits, allow Authorizer) kafka.Storage {
	return boundStorage{b: b, as: b.guard(&checked{api: wrap(c), c: c, who: who, clock: b.clock, ids: map[[2]string]checkedIDs{}}), who: allow}
}

// idsFor is how long a name's Iggy ids are reused: a topic deleted and created again under its
// name gets a new id, which its permissions name, so the mapping is read again soon.
const idsFor = time.Second

type checkedIDs struct {
	stream, topic uint32
	at            time.Time
}

type checked struct {
	api   iggyAPI
	c     *iggy.Client
	who   Permits
	clock interface{ Now() time.Time }

	mu  sync.Mutex
	ids map[[2]string]checkedIDs // (stream, topic) -> ids; topic "" for the stream alone
}

// resolve returns the ids of a stream and, unless topic is empty, of its topic, or Iggy's
// not-found error for either.
func (k *checked) resolve(ctx context.Context, stream, topic string) (uint32, uint32, error) {
	key := [2]string{stream, topic}
	now := k.clock.Now()
	k.mu.Lock()
	id, ok := k.ids[key]
	k.mu.Unlock()
	if ok && now.Sub(id.at) < idsFor {
		return id.stream, id.topic, nil
	}
	if topic == "" {
		s, err := k.c.GetStream(ctx, wire.NamedID(stream))
		if err != nil {
			return 0, 0, err
		}
		id = checkedIDs{stream: s.ID, at: now}
	} else {
		s, err := k.c.GetStream(ctx, wire.NamedID(stream))
		if err != nil {
			return 0, 0, err
		}
		t, err := k.c.GetTopic(ctx, wire.NamedID(stream), wire.NamedID(topic))
		if err != nil {
			return 0, 0, err
		}
		id = checkedIDs{stream: s.ID, topic: t.ID, at: now}
	}
	k.mu.Lock()
	if len(k.ids) > 4096 {
		clear(k.ids)
	}
	k.ids[key] = id
	k.mu.Unlock()
	return id.stream, id.topic, nil
}

// allow asks the user's permissions check, made from the ids of stream and topic.
func (k *checked) allow(ctx context.Context, stream, topic string, check func(s, t uint32) authz.Check) error {
	s, t, err := k.resolve(ctx, stream, topic)
	if err != nil {
		return err
	}
	return k.allowed(ctx, check(s, t))
}

func (k *checked) allowed(ctx context.Context, check authz.Check) error {
	uid, p, err := k.who(ctx)
	if err != nil {
		return err
	}
	if !authz.Allowed(uid, p, check) {
		return wire.Unauthorized
	}
	return nil
}

func onStream(f func(uint32) authz.Check) func(s, t uint32) authz.Check {
	return func(s, _ uint32) authz.Check { return f(s) }
}

func (k *checked) ensureStream(ctx context.Context, stream string) error {
	if _, _, err := k.resolve(ctx, stream, ""); err != nil {
		if !isNotFound(err) {
			return err
		}
		if err := k.allowed(ctx, authz.ManageStreams); err != nil {
			return err
		}
	} else if err := k.allow(ctx, stream, "", onStream(authz.ReadStream)); err != nil {
		return err
	}
	return k.api.ensureStream(ctx, stream)
}

func (k *checked) topic(ctx context.Context, stream, name string) (topicMeta, error) {
	if err := k.allow(ctx, stream, name, authz.ReadTopic); err != nil {
		return topicMeta{}, err
	}
	return k.api.topic(ctx, stream, name)
}

func (k *checked) topics(ctx context.Context, stream string) ([]topicMeta, error) {
	if err := k.allow(ctx, stream, "", onStream(authz.ReadStream)); err != nil {
		if isNotFound(err) {
			return k.api.topics(ctx, stream) // Iggy lists no topics of a missing stream
		}
		return nil, err
	}
	return k.api.topics(ctx, stream)
}

func (k *checked) createTopic(ctx context.Context, stream, name string, partitions uint32, opts topicOptions) error {
	if err := k.allow(ctx, stream, "", onStream(authz.ManageTopics)); err != nil {
		return err
	}
	return k.api.createTopic(ctx, stream, name, partitions, opts)
}

func (k *checked) deleteTopic(ctx context.Context, stream, name string) error {
	if err := k.allow(ctx, stream, name, authz.ManageTopic); err != nil {
		return err
	}
	return k.api.deleteTopic(ctx, stream, name)
}

func (k *checked) createPartitions(ctx context.Context, stream, name string, count uint32) error {
	if err := k.allow(ctx, stream, name, authz.ManageTopic); err != nil {
		return err
	}
	return k.api.createPartitions(ctx, stream, name, count)
}

func (k *checked) updateTopic(ctx context.Context, stream, name string, opts topicOptions) error {
	if err := k.allow(ctx, stream, name, authz.ManageTopic); err != nil {
		return err
	}
	return k.api.updateTopic(ctx, stream, name, opts)
}

func (k *checked) send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error) {
	if err := k.allow(ctx, stream, topic, authz.Send); err != nil {
		return 0, err
	}
	return k.api.send(ctx, stream, topic, partition, batch)
}

func (k *checked) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	if err := k.allow(ctx, stream, topic, authz.Poll); err != nil {
		return polled{}, err
	}
	return k.api.poll(ctx, stream, topic, partition, offset, count)
}

func (k *checked) consumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string) (uint64, bool, error) {
	if err := k.allow(ctx, stream, topic, authz.Poll); err != nil {
		return 0, false, err
	}
	return k.api.consumerOffset(ctx, stream, topic, partition, consumer)
}

func (k *checked) storeConsumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string, offset uint64) error {
	if err := k.allow(ctx, stream, topic, authz.Poll); err != nil {
		return err
	}
	return k.api.storeConsumerOffset(ctx, stream, topic, partition, consumer, offset)
}

func (k *checked) deleteSegments(ctx context.Context, stream, topic string, partition, count uint32) error {
	if err := k.allow(ctx, stream, topic, authz.ManageTopic); err != nil {
		return err
	}
	return k.api.deleteSegments(ctx, stream, topic, partition, count)
}
