package gateway

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// TestStoreOutageKeepsTopics stops the gateway's store under an idempotent producer: while it is
// gone, Metadata still lists the topic with all its partitions, each with its leader, and
// Produce answers NOT_LEADER_OR_FOLLOWER, retriable, never KAFKA_STORAGE_ERROR or a topic without
// partitions. Once the store is back the
// producer finishes by itself and every acknowledged record is stored once.
func TestStoreOutageKeepsTopics(t *testing.T) {
	st := teststore.Start(t, nil)
	addr := st.Addr
	g := startGateway(t, func(c *Config) {
		c.IggyAddrs = []string{addr}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	const topic, parts = "kept", 3
	probe := client(t, g)
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, parts, 1
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(testCtx(t), probe); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}

	var mu sync.Mutex
	acked := map[string]int64{} // value -> offset, per partition in the key
	var failed []error
	// A short retry backoff: the test is about what the gateway answers, not the client's pacing.
	producer := client(t, g, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }), kgo.MetadataMinAge(100*time.Millisecond))
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			v := strconv.Itoa(i)
			producer.Produce(context.Background(), &kgo.Record{Partition: int32(i % parts), Value: []byte(v)}, func(r *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = append(failed, fmt.Errorf("record %s: %w", v, err))
					return
				}
				acked[fmt.Sprintf("%d/%s", r.Partition, v)] = r.Offset
			})
		}
	}
	produce(0, 30)
	if err := producer.Flush(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	if err := st.Stop(); err != nil {
		t.Fatal(err)
	}
	produce(30, 60)

	metadata := func(topics ...string) *kmsg.MetadataResponse {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		for _, name := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
		}
		if len(topics) == 0 {
			req.Topics = nil
		}
		resp, err := req.RequestWith(testCtx(t), probe)
		if err != nil {
			t.Fatalf("metadata during the outage: %v", err)
		}
		return resp
	}
	whole := func(resp *kmsg.MetadataResponse) {
		t.Helper()
		for _, rt := range resp.Topics {
			if rt.Topic == nil || *rt.Topic != topic {
				continue
			}
			if rt.ErrorCode != 0 || len(rt.Partitions) != parts {
				t.Fatalf("during the outage Metadata answered %s with %v and %d partitions, want no error and %d", topic, kerr.ErrorForCode(rt.ErrorCode), len(rt.Partitions), parts)
			}
			for _, p := range rt.Partitions {
				if p.ErrorCode != 0 || len(resp.Brokers) != 1 || p.Leader != resp.Brokers[0].NodeID {
					t.Fatalf("partition %d during the outage: %v leader %d, want no error and the gateway leading (brokers %+v)", p.Partition, kerr.ErrorForCode(p.ErrorCode), p.Leader, resp.Brokers)
				}
			}
			return
		}
		t.Fatalf("during the outage Metadata did not list %s: %+v", topic, resp.Topics)
	}
	whole(metadata(topic))
	whole(metadata())

	preq := kmsg.NewPtrProduceRequest()
	preq.Acks, preq.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = idempotentBatch(-1, -1, -1, "outage")
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	presp, err := preq.RequestWith(testCtx(t), probe)
	if err != nil {
		t.Fatal(err)
	}
	if code := presp.Topics[0].Partitions[0].ErrorCode; code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce during the outage answered %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(code))
	}

	back := time.Now()
	teststore.Start(t, func(c *store.Config) { c.Listen, c.DataDir = addr, st.Dir })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := producer.Flush(ctx); err != nil {
		t.Fatalf("the producer did not finish after the store came back: %v", err)
	}
	t.Logf("the producer finished %v after the store came back", time.Since(back))
	mu.Lock()
	if len(failed) > 0 || len(acked) != 60 {
		t.Fatalf("%d records acknowledged, failures %v", len(acked), failed)
	}
	mu.Unlock()
	checkfor.Eventually(t, 10*time.Second, "topic back online", func() error {
		resp := metadata(topic)
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != 0 {
				return fmt.Errorf("partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		return checkfor.True(len(resp.Topics[0].Partitions) == parts, "%d partitions", len(resp.Topics[0].Partitions))
	})

	consumer := client(t, g, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]int64{}
	cctx := testCtx(t)
	for len(seen) < len(acked) {
		fs := consumer.PollFetches(cctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume after %d records: %v", len(seen), err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			k := fmt.Sprintf("%d/%s", r.Partition, r.Value)
			if _, dup := seen[k]; dup {
				t.Fatalf("record %s read twice", k)
			}
			seen[k] = r.Offset
		})
	}
	for k, off := range acked {
		if got, ok := seen[k]; !ok || got != off {
			t.Fatalf("acknowledged record %s at offset %d, read at %d (present %v)", k, off, got, ok)
		}
	}
	ends, err := kadm.NewClient(probe).ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	stored := int64(0)
	ends.Each(func(o kadm.ListedOffset) { stored += o.Offset })
	if stored != int64(len(acked)) {
		t.Fatalf("%d records stored, %d acknowledged: a resend was stored twice", stored, len(acked))
	}
}
