package gateway

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// A franz-go producer and consumer round-trip keys, headers and timestamps with every codec
// over a topic with many partitions.
func TestEveryCodecOverManyPartitions(t *testing.T) {
	g := startGateway(t, nil)
	const parts = 12
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{
		{"none", kgo.NoCompression()},
		{"gzip", kgo.GzipCompression()},
		{"snappy", kgo.SnappyCompression()},
		{"lz4", kgo.Lz4Compression()},
		{"zstd", kgo.ZstdCompression()},
	}
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			topic := "codec-" + c.name
			adm := kadm.NewClient(client(t, g))
			if r, err := adm.CreateTopic(testCtx(t), parts, 1, nil, topic); err != nil || r.Err != nil {
				t.Fatalf("create: %v %v", err, r.Err)
			}
			prod := client(t, g, kgo.ProducerBatchCompression(c.codec), kgo.DefaultProduceTopic(topic),
				kgo.RecordPartitioner(kgo.ManualPartitioner()))
			base := time.UnixMilli(1_700_000_000_000)
			want := map[string]*kgo.Record{}
			var recs []*kgo.Record
			for i := range 240 {
				r := &kgo.Record{
					Partition: int32(i % parts),
					Key:       []byte(fmt.Sprintf("key-%d", i)),
					Value:     bytes.Repeat([]byte{byte('a' + i%26)}, 50+i),
					Headers:   []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}, {Key: "empty", Value: nil}},
					Timestamp: base.Add(time.Duration(i) * time.Millisecond),
				}
				want[string(r.Key)] = r
				recs = append(recs, r)
			}
			if err := prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cons := client(t, g, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			next := map[int32]int64{}
			ctx := testCtx(t)
			for len(want) > 0 {
				fs := cons.PollFetches(ctx)
				if err := fs.Err0(); err != nil {
					t.Fatalf("poll with %d records missing: %v", len(want), err)
				}
				fs.EachRecord(func(r *kgo.Record) {
					w, ok := want[string(r.Key)]
					if !ok {
						t.Fatalf("unexpected or repeated record %q", r.Key)
					}
					delete(want, string(r.Key))
					if r.Partition != w.Partition || r.Offset != next[r.Partition] {
						t.Errorf("%s at %d/%d, want partition %d offset %d", r.Key, r.Partition, r.Offset, w.Partition, next[r.Partition])
					}
					next[r.Partition] = r.Offset + 1
					if !bytes.Equal(r.Value, w.Value) || !r.Timestamp.Equal(w.Timestamp) {
						t.Errorf("%s: value or timestamp changed (%v, want %v)", r.Key, r.Timestamp, w.Timestamp)
					}
					if len(r.Headers) != 2 || r.Headers[0].Key != "i" || !bytes.Equal(r.Headers[0].Value, w.Headers[0].Value) ||
						r.Headers[1].Key != "empty" || len(r.Headers[1].Value) != 0 {
						t.Errorf("%s: headers %v", r.Key, r.Headers)
					}
				})
			}
			for p := range int32(parts) {
				if next[p] != 20 {
					t.Errorf("partition %d ends at %d, want 20", p, next[p])
				}
			}
		})
	}
}

// Records above 1 MiB pass when the topic allows them, and are refused when it does not.
func TestLargeRecords(t *testing.T) {
	g := startGateway(t, nil)
	adm := kadm.NewClient(client(t, g))
	big := "4194304"
	if r, err := adm.CreateTopic(testCtx(t), 1, 1, map[string]*string{"max.message.bytes": &big}, "large"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	prod := client(t, g, kgo.ProducerBatchMaxBytes(8<<20), kgo.DefaultProduceTopic("large"))
	values := [][]byte{bytes.Repeat([]byte("x"), 1<<20+1), bytes.Repeat([]byte("y"), 3<<20)}
	for _, v := range values {
		if err := prod.ProduceSync(testCtx(t), &kgo.Record{Value: v}).FirstErr(); err != nil {
			t.Fatalf("produce %d bytes: %v", len(v), err)
		}
	}
	cons := client(t, g, kgo.ConsumeTopics("large"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	var got [][]byte
	ctx := testCtx(t)
	for len(got) < len(values) {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, r.Value) })
	}
	for i := range values {
		if !bytes.Equal(got[i], values[i]) {
			t.Fatalf("record %d: %d bytes back, want %d", i, len(got[i]), len(values[i]))
		}
	}

	small := client(t, g, kgo.ProducerBatchMaxBytes(8<<20), kgo.DefaultProduceTopic("default-limit"), kgo.AllowAutoTopicCreation())
	err := small.ProduceSync(testCtx(t), &kgo.Record{Value: bytes.Repeat([]byte("z"), 2<<20)}).FirstErr()
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(kerr.MessageTooLarge.Message)) {
		t.Fatalf("2 MiB record over the default limit: err %v, want MESSAGE_TOO_LARGE", err)
	}
}

// An idempotent batch resent to a second gateway over the same store, as a producer does after
// its first gateway died, is answered with its original base offset and stored once.
func TestIdempotentResendToSecondGateway(t *testing.T) {
	g1 := startGateway(t, nil)
	g2 := startGateway(t, func(c *Config) {
		c.IggyAddrs = []string{g1.StoreAddr().String()}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	c1, c2 := client(t, g1), client(t, g2)
	if r, err := kadm.NewClient(c1).CreateTopic(testCtx(t), 1, 1, nil, "idem"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	// Something before the producer's batch, so its base offset is not 0.
	if err := c1.ProduceSync(testCtx(t), &kgo.Record{Topic: "idem", Value: []byte("first")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionTimeoutMillis = 60000
	ir, err := init.RequestWith(testCtx(t), c1)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("init producer id: %v %v", err, kerr.ErrorForCode(ir.ErrorCode))
	}
	batch := idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 0, "a", "b", "c")
	produce := func(cl *kgo.Client, records []byte) (int64, error) {
		req := kmsg.NewPtrProduceRequest()
		req.Acks = -1
		req.TimeoutMillis = 10000
		tp := kmsg.NewProduceRequestTopic()
		tp.Topic = "idem"
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Records = records
		tp.Partitions = append(tp.Partitions, pp)
		req.Topics = append(req.Topics, tp)
		resp, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			return 0, err
		}
		p := resp.Topics[0].Partitions[0]
		return p.BaseOffset, kerr.ErrorForCode(p.ErrorCode)
	}
	first, err := produce(c1, batch)
	if err != nil || first != 1 {
		t.Fatalf("first send: offset %d, %v; want 1", first, err)
	}
	again, err := produce(c2, batch)
	if err != nil || again != first {
		t.Fatalf("resend to the second gateway: offset %d, %v; want the original %d", again, err, first)
	}
	offs, err := kadm.NewClient(c2).ListEndOffsets(testCtx(t), "idem")
	if err != nil {
		t.Fatal(err)
	}
	if end, _ := offs.Lookup("idem", 0); end.Offset != 4 {
		t.Fatalf("end offset %d after the resend, want 4 (the batch stored once)", end.Offset)
	}
	// The producer's next batch continues at the second gateway; a gap is refused.
	if off, err := produce(c2, idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 3, "d")); err != nil || off != 4 {
		t.Fatalf("next batch: offset %d, %v; want 4", off, err)
	}
	if _, err := produce(c2, idempotentBatch(ir.ProducerID, ir.ProducerEpoch, 9, "e")); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("sequence gap: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
	}
}

// idempotentBatch encodes an uncompressed magic-2 batch of an idempotent producer.
func idempotentBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		body := r.AppendTo(nil)
		// AppendTo writes the Length field first; set it to the size of the rest.
		r.Length = int32(len(body) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		Length:               0,
		Magic:                2,
		LastOffsetDelta:      int32(len(values) - 1),
		FirstTimestamp:       time.Now().UnixMilli(),
		MaxTimestamp:         time.Now().UnixMilli(),
		ProducerID:           pid,
		ProducerEpoch:        epoch,
		FirstSequence:        seq,
		NumRecords:           int32(len(values)),
		Records:              recs,
		PartitionLeaderEpoch: -1,
	}
	raw := b.AppendTo(nil)
	// Length counts the bytes after the Length field; CRC-32C covers attributes to the end.
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	crc := crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))
	raw[17], raw[18], raw[19], raw[20] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
	return raw
}

// Produce v0-2 are listed by ApiVersions and served: franz-go pinned to Kafka 0.8, 0.9 and
// 0.10.2 produces with Produce v0, v1 and v2 (magic 0 and 1 message sets, compressed in
// wrappers), and a current consumer reads every record back in order, with its key, value and
// (magic 1) timestamp.
func TestOldProducersServed(t *testing.T) {
	g := startGateway(t, nil)
	adm := kadm.NewClient(client(t, g))
	versions := []struct {
		name    string
		v       *kversion.Versions
		produce int16
		magic1  bool
	}{
		{"0.8", kversion.V0_8_0(), 0, false},
		{"0.9", kversion.V0_9_0(), 1, false},
		{"0.10.2", kversion.V0_10_2(), 2, true},
	}
	codecs := []struct {
		name  string
		codec kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"gzip", kgo.GzipCompression()}, {"snappy", kgo.SnappyCompression()}, {"lz4", kgo.Lz4Compression()}}
	for _, v := range versions {
		for _, c := range codecs {
			t.Run(v.name+"/"+c.name, func(t *testing.T) {
				topic := "old-" + strings.ReplaceAll(v.name, ".", "") + "-" + c.name
				if r, err := adm.CreateTopic(testCtx(t), 1, 1, nil, topic); err != nil || r.Err != nil {
					t.Fatalf("create: %v %v", err, r.Err)
				}
				var used atomic.Int32
				used.Store(-1)
				g.kafka.ControlKey(kmsg.Produce.Int16(), func(r *kafka.Controlled) (kmsg.Response, error, bool) {
					r.Keep()
					used.Store(int32(r.Request().GetVersion()))
					return nil, nil, false
				})
				prod := client(t, g, kgo.MaxVersions(v.v), kgo.ProducerBatchCompression(c.codec), kgo.DefaultProduceTopic(topic),
					kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
				base := time.UnixMilli(1_700_000_000_000)
				var recs []*kgo.Record
				for i := range 50 {
					recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: bytes.Repeat([]byte{byte('a' + i%26)}, 20+i),
						Timestamp: base.Add(time.Duration(i) * time.Second)})
				}
				if err := prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
					t.Fatalf("produce: %v", err)
				}
				if got := used.Load(); got != int32(v.produce) {
					t.Fatalf("the client produced with v%d, want v%d", got, v.produce)
				}
				cons := client(t, g, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
				ctx := testCtx(t)
				var got []*kgo.Record
				for len(got) < len(recs) {
					fs := cons.PollFetches(ctx)
					if err := fs.Err0(); err != nil {
						t.Fatal(err)
					}
					got = append(got, fs.Records()...)
				}
				for i, r := range got {
					w := recs[i]
					if r.Offset != int64(i) || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) {
						t.Fatalf("record %d: offset %d key %q value %q; want offset %d key %q value %q", i, r.Offset, r.Key, r.Value, i, w.Key, w.Value)
					}
					if v.magic1 && !r.Timestamp.Equal(w.Timestamp) {
						t.Fatalf("record %d: timestamp %v, want %v", i, r.Timestamp, w.Timestamp)
					}
				}
			})
		}
	}
}

// An acks=0 producer on Produce v2 is served too: nothing answers it, and its records land.
func TestOldProducerWithoutAcks(t *testing.T) {
	g := startGateway(t, nil)
	if r, err := kadm.NewClient(client(t, g)).CreateTopic(testCtx(t), 1, 1, nil, "old-noack"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	prod := client(t, g, kgo.MaxVersions(kversion.V0_10_2()), kgo.DefaultProduceTopic("old-noack"),
		kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	for i := range 20 {
		if err := prod.ProduceSync(testCtx(t), kgo.StringRecord(fmt.Sprint(i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cons := client(t, g, kgo.ConsumeTopics("old-noack"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	var got []string
	for len(got) < 20 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if v != fmt.Sprint(i) {
			t.Fatalf("read %v, want 0..19 in order", got)
		}
	}
}
