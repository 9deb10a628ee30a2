package kafka

import (
	"context"
	"encoding/binary"
	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

// memStorage is an in-memory Storage for the handler tests: it keeps produced batches as they
// are, with their base offsets rewritten, so it answers fetches byte for byte like a broker.
type memStorage struct {
	mu      sync.Mutex
	topics  map[string]*memTopic
	nextPID int64
	created byte // topics created so far: the last byte of the next topic's id
	// produceFn, when set, runs before every Produce (fault injection, sync points); an error
	// fails the produce.
	produceFn func(topic string, partition int32, records []byte) error
	// produceCtxFn, when set, runs with the write's context before it is stored.
	produceCtxFn func(ctx context.Context) error
	// parked, when set, is told each time a Wait finds nothing new and starts waiting: the sync
	// point for "the long poll is parked".
	parked func(topic string, partition int32)
	// fetched, when set, is told the offset and limit of every Fetch.
	fetched func(topic string, partition int32, offset int64, maxBytes int32)
	// refused, when set, refuses the ACLs it returns true for (Authorize); nil allows all.
	refused func(acl authz.ACL) bool
	// producers, when set, answers Producers; nil: no producers.
	producers func(topic string, partition int32) ([]ProducerState, error)
}

func (m *memStorage) Authorize(_ context.Context, acl authz.ACL) (bool, error) {
	m.mu.Lock()
	refused := m.refused
	m.mu.Unlock()
	return refused == nil || !refused(acl), nil
}

type memTopic struct {
	id      [16]byte
	parts   []*memPart
	configs map[string]*string
}

type memPart struct {
	batches  [][]byte
	bases    []int64
	next     int64
	changed  chan struct{}
	logStart int64 // moved by DeleteRecords (delete_records_test.go)
}

func newMemStorage() *memStorage {
	return &memStorage{topics: make(map[string]*memTopic)}
}

// onProduce sets produceFn.
func (m *memStorage) onProduce(fn func(topic string, partition int32, records []byte) error) {
	m.mu.Lock()
	m.produceFn = fn
	m.mu.Unlock()
}

// onProduceCtx sets produceCtxFn, which sees each write's context.
func (m *memStorage) onProduceCtx(fn func(ctx context.Context) error) {
	m.mu.Lock()
	m.produceCtxFn = fn
	m.mu.Unlock()
}

// onParked sets parked.
func (m *memStorage) onParked(fn func(topic string, partition int32)) {
	m.mu.Lock()
	m.parked = fn
	m.mu.Unlock()
}

// parkedOn returns a channel that receives once for every Wait that parks on topic.
func (m *memStorage) parkedOn(topic string) <-chan int32 {
	ch := make(chan int32, 64)
	m.onParked(func(t string, p int32) {
		if t == topic {
			select {
			case ch <- p:
			default:
			}
		}
	})
	return ch
}

// newID is a topic id no earlier topic had, with m.mu held.
func (m *memStorage) newID() [16]byte {
	m.created++
	return [16]byte{0: 0x1d, 15: m.created}
}

func newMemPart() *memPart { return &memPart{changed: make(chan struct{})} }

func (m *memStorage) ListTopics(ctx context.Context) ([]TopicInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TopicInfo
	for name, t := range m.topics {
		out = append(out, TopicInfo{Name: name, ID: t.id, Partitions: int32(len(t.parts))})
	}
	return out, nil
}

func (m *memStorage) Topic(ctx context.Context, name string, autoCreate bool) (TopicInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.topics[name]
	if !ok {
		if !autoCreate {
			return TopicInfo{}, kerr.UnknownTopicOrPartition
		}
		t = &memTopic{id: m.newID(), parts: []*memPart{newMemPart(), newMemPart()}}
		m.topics[name] = t
	}
	return TopicInfo{Name: name, ID: t.id, Partitions: int32(len(t.parts))}, nil
}

func (m *memStorage) CreateTopic(ctx context.Context, name string, partitions int32, configs map[string]*string, validateOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name == "" || len(name) > 249 {
		return kerr.InvalidTopicException
	}
	if _, ok := m.topics[name]; ok {
		return kerr.TopicAlreadyExists
	}
	if partitions == -1 {
		partitions = 3
	}
	if partitions < 1 || partitions > 1000 {
		return kerr.InvalidPartitions
	}
	for k := range configs {
		if k != "retention.ms" && k != "max.message.bytes" {
			return kerr.InvalidConfig
		}
	}
	if validateOnly {
		return nil
	}
	t := &memTopic{id: m.newID(), configs: configs}
	for range partitions {
		t.parts = append(t.parts, newMemPart())
	}
	m.topics[name] = t
	return nil
}

func (m *memStorage) DeleteTopic(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[name]; !ok {
		return kerr.UnknownTopicOrPartition
	}
	delete(m.topics, name)
	return nil
}

func (m *memStorage) CreatePartitions(ctx context.Context, name string, total int32, validateOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.topics[name]
	if !ok {
		return kerr.UnknownTopicOrPartition
	}
	if int(total) <= len(t.parts) || total > 1000 {
		return kerr.InvalidPartitions
	}
	if validateOnly {
		return nil
	}
	for len(t.parts) < int(total) {
		t.parts = append(t.parts, newMemPart())
	}
	return nil
}

func (m *memStorage) TopicConfigs(ctx context.Context, name string) ([]ConfigEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.topics[name]
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	out := []ConfigEntry{}
	if t.configs["cleanup.policy"] == nil {
		out = append(out, ConfigEntry{Name: "cleanup.policy", Value: "delete", Default: true})
	}
	for k, v := range t.configs {
		if v != nil {
			out = append(out, ConfigEntry{Name: k, Value: *v})
		}
	}
	return out, nil
}

// AlterTopicConfigs takes any config configs.go defines, with any value.
func (m *memStorage) AlterTopicConfigs(ctx context.Context, name string, configs map[string]*string, validateOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range configs {
		if _, ok := configDefs[k]; !ok {
			return kerr.InvalidConfig
		}
	}
	t, ok := m.topics[name]
	if !ok {
		return kerr.UnknownTopicOrPartition
	}
	if !validateOnly {
		t.configs = configs
	}
	return nil
}

func (m *memStorage) part(topic string, partition int32) (*memPart, error) {
	t, ok := m.topics[topic]
	if !ok || partition < 0 || int(partition) >= len(t.parts) {
		return nil, kerr.UnknownTopicOrPartition
	}
	return t.parts[partition], nil
}

func (m *memStorage) Produce(ctx context.Context, topic string, partition int32, records []byte) (ProduceResult, error) {
	m.mu.Lock()
	fn, ctxFn := m.produceFn, m.produceCtxFn
	m.mu.Unlock()
	if fn != nil {
		if err := fn(topic, partition, records); err != nil {
			return ProduceResult{}, err
		}
	}
	if ctxFn != nil {
		if err := ctxFn(ctx); err != nil {
			return ProduceResult{}, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(topic, partition)
	if err != nil {
		return ProduceResult{}, err
	}
	var batches [][]byte
	for b := records; len(b) > 0; {
		if len(b) < 61 {
			return ProduceResult{}, kerr.CorruptMessage
		}
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < 49 || 12+length > int64(len(b)) || b[16] != 2 {
			return ProduceResult{}, kerr.CorruptMessage
		}
		batches = append(batches, append([]byte(nil), b[:12+length]...))
		b = b[12+length:]
	}
	base := p.next
	for _, b := range batches {
		binary.BigEndian.PutUint64(b, uint64(p.next))
		p.batches = append(p.batches, b)
		p.bases = append(p.bases, p.next)
		p.next += int64(int32(binary.BigEndian.Uint32(b[23:]))) + 1
	}
	close(p.changed)
	p.changed = make(chan struct{})
	return ProduceResult{BaseOffset: base, LogAppendTime: -1}, nil
}

func (m *memStorage) Fetch(ctx context.Context, topic string, partition int32, offset int64, maxBytes int32, version int16) (FetchResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(topic, partition)
	if err != nil {
		return FetchResult{}, err
	}
	if offset < 0 || offset > p.next {
		return FetchResult{}, kerr.OffsetOutOfRange
	}
	res := FetchResult{HighWatermark: p.next, LastStableOffset: p.next}
	if m.fetched != nil {
		m.fetched(topic, partition, offset, maxBytes)
	}
	if maxBytes == 0 {
		return res, nil // watermarks only
	}
	for i, b := range p.batches {
		end := p.bases[i] + int64(int32(binary.BigEndian.Uint32(b[23:]))) + 1
		if end <= offset {
			continue
		}
		if len(res.Records) > 0 && len(res.Records)+len(b) > int(maxBytes) {
			break
		}
		res.Records = append(res.Records, b...)
	}
	return res, nil
}

func (m *memStorage) Offsets(ctx context.Context, topic string, partition int32) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(topic, partition)
	if err != nil {
		return 0, 0, err
	}
	return 0, p.next, nil
}

func (m *memStorage) ListOffset(ctx context.Context, topic string, partition int32, timestamp int64) (int64, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(topic, partition)
	if err != nil {
		return 0, 0, err
	}
	switch timestamp {
	case -1:
		return p.next, -1, nil
	case -2:
		return 0, -1, nil
	case -3:
		return max(p.next-1, -1), -1, nil
	}
	for i, b := range p.batches {
		if int64(binary.BigEndian.Uint64(b[35:])) >= timestamp {
			return p.bases[i], int64(binary.BigEndian.Uint64(b[27:])), nil
		}
	}
	return -1, -1, nil
}

func (m *memStorage) Wait(ctx context.Context, topic string, partition int32, offset int64) {
	m.mu.Lock()
	p, err := m.part(topic, partition)
	if err != nil || p.next > offset {
		m.mu.Unlock()
		return
	}
	ch := p.changed
	parked := m.parked
	m.mu.Unlock()
	if parked != nil {
		parked(topic, partition)
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

func (m *memStorage) InitProducerID(ctx context.Context) (int64, int16, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextPID++
	return m.nextPID, 0, nil
}
