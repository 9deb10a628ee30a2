package gateway_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
)

// A quota set through one gateway of a fleet is enforced by another within its refresh
// interval (200 ms here; the poll allows 5 s), and its removal likewise: a producer writing
// through gateway 2 only is told to throttle once gateway 1 took a producer_byte_rate quota
// for its client id, and no longer once gateway 1 removed it.
func TestQuotaSetOnOneGatewayEnforcedByAnother(t *testing.T) {
	_, gws := testfleet.Start(t, 2, func(_ int, c *gateway.Config) {
		c.QuotaWindowSize, c.QuotaWindows, c.QuotaRefresh = 50*time.Millisecond, 11, 200*time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	at1, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer at1.Close()
	if _, err := kadm.NewClient(at1).CreateTopic(ctx, 1, 1, nil, "fleet-quota"); err != nil {
		t.Fatal(err)
	}
	// The producer talks to gateway 2 alone (any gateway serves any partition).
	producer, err := kgo.NewClient(kgo.SeedBrokers(gws[1].Addr().String()), kgo.ClientID("fleet-slow"))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	value := make([]byte, 32<<10)
	rand.Read(value)
	produce := func() (int32, error) {
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 10000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "fleet-quota"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = plainBatch(value)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, producer.Broker(2))
		if err != nil {
			return 0, err
		}
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			return 0, fmt.Errorf("produce through gateway 2: error %d", code)
		}
		return resp.ThrottleMillis, nil
	}
	if d, err := produce(); err != nil || d != 0 {
		t.Fatalf("before any quota: throttle %d ms, %v", d, err)
	}
	// 100 KB/s: a window of it is 50 KB, two of these requests go over by a few ms.
	alter := func(remove bool) {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		e := kmsg.NewAlterClientQuotasRequestEntry()
		ee := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ee.Type, ee.Name = "client-id", kmsg.StringPtr("fleet-slow")
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value, op.Remove = "producer_byte_rate", 100000, remove
		e.Entity, e.Ops = append(e.Entity, ee), append(e.Ops, op)
		req.Entries = append(req.Entries, e)
		resp, err := req.RequestWith(ctx, at1)
		if err != nil || resp.Entries[0].ErrorCode != 0 {
			t.Fatalf("alter through gateway 1: %v %+v", err, resp)
		}
	}
	alter(false)
	set := time.Now()
	checkfor.Eventually(t, 5*time.Second, "gateway 2 to throttle the quota set through gateway 1", func() error {
		d, err := produce()
		if err != nil {
			return err
		}
		if d == 0 {
			return errors.New("not throttled")
		}
		return nil
	})
	t.Logf("gateway 2 enforced the quota %v after gateway 1 took it", time.Since(set))
	alter(true)
	checkfor.Eventually(t, 5*time.Second, "gateway 2 to lift the quota removed through gateway 1", func() error {
		d, err := produce()
		if err != nil {
			return err
		}
		if d != 0 {
			return fmt.Errorf("throttled %d ms", d)
		}
		return nil
	})
}

// plainBatch encodes an uncompressed magic-2 batch of one record, without a producer id.
func plainBatch(value []byte) []byte {
	r := kmsg.Record{Value: value}
	// Encoded with Length 0 (one byte), the rest is the Length to write.
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	recs := r.AppendTo(nil)
	now := time.Now().UnixMilli()
	b := kmsg.RecordBatch{
		Magic: 2, FirstTimestamp: now, MaxTimestamp: now,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, Records: recs, PartitionLeaderEpoch: -1,
	}
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	raw[17], raw[18], raw[19], raw[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return raw
}
