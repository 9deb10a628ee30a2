package kafka

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Producers of the in-memory storage: what the test's producers hook says.
func (m *memStorage) Producers(_ context.Context, topic string, partition int32) ([]ProducerState, error) {
	m.mu.Lock()
	fn := m.producers
	m.mu.Unlock()
	if fn == nil {
		return nil, nil
	}
	return fn(topic, partition)
}

// DescribeProducers answers each partition with the storage's producers, field by field; a
// partition past the topic's count and an unknown topic are UNKNOWN_TOPIC_OR_PARTITION, a
// storage error is its code, and __consumer_offsets has none.
func TestDescribeProducers(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "dp", 2)
	ts.storage.mu.Lock()
	ts.storage.producers = func(topic string, partition int32) ([]ProducerState, error) {
		if partition == 1 {
			return nil, fmt.Errorf("read: %w", kerr.KafkaStorageError)
		}
		return []ProducerState{
			{ProducerID: 7, Epoch: 2, LastSequence: 41, LastTimestamp: 1_700_000_000_123, TxnStartOffset: -1},
			{ProducerID: 9, Epoch: 0, LastSequence: -1, LastTimestamp: 1_700_000_000_456, TxnStartOffset: 12},
		}, nil
	}
	ts.storage.mu.Unlock()
	req := kmsg.NewPtrDescribeProducersRequest()
	for _, tp := range []struct {
		topic string
		parts []int32
	}{{"dp", []int32{0, 1, 2}}, {"missing", []int32{0}}, {"__consumer_offsets", []int32{3}}} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = tp.topic, tp.parts
		req.Topics = append(req.Topics, rt)
	}
	// To the gateway itself: the client would split the request by partition leader and
	// refuse the unknown topic before sending.
	kresp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := kresp.(*kmsg.DescribeProducersResponse)
	got := map[string]string{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			s := fmt.Sprintf("code %d", rp.ErrorCode)
			for _, ap := range rp.ActiveProducers {
				s += fmt.Sprintf(" [%d %d %d %d %d %d]", ap.ProducerID, ap.ProducerEpoch, ap.LastSequence, ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset)
			}
			got[fmt.Sprintf("%s/%d", rt.Topic, rp.Partition)] = s
		}
	}
	want := map[string]string{
		"dp/0":                 "code 0 [7 2 41 1700000000123 -1 -1] [9 0 -1 1700000000456 -1 12]",
		"dp/1":                 fmt.Sprintf("code %d", kerr.KafkaStorageError.Code),
		"dp/2":                 fmt.Sprintf("code %d", kerr.UnknownTopicOrPartition.Code),
		"missing/0":            fmt.Sprintf("code %d", kerr.UnknownTopicOrPartition.Code),
		"__consumer_offsets/3": "code 0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("DescribeProducers answered\n%v\nwant\n%v", got, want)
	}
	if !errors.Is(kerr.ErrorForCode(resp.Topics[0].Partitions[1].ErrorCode), kerr.KafkaStorageError) {
		t.Fatal("the storage error's code")
	}
}
