package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// userBackend is the bridge acting as one Iggy identity: every call carries that identity's
// client, so Iggy's permissions apply to what the Kafka connection does.
type userBackend struct {
	b  *bridge.Bridge
	as *iggy.Client
}

var _ kafka.Storage = userBackend{}

func (u userBackend) ListTopics(ctx context.Context) ([]kafka.TopicInfo, error) {
	ts, err := u.b.ListTopics(ctx, u.as)
	if err != nil {
		return nil, err
	}
	out := make([]kafka.TopicInfo, len(ts))
	for i, t := range ts {
		out[i] = kafka.TopicInfo{Name: t.Name, Partitions: t.Partitions, Internal: t.Internal}
	}
	return out, nil
}

func (u userBackend) Topic(ctx context.Context, name string, autoCreate bool) (kafka.TopicInfo, error) {
	t, err := u.b.Topic(ctx, u.as, name, autoCreate)
	return kafka.TopicInfo{Name: t.Name, Partitions: t.Partitions, Internal: t.Internal}, err
}

func (u userBackend) CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]*string, validateOnly bool) error {
	return u.b.CreateTopic(ctx, u.as, name, partitions, configs, validateOnly)
}

func (u userBackend) DeleteTopic(ctx context.Context, name string) error {
	return u.b.DeleteTopic(ctx, u.as, name)
}

func (u userBackend) CreatePartitions(ctx context.Context, name string, total int32, validateOnly bool) error {
	return u.b.CreatePartitions(ctx, u.as, name, total, validateOnly)
}

func (u userBackend) TopicConfigs(ctx context.Context, name string) ([]kafka.ConfigEntry, error) {
	cs, err := u.b.TopicConfigs(ctx, u.as, name)
	if err != nil {
		return nil, err
	}
	out := make([]kafka.ConfigEntry, len(cs))
	for i, c := range cs {
		out[i] = kafka.ConfigEntry{Name: c.Name, Value: c.Value, ReadOnly: c.ReadOnly, Default: c.Default, Sensitive: c.Sensitive}
	}
	return out, nil
}

func (u userBackend) Produce(ctx context.Context, topic string, partition int32, records []byte) (kafka.ProduceResult, error) {
	r, err := u.b.Produce(ctx, u.as, topic, partition, records)
	return kafka.ProduceResult{BaseOffset: r.BaseOffset, LogAppendTime: r.LogAppendTime, LogStartOffset: r.LogStartOffset}, err
}

func (u userBackend) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (kafka.FetchResult, error) {
	r, err := u.b.Fetch(ctx, u.as, topic, partition, offset, maxBytes, version)
	return kafka.FetchResult{
		Records:          r.Records,
		HighWatermark:    r.HighWatermark,
		LastStableOffset: r.LastStableOffset,
		LogStartOffset:   r.LogStartOffset,
		Release:          r.Release,
	}, err
}

func (u userBackend) Offsets(ctx context.Context, topic string, partition int32) (int64, int64, error) {
	return u.b.Offsets(ctx, u.as, topic, partition)
}

func (u userBackend) ListOffset(ctx context.Context, topic string, partition int32, timestamp int64) (int64, int64, error) {
	return u.b.ListOffset(ctx, u.as, topic, partition, timestamp)
}

func (u userBackend) Wait(ctx context.Context, topic string, partition int32, offset int64) {
	u.b.Wait(ctx, topic, partition, offset)
}

func (u userBackend) InitProducerID(ctx context.Context) (int64, int16, error) {
	return u.b.InitProducerID(ctx, u.as)
}

// userClients logs SASL users in to Iggy and keeps one client per user, so a user's many Kafka
// connections share a small Iggy pool. A cached login is trusted for recheckAfter; after that
// the next authentication logs in again, so a changed or revoked Iggy password stops working
// here within that time.
type userClients struct {
	dial   func(ctx context.Context, user, password string) (*iggy.Client, error)
	bridge *bridge.Bridge

	mu      sync.Mutex
	users   map[string]*userClient
	retired []*iggy.Client
	closed  bool
}

type userClient struct {
	secret   [32]byte
	verified time.Time
	client   *iggy.Client
}

const recheckAfter = time.Minute

var errClosed = errors.New("gateway: closed")

func (u *userClients) authenticate(ctx context.Context, user, password string) (kafka.Storage, error) {
	secret := sha256.Sum256([]byte(user + "\x00" + password))
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil, errClosed
	}
	if c, ok := u.users[user]; ok && subtle.ConstantTimeCompare(c.secret[:], secret[:]) == 1 && time.Since(c.verified) < recheckAfter {
		u.mu.Unlock()
		return userBackend{b: u.bridge, as: c.client}, nil
	}
	u.mu.Unlock()

	client, err := u.dial(ctx, user, password)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		client.Close()
		return nil, errClosed
	}
	if old, ok := u.users[user]; ok {
		if old.secret == secret {
			// A periodic recheck: keep the client connections already use.
			client.Close()
			old.verified = time.Now()
			return userBackend{b: u.bridge, as: old.client}, nil
		}
		// The password changed. The old client may still serve connections authenticated
		// earlier; it is closed with the gateway rather than under them.
		u.retired = append(u.retired, old.client)
	}
	u.users[user] = &userClient{secret: secret, verified: time.Now(), client: client}
	return userBackend{b: u.bridge, as: client}, nil
}

func (u *userClients) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.closed = true
	for _, c := range u.users {
		c.client.Close()
	}
	for _, c := range u.retired {
		c.Close()
	}
	u.users = nil
	u.retired = nil
}
