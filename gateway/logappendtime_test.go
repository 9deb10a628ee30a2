package gateway

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// message.timestamp.type=LogAppendTime, at creation and in alterations: fetched batches carry
// the LogAppendTime attribute and the time Iggy stored them, whatever time the producer set,
// for batches stored before the change too, at the gateway that changed it and at a second one
// over the same store; CreateTime (the default) gives back the producer's.
func TestLogAppendTimeTopics(t *testing.T) {
	g := startGateway(t, nil)
	adm := kadm.NewClient(client(t, g))
	ctx := testCtx(t)
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"message.timestamp.type": kmsg.StringPtr("LogAppendTime")}, "lat"); err != nil || r.Err != nil {
		t.Fatalf("create lat: %v %v", err, r.Err)
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "ct"); err != nil || r.Err != nil {
		t.Fatalf("create ct: %v %v", err, r.Err)
	}
	if r, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"message.timestamp.type": kmsg.StringPtr("NoSuchTime")}, "bad"); !errors.Is(r.Err, kerr.InvalidConfig) {
		t.Fatalf("create with message.timestamp.type=NoSuchTime: %v %v, want INVALID_CONFIG", err, r.Err)
	}
	typeOf := func(topic string) (string, kmsg.ConfigSource) {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On(topic, nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
		}
		for _, c := range rc.Configs {
			if c.Key == "message.timestamp.type" {
				return c.MaybeValue(), c.Source
			}
		}
		t.Fatalf("describe %s: no message.timestamp.type", topic)
		return "", 0
	}
	if v, src := typeOf("lat"); v != "LogAppendTime" || src != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("lat: message.timestamp.type %s from source %d", v, src)
	}
	if v, src := typeOf("ct"); v != "CreateTime" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("ct: message.timestamp.type %s from source %d", v, src)
	}

	// Each topic gets two snappy batches of two records, all stamped 1970-01-01T00:16:40Z.
	old := time.UnixMilli(1_000_000)
	prod := client(t, g, kgo.ProducerBatchCompression(kgo.SnappyCompression()), kgo.ProducerLinger(0))
	before := time.Now().Add(-time.Millisecond)
	for _, topic := range []string{"lat", "ct"} {
		for range 2 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("a"), Timestamp: old}, &kgo.Record{Topic: topic, Value: []byte("b"), Timestamp: old}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := time.Now()

	// read reads the topic's 4 records through g with a new client; check checks their
	// timestamps.
	read := func(g *Gateway, topic string) ([]*kgo.Record, error) {
		cl := client(t, g, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
		defer cl.Close()
		var recs []*kgo.Record
		for len(recs) < 4 {
			fs := cl.PollFetches(ctx)
			if err := fs.Err(); err != nil {
				return nil, fmt.Errorf("consume %s: %w", topic, err)
			}
			recs = append(recs, fs.Records()...)
		}
		return recs, nil
	}
	check := func(recs []*kgo.Record, logAppend bool) error {
		var bad []string
		for _, r := range recs {
			if logAppend {
				if r.Attrs.TimestampType() != 1 || r.Timestamp.Before(before) || r.Timestamp.After(after) {
					bad = append(bad, fmt.Sprintf("%s offset %d: timestamp type %d at %v, want LogAppendTime (1) between %v and %v",
						r.Topic, r.Offset, r.Attrs.TimestampType(), r.Timestamp, before, after))
				}
			} else if r.Attrs.TimestampType() != 0 || !r.Timestamp.Equal(old) {
				bad = append(bad, fmt.Sprintf("%s offset %d: timestamp type %d at %v, want CreateTime (0) at %v", r.Topic, r.Offset, r.Attrs.TimestampType(), r.Timestamp, old))
			}
		}
		if len(bad) > 0 {
			return errors.New(strings.Join(bad, "; "))
		}
		return nil
	}
	consume := func(what, topic string, logAppend bool) {
		t.Helper()
		recs, err := read(g, topic)
		if err == nil {
			err = check(recs, logAppend)
		}
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	// A second gateway over the same store reads the config log when it first serves a
	// topic, and what changed since within a second.
	g2 := startGateway(t, func(c *Config) {
		c.IggyAddrs, c.IggyUsername, c.IggyPassword = []string{g.StoreAddr().String()}, "iggy", "iggy"
	})
	atSecond := func(what, topic string, logAppend bool) {
		t.Helper()
		checkfor.Eventually(t, 5*time.Second, what, func() error {
			recs, err := read(g2, topic)
			if err != nil {
				return err
			}
			return check(recs, logAppend)
		})
	}
	consume("created with LogAppendTime", "lat", true)
	consume("created with the default", "ct", false)
	atSecond("created with LogAppendTime, at the second gateway", "lat", true)
	atSecond("created with the default, at the second gateway", "ct", false)

	// ListOffsets by timestamp searches the times fetches show: with LogAppendTime every record
	// was stored after before, with CreateTime none was made after it.
	listed, err := adm.ListOffsetsAfterMilli(ctx, before.UnixMilli(), "lat", "ct")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := listed.Lookup("lat", 0); !ok || o.Err != nil || o.Offset != 0 || time.UnixMilli(o.Timestamp).Before(before) {
		t.Errorf("lat: first offset stored after %v: %+v, want offset 0 at its append time", before, o)
	}
	if o, ok := listed.Lookup("ct", 0); !ok || o.Err != nil || o.Offset != 4 {
		t.Errorf("ct: first offset created after %v: %+v, want none (the end offset, 4)", before, o)
	}
	// A consumer of the same offsets again is answered from the fetch cache.
	consume("created with LogAppendTime, again", "lat", true)

	// Magic 1 message sets (Fetch v2-3) carry the same time and attribute.
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MaxBytes = 3, 10, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "lat"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	vs := kversion.Stable() // a client pinned to v3: kgo would otherwise send the highest both speak
	vs.SetMaxKeyVersion(kmsg.Fetch.Int16(), 3)
	resp, err := req.RequestWith(ctx, client(t, g, kgo.MaxVersions(vs)))
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch v3: %+v %v", resp, err)
	}
	set := resp.Topics[0].Partitions[0].RecordBatches
	n := 0
	for ; len(set) > 0; n++ {
		if len(set) < 12 || len(set) < 12+int(binary.BigEndian.Uint32(set[8:])) {
			t.Fatalf("fetch v3 message %d: %d bytes left", n, len(set))
		}
		var m kmsg.MessageV1
		if err := m.ReadFrom(set[:12+int(binary.BigEndian.Uint32(set[8:]))]); err != nil {
			t.Fatalf("fetch v3 message %d: %v", n, err)
		}
		ts := time.UnixMilli(m.Timestamp)
		if m.Magic != 1 || m.Attributes&0x08 == 0 || ts.Before(before) || ts.After(after) {
			t.Errorf("fetch v3 message %d: magic %d, attributes %#x, timestamp %v", n, m.Magic, m.Attributes, ts)
		}
		set = set[12+m.MessageSize:]
	}
	if n != 4 {
		t.Errorf("fetch v3: %d messages, want 4", n)
	}

	// An alteration changes how stored batches are served; leaving the config out of a
	// replacing alteration goes back to CreateTime.
	set1 := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: kmsg.StringPtr("LogAppendTime")}}
	if rs, err := adm.AlterTopicConfigs(ctx, set1, "ct"); err != nil || rs[0].Err != nil {
		t.Fatalf("incremental alter ct: %v %+v", err, rs)
	}
	if v, _ := typeOf("ct"); v != "LogAppendTime" {
		t.Fatalf("ct after the alteration: %s", v)
	}
	consume("altered to LogAppendTime", "ct", true)
	atSecond("altered to LogAppendTime, at the second gateway", "ct", true)
	if rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kmsg.StringPtr("3600000")}}, "ct"); err != nil || rs[0].Err != nil {
		t.Fatalf("replacing alter ct: %v %+v", err, rs)
	}
	if v, src := typeOf("ct"); v != "CreateTime" || src != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("ct after a replacing alteration without it: %s from source %d", v, src)
	}
	consume("altered back to CreateTime", "ct", false)
	atSecond("altered back to CreateTime, at the second gateway", "ct", false)
	bad := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: kmsg.StringPtr("logappendtime")}}
	if rs, err := adm.AlterTopicConfigs(ctx, bad, "ct"); err != nil || !errors.Is(rs[0].Err, kerr.InvalidConfig) {
		t.Fatalf("alter to logappendtime: %v %+v, want INVALID_CONFIG", err, rs)
	}
}
