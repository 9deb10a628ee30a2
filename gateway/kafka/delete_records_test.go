package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteRecords of the in-memory storage: the log start moves forward only.
func (m *memStorage) DeleteRecords(ctx context.Context, topic string, partition int32, offset int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.part(topic, partition)
	if err != nil {
		return -1, err
	}
	if offset == -1 {
		offset = p.next
	}
	if offset < 0 || offset > p.next {
		return -1, kerr.OffsetOutOfRange
	}
	p.logStart = max(p.logStart, offset)
	return p.logStart, nil
}

// DeleteRecords through a real admin client: every version the client speaks, the low watermark
// of each partition, -1 for the high watermark, an offset past it, an unknown topic and the
// internal __consumer_offsets answered per partition.
func TestDeleteRecords(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.DefaultProduceTopic("dr"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "dr", 2)
	for i := range 10 {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 3})
	offs.Add(kadm.Offset{Topic: "dr", Partition: 1, At: -1})
	resp, err := adm.DeleteRecords(testCtx(t), offs)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 3, 1: 5} {
		r, ok := resp.Lookup("dr", p)
		if !ok || r.Err != nil || r.LowWatermark != want {
			t.Fatalf("partition %d: %+v (found %v), want low watermark %d", p, r, ok, want)
		}
	}
	// A lower offset leaves the log start where it is.
	offs = kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "dr", Partition: 0, At: 1})
	resp, err = adm.DeleteRecords(testCtx(t), offs)
	if r, _ := resp.Lookup("dr", 0); err != nil || r.Err != nil || r.LowWatermark != 3 {
		t.Fatalf("a lower offset: %+v %v", r, err)
	}

	for v := int16(0); v <= 2; v++ {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.Version = v
		for _, tc := range []struct {
			topic string
			part  int32
			off   int64
		}{{"dr", 0, 4}, {"dr", 1, 6}, {"nope", 0, 0}, {consumerOffsetsTopic, 0, 0}, {"dr", 7, 0}} {
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = tc.topic
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = tc.part, tc.off
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
		}
		got := seedRequest[*kmsg.DeleteRecordsResponse](t, cl, req)
		want := []struct {
			code int16
			low  int64
		}{{0, 4}, {kerr.OffsetOutOfRange.Code, -1}, {kerr.UnknownTopicOrPartition.Code, -1},
			{kerr.InvalidTopicException.Code, -1}, {kerr.UnknownTopicOrPartition.Code, -1}}
		if len(got.Topics) != len(want) {
			t.Fatalf("v%d: %d topics answered", v, len(got.Topics))
		}
		for i, w := range want {
			rp := got.Topics[i].Partitions[0]
			if rp.ErrorCode != w.code || rp.LowWatermark != w.low {
				t.Errorf("v%d %s/%d: code %d low %d, want code %d low %d", v, got.Topics[i].Topic, rp.Partition, rp.ErrorCode, rp.LowWatermark, w.code, w.low)
			}
		}
	}
}

// Only the partition's leader in Metadata deletes; the others answer NOT_LEADER_OR_FOLLOWER, so
// a client goes to the leader, as with Kafka.
func TestDeleteRecordsOnlyOnTheLeader(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	live := []Broker{{1, "h1", 91}, {2, "h2", 92}, {3, "h3", 93}}
	fl.set(1, live...)
	var mine, theirs int32 = -1, -1
	rule := partitionLeaders("t", 12, live)
	for p := range int32(12) {
		if rule[p] == 1 {
			mine = p
		} else {
			theirs = p
		}
	}
	if mine < 0 || theirs < 0 {
		t.Fatalf("the hash gives node 1 partitions mine=%d theirs=%d", mine, theirs)
	}
	if _, err := ts.storage.Produce(testCtx(t), "t", mine, testBatch(1)); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "t"
	for _, p := range []int32{mine, theirs} {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	got := seedRequest[*kmsg.DeleteRecordsResponse](t, cl, req)
	ps := got.Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[0].LowWatermark != 1 {
		t.Errorf("partition %d led here: code %d low %d, want 0 and 1", mine, ps[0].ErrorCode, ps[0].LowWatermark)
	}
	if ps[1].ErrorCode != kerr.NotLeaderForPartition.Code || ps[1].LowWatermark != -1 {
		t.Errorf("partition %d led by another gateway: code %d low %d, want NOT_LEADER_OR_FOLLOWER", theirs, ps[1].ErrorCode, ps[1].LowWatermark)
	}
}
