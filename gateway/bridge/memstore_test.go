package bridge

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// memStore is an in-memory Iggy with the semantics the bridge relies on:
// validated batches stamped with consecutive offsets, polls that slice stored
// batches, the error codes of the real server. Several bridges may share one
// to play several gateways.
type memStore struct {
	mu       sync.Mutex
	streams  map[string]map[string]*storeTopic
	nextID   uint32
	sendErr  error // returned (once) by the next send, after storing when sendLost
	sendLost bool
	sends    int
	polls    int
	polled   int // messages handed out by polls
	// topicCalls counts topic calls (metadata reads); topicErr, when set, is what they return
	// (a store that does not answer them).
	topicCalls int
	topicErr   error
	// sendHold, when set, is called by every send before it stores anything (outside mu).
	sendHold func()
	// sendStored, when set, is called by every send that stored its batch, before it returns
	// (outside mu).
	sendStored func()
	// pollGate, when set, holds every poll of more than one message of the Kafka stream until
	// it is closed.
	pollGate chan struct{}
	// pollHook, when set, is called by every poll with its count before it reads anything
	// (outside mu).
	pollHook func(count uint32)
	// offsetReads counts consumerOffset calls; segmentDeletes is every deleteSegments count;
	// manageErr, when set, is what a call needing the permission to manage a topic returns.
	offsetReads    int
	segmentDeletes []uint32
	manageErr      error
}

type storeTopic struct {
	id        uint32
	createdAt uint64
	opts      topicOptions
	parts     []*storePart
}

type storePart struct {
	batches [][]byte
	next    uint64
	offsets map[string]uint64 // stored consumer offsets by consumer name
}

func newMemStore() *memStore { return &memStore{streams: map[string]map[string]*storeTopic{}} }

func (m *memStore) ensureStream(_ context.Context, s string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.streams[s] == nil {
		m.streams[s] = map[string]*storeTopic{}
	}
	return nil
}

func (m *memStore) find(stream, name string) (*storeTopic, error) {
	s := m.streams[stream]
	if s == nil {
		return nil, wire.StreamIDNotFound
	}
	t := s[name]
	if t == nil {
		return nil, wire.TopicIDNotFound
	}
	return t, nil
}

func (t *storeTopic) meta(name string) topicMeta {
	tm := topicMeta{ID: t.id, CreatedAt: t.createdAt, Name: name, Options: t.opts}
	for _, p := range t.parts {
		pm := partMeta{Segments: 1}
		if p.next > 0 {
			pm.CurrentOffset, pm.Messages = p.next-1, p.next
		}
		tm.Partitions = append(tm.Partitions, pm)
	}
	return tm
}

func (m *memStore) topic(_ context.Context, stream, name string) (topicMeta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.topicCalls++
	if m.topicErr != nil {
		return topicMeta{}, m.topicErr
	}
	t, err := m.find(stream, name)
	if err != nil {
		return topicMeta{}, err
	}
	return t.meta(name), nil
}

// topicReads is how many topic calls were made so far.
func (m *memStore) topicReads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.topicCalls
}

func (m *memStore) topics(_ context.Context, stream string) ([]topicMeta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []topicMeta
	for name, t := range m.streams[stream] {
		out = append(out, t.meta(name))
	}
	return out, nil
}

func (m *memStore) createTopic(_ context.Context, stream, name string, partitions uint32, opts topicOptions) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.streams[stream]
	if s == nil {
		return wire.StreamIDNotFound
	}
	if s[name] != nil {
		return wire.TopicNameAlreadyExists
	}
	t := &storeTopic{id: m.nextID, createdAt: uint64(time.Now().UnixMicro()), opts: opts}
	m.nextID++
	for range partitions {
		t.parts = append(t.parts, &storePart{})
	}
	s[name] = t
	return nil
}

func (m *memStore) deleteTopic(_ context.Context, stream, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.find(stream, name); err != nil {
		return err
	}
	delete(m.streams[stream], name)
	return nil
}

func (m *memStore) updateTopic(_ context.Context, stream, name string, opts topicOptions) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manageErr != nil {
		return m.manageErr
	}
	t, err := m.find(stream, name)
	if err != nil {
		return err
	}
	t.opts = opts
	return nil
}

func (m *memStore) createPartitions(_ context.Context, stream, name string, count uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, err := m.find(stream, name)
	if err != nil {
		return err
	}
	for range count {
		t.parts = append(t.parts, &storePart{})
	}
	return nil
}

func (m *memStore) send(_ context.Context, stream, topic string, partition uint32, batch []byte) (uint64, error) {
	m.mu.Lock()
	hold := m.sendHold
	m.mu.Unlock()
	if hold != nil {
		hold()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sends++
	if err := m.sendErr; err != nil && !m.sendLost {
		m.sendErr = nil
		return 0, err
	}
	t, err := m.find(stream, topic)
	if err != nil || int(partition) >= len(t.parts) {
		return 0, wire.ResourceNotFound
	}
	n, err := message.Validate(batch)
	if err != nil {
		return 0, err
	}
	p := t.parts[partition]
	stored := append([]byte(nil), batch...)
	message.Stamp(stored, uint64(partition), p.next, 1)
	p.batches = append(p.batches, stored)
	base := p.next
	p.next += uint64(n)
	if err := m.sendErr; err != nil {
		m.sendErr, m.sendLost = nil, false
		return 0, err
	}
	if stored := m.sendStored; stored != nil {
		m.mu.Unlock()
		stored()
		m.mu.Lock()
	}
	return base, nil
}

func (m *memStore) poll(_ context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (polled, error) {
	m.mu.Lock()
	if hook := m.pollHook; hook != nil {
		m.mu.Unlock()
		hook(count)
		m.mu.Lock()
	}
	if gate := m.pollGate; gate != nil && count > 1 && stream == defaultStream {
		m.mu.Unlock()
		<-gate
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	m.polls++
	t, err := m.find(stream, topic)
	if err != nil {
		return polled{}, err
	}
	if int(partition) >= len(t.parts) {
		return polled{}, wire.PartitionNotFound
	}
	p := t.parts[partition]
	var out polled
	if p.next > 0 {
		out.CurrentOffset = p.next - 1
	}
	for _, b := range p.batches {
		if out.Count >= count {
			break
		}
		var n uint32
		out.Records, n = message.AppendSlice(out.Records, b, offset, count-out.Count)
		out.Count += n
	}
	m.polled += int(out.Count)
	return out, nil
}

func (m *memStore) part(stream, topic string, partition uint32) (*storePart, error) {
	t, err := m.find(stream, topic)
	if err != nil {
		return nil, err
	}
	if int(partition) >= len(t.parts) {
		return nil, wire.PartitionNotFound
	}
	return t.parts[partition], nil
}

func (m *memStore) consumerOffset(_ context.Context, stream, topic string, partition uint32, consumer string) (uint64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offsetReads++
	p, err := m.part(stream, topic, partition)
	if err != nil {
		// Iggy answers nothing stored when the stream or topic does not resolve.
		if errors.Is(err, wire.PartitionNotFound) {
			return 0, false, err
		}
		return 0, false, nil
	}
	off, ok := p.offsets[consumer]
	return off, ok, nil
}

func (m *memStore) storeConsumerOffset(_ context.Context, stream, topic string, partition uint32, consumer string, offset uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(stream, topic, partition)
	if err != nil {
		return err
	}
	if p.next == 0 || offset > p.next-1 {
		return wire.InvalidOffset
	}
	if p.offsets == nil {
		p.offsets = map[string]uint64{}
	}
	p.offsets[consumer] = offset
	return nil
}

func (m *memStore) deleteSegments(_ context.Context, stream, topic string, partition, count uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.manageErr != nil {
		return m.manageErr
	}
	if _, err := m.part(stream, topic, partition); err != nil {
		return err
	}
	m.segmentDeletes = append(m.segmentDeletes, count)
	return nil
}

// appendNative stores a batch as a native Iggy client would write it.
func (m *memStore) appendNative(stream, topic string, partition uint32, payloads ...string) error {
	var b message.Builder
	b.Reset()
	for i, p := range payloads {
		b.Add(message.MakeID(uint64(i)+1, 0), 1_700_000_000_000_000+uint64(i)*1000, []byte(p), nil)
	}
	batch, err := b.Finish()
	if err != nil {
		return err
	}
	_, err = m.send(context.Background(), stream, topic, partition, batch)
	return err
}

var errInjected = errors.New("injected failure")
