package kafka

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	fscram "github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/testcert"
)

// These tests pin down wire details that franz-go tolerates but librdkafka (kcat, the
// Confluent clients) does not; scripts/kcat-interop.sh checks the same against kcat itself.

// fetchCursor reads a Fetch response by hand. kmsg would hide the difference this file cares
// about (a null record set versus an empty one) behind a nil-or-empty slice, so the length
// fields are read straight from the bytes.
type fetchCursor struct {
	b        []byte
	flexible bool
	err      error
}

func (c *fetchCursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b) {
		c.err = fmt.Errorf("need %d bytes, %d left", n, len(c.b))
		return nil
	}
	out := c.b[:n]
	c.b = c.b[n:]
	return out
}

func (c *fetchCursor) i16() int16 {
	if b := c.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (c *fetchCursor) i32() int32 {
	if b := c.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (c *fetchCursor) uvarint() uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b)
	if n <= 0 {
		c.err = errors.New("bad uvarint")
		return 0
	}
	c.b = c.b[n:]
	return v
}

// length reads an array, string or bytes length; -1 is null.
func (c *fetchCursor) length(classic func() int64) int64 {
	if c.flexible {
		return int64(c.uvarint()) - 1
	}
	return classic()
}

func (c *fetchCursor) arrayLen() int64  { return c.length(func() int64 { return int64(c.i32()) }) }
func (c *fetchCursor) stringLen() int64 { return c.length(func() int64 { return int64(c.i16()) }) }
func (c *fetchCursor) bytesLen() int64  { return c.length(func() int64 { return int64(c.i32()) }) }

func (c *fetchCursor) tags() {
	if !c.flexible {
		return
	}
	for n := c.uvarint(); n > 0 && c.err == nil; n-- {
		c.uvarint()
		c.take(int(c.uvarint()))
	}
}

type fetchedPartition struct {
	partition  int32
	errorCode  int16
	recordsLen int64 // -1: null
}

// parseFetchResponse reads a Fetch v0-12 response body (after the correlation id) and returns
// every partition's error code and record-set length.
func parseFetchResponse(body []byte, version int16) ([]fetchedPartition, error) {
	c := &fetchCursor{b: body, flexible: version >= 12}
	c.tags() // response header
	if version >= 1 {
		c.take(4) // throttle
	}
	if version >= 7 {
		c.take(2 + 4) // error code, session id
	}
	var out []fetchedPartition
	for range c.arrayLen() {
		c.take(int(c.stringLen()))
		for range c.arrayLen() {
			if c.err != nil {
				return nil, c.err
			}
			var p fetchedPartition
			p.partition = c.i32()
			p.errorCode = c.i16()
			c.take(8) // high watermark
			if version >= 4 {
				c.take(8) // last stable offset
			}
			if version >= 5 {
				c.take(8) // log start offset
			}
			if version >= 4 {
				for range c.arrayLen() {
					if c.err != nil {
						return nil, c.err
					}
					c.take(8 + 8) // producer id, first offset
					c.tags()
				}
			}
			if version >= 11 {
				c.take(4) // preferred read replica
			}
			p.recordsLen = c.bytesLen()
			c.take(int(max(p.recordsLen, 0)))
			c.tags()
			out = append(out, p)
		}
		if c.err != nil {
			return nil, c.err
		}
		c.tags()
	}
	c.tags()
	if c.err != nil {
		return nil, c.err
	}
	if len(c.b) != 0 {
		return nil, fmt.Errorf("%d bytes after the response", len(c.b))
	}
	return out, nil
}

// librdkafka reads the record-set size of every partition before anything else and treats -1
// as a malformed answer, so a consumer at the end of a partition never saw "end of partition"
// and `kcat -e` never exited. An empty answer must be a zero-length set, at every version:
// before v12 the size is an int32, from v12 a compact length where 0 means null and 1 empty.
func TestFetchAnswersEmptyRecordSetsNotNull(t *testing.T) {
	ts := startServer(t, nil)
	ctx := context.Background()
	if err := ts.storage.CreateTopic(ctx, "t", 2, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.storage.Produce(ctx, "t", 1, testBatch(1000)); err != nil {
		t.Fatal(err)
	}
	conn := dialRaw(t, ts.addr)

	for _, version := range []int16{0, 3, 4, 7, 11, 12} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(version)
			req.ReplicaID = -1
			req.MaxWaitMillis = 0
			req.MinBytes = 0
			req.MaxBytes = 1 << 20
			topic := kmsg.NewFetchRequestTopic()
			topic.Topic = "t"
			for _, p := range []struct {
				partition int32
				offset    int64
			}{
				{0, 0}, // exists, holds nothing
				{1, 0}, // holds one batch
				{1, 1}, // at the end
				{7, 0}, // does not exist: answered with an error
			} {
				rp := kmsg.NewFetchRequestTopicPartition()
				rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p.partition, p.offset, 1<<20
				topic.Partitions = append(topic.Partitions, rp)
			}
			req.Topics = append(req.Topics, topic)

			conn.corr++
			conn.write(t, encodeRequest(req, conn.corr))
			body := conn.readFrame(t)
			if corr := int32(binary.BigEndian.Uint32(body)); corr != conn.corr {
				t.Fatalf("correlation %d, want %d", corr, conn.corr)
			}
			parts, err := parseFetchResponse(body[4:], version)
			if err != nil {
				t.Fatalf("parsing answer: %v", err)
			}
			if len(parts) != 4 {
				t.Fatalf("%d partitions answered, want 4", len(parts))
			}
			want := []struct {
				partition int32
				code      int16
				nonEmpty  bool
			}{
				{0, 0, false},
				{1, 0, true},
				{1, 0, false},
				{7, kerr.UnknownTopicOrPartition.Code, false},
			}
			for i, w := range want {
				p := parts[i]
				if p.partition != w.partition || p.errorCode != w.code {
					t.Errorf("answer %d: partition %d code %d, want partition %d code %d", i, p.partition, p.errorCode, w.partition, w.code)
				}
				switch {
				case p.recordsLen < 0:
					t.Errorf("answer %d (partition %d): null record set", i, p.partition)
				case w.nonEmpty && p.recordsLen == 0:
					t.Errorf("answer %d (partition %d): no records, want the stored batch", i, p.partition)
				case !w.nonEmpty && p.recordsLen != 0:
					t.Errorf("answer %d (partition %d): %d bytes of records, want none", i, p.partition, p.recordsLen)
				}
			}
		})
	}
}

// The hand parser must tell null from empty, or the test above could not fail.
func TestParseFetchResponseSeesNull(t *testing.T) {
	for _, version := range []int16{4, 12} {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(version)
		topic := kmsg.NewFetchResponseTopic()
		topic.Topic = "t"
		null := kmsg.NewFetchResponseTopicPartition()
		empty := kmsg.NewFetchResponseTopicPartition()
		empty.Partition, empty.RecordBatches = 1, []byte{}
		topic.Partitions = append(topic.Partitions, null, empty)
		resp.Topics = append(resp.Topics, topic)
		var b []byte
		if resp.IsFlexible() {
			b = append(b, 0)
		}
		parts, err := parseFetchResponse(resp.AppendTo(b), version)
		if err != nil {
			t.Fatalf("v%d: %v", version, err)
		}
		if len(parts) != 2 || parts[0].recordsLen != -1 || parts[1].recordsLen != 0 {
			t.Fatalf("v%d: parsed %+v, want lengths -1 and 0", version, parts)
		}
	}
}

// librdkafka before 2.11.1 turns gzip and snappy off (and sends those batches uncompressed,
// saying so only in a debug log) unless ApiVersions lists Produce v0, and a client that picks
// v0-2 from that list must be served. Produce is listed from v0 and v0-2 requests reach the
// Storage with the client's message sets, partition by partition; v3+ must carry
// record batches (magic 2), as in Kafka, and anything else is INVALID_RECORD without reaching
// the Storage. (The Storage's conversion of message sets is tested in the bridge, end to end
// in the gateway's TestOldProducersServed.)
func TestProduceServedFromV0(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)
	av := conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	var listed *kmsg.ApiVersionsResponseApiKey
	for i := range av.ApiKeys {
		if av.ApiKeys[i].ApiKey == produceKey {
			listed = &av.ApiKeys[i]
		}
	}
	if listed == nil || listed.MinVersion != 0 || listed.MaxVersion != 12 {
		t.Fatalf("Produce listed as %+v, want v0-12", listed)
	}
	for _, topic := range []string{"old-a", "old-b"} {
		if err := ts.storage.CreateTopic(context.Background(), topic, 2, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var seen []string
	ts.storage.onProduce(func(topic string, partition int32, records []byte) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s/%d:%v", topic, partition, bytes.Equal(records, oldMessageSet())))
		return kerr.NotEnoughReplicas // the answer must be the Storage's
	})
	takeSeen := func() string {
		mu.Lock()
		defer mu.Unlock()
		sort.Strings(seen)
		out := fmt.Sprint(seen)
		seen = nil
		return out
	}
	produce := func(version, acks int16) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(version)
		req.Acks = acks
		req.TimeoutMillis = 1000
		for _, topic := range []string{"old-a", "old-b"} {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			for _, p := range []int32{0, 1} {
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Partition = p
				rp.Records = oldMessageSet()
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		return req
	}
	const all = "[old-a/0:true old-a/1:true old-b/0:true old-b/1:true]"
	answered := func(resp *kmsg.ProduceResponse) string {
		var got []string
		for _, topic := range resp.Topics {
			for _, p := range topic.Partitions {
				got = append(got, fmt.Sprintf("%s/%d:%d", topic.Topic, p.Partition, p.ErrorCode))
			}
		}
		return fmt.Sprint(got)
	}
	for _, version := range []int16{0, 1, 2} {
		resp := conn.roundTrip(t, produce(version, 1)).(*kmsg.ProduceResponse)
		code := kerr.NotEnoughReplicas.Code
		if want := fmt.Sprintf("[old-a/0:%d old-a/1:%d old-b/0:%d old-b/1:%d]", code, code, code, code); answered(resp) != want {
			t.Fatalf("produce v%d answered %v, want %s", version, answered(resp), want)
		}
		if got := takeSeen(); got != all {
			t.Fatalf("produce v%d reached the storage as %s, want %s", version, got, all)
		}
	}
	resp := conn.roundTrip(t, produce(7, 1)).(*kmsg.ProduceResponse)
	code := kerr.InvalidRecord.Code
	if want := fmt.Sprintf("[old-a/0:%d old-a/1:%d old-b/0:%d old-b/1:%d]", code, code, code, code); answered(resp) != want {
		t.Fatalf("produce v7 of message sets answered %v, want %s", answered(resp), want)
	}
	if got := takeSeen(); got != "[]" {
		t.Fatalf("produce v7 of message sets reached the storage: %s", got)
	}
}

// oldMessageSet is one magic-1 message (offset, size, crc, magic, attributes, timestamp, key -1,
// value "x"); its CRC is left zero, as only the fake Storage sees it.
func oldMessageSet() []byte {
	msg := []byte{0, 0, 0, 0, 1, 0}
	msg = binary.BigEndian.AppendUint64(msg, 1000)
	msg = append(msg, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'x')
	b := make([]byte, 8, 12+len(msg))
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
}

// TestKcatInteropSeed is a step of scripts/kcat-interop.sh, not a test of its own: it runs only
// when KCAT_INTEROP_BROKER names a running gateway. librdkafka compresses with LZ4 only when the
// broker lists FindCoordinator, which the gateway does not, so kcat cannot produce the LZ4
// batches the script wants librdkafka to read back; franz-go writes them (and one topic per
// other codec) instead. Topic kgo-CODEC gets records k1..k5 = v1..v5 padded with x's, with header
// src=kgo, in partition 0.
func TestKcatInteropSeed(t *testing.T) {
	broker := os.Getenv("KCAT_INTEROP_BROKER")
	if broker == "" {
		t.Skip("KCAT_INTEROP_BROKER not set: this step runs from scripts/kcat-interop.sh")
	}
	codecs := map[string]kgo.CompressionCodec{
		"none":   kgo.NoCompression(),
		"gzip":   kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(),
		"lz4":    kgo.Lz4Compression(),
		"zstd":   kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(broker),
			kgo.ProducerBatchCompression(codec),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerLinger(0),
			kgo.AllowAutoTopicCreation(),
		)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := 1; i <= 5; i++ {
			n := strconv.Itoa(i)
			recs = append(recs, &kgo.Record{
				Topic:   "kgo-" + name,
				Key:     []byte("k" + n),
				Value:   []byte("v" + n + "-" + strings.Repeat("x", 200)),
				Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("kgo")}},
			})
		}
		err = cl.ProduceSync(testCtx(t), recs...).FirstErr()
		cl.Close()
		if err != nil {
			t.Fatalf("producing to kgo-%s: %v", name, err)
		}
	}
}

// TestKcatInteropCert is a step of scripts/kcat-interop.sh: it writes the TLS gateway's
// certificate and key, for 127.0.0.1 and valid for an hour, to cert.pem and key.pem in
// KCAT_INTEROP_CERT_DIR. The certificate is its own CA, so both franz-go and kcat trust it as
// cert.pem.
func TestKcatInteropCert(t *testing.T) {
	dir := os.Getenv("KCAT_INTEROP_CERT_DIR")
	if dir == "" {
		t.Skip("KCAT_INTEROP_CERT_DIR not set: this step runs from scripts/kcat-interop.sh")
	}
	cert, _ := testcert.New(t)
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"cert.pem": {Type: "CERTIFICATE", Bytes: cert.Certificate[0]},
		"key.pem":  {Type: "PRIVATE KEY", Bytes: key},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKcatInteropSASL is a step of scripts/kcat-interop.sh: against the gateway started with
// --sasl at KCAT_INTEROP_BROKER (over TLS when KCAT_INTEROP_CA names the certificate to trust),
// franz-go logs in with PLAIN as the store's root user iggy (password iggy) and sets that user's
// own SCRAM-SHA-256 and SCRAM-SHA-512 credentials (password iggy) through
// AlterUserScramCredentials; then, with each of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, a new
// client produces k=v-MECHANISM to partition 0 of topic kgo-sasl-MECHANISM and consumes it back.
// kcat then authenticates with the same credentials and reads those topics. With
// KCAT_INTEROP_IGGY naming the gateway's Iggy server, the root user also provisions, as an
// administrator, the SCRAM-SHA-256 and SCRAM-SHA-512 credentials (password kcat-prov-pass) of
// the Iggy user kcat-prov, which it creates with the permissions to read and write every topic
// but not to create one; kcat then authenticates as kcat-prov.
func TestKcatInteropSASL(t *testing.T) {
	broker := os.Getenv("KCAT_INTEROP_BROKER")
	if broker == "" {
		t.Skip("KCAT_INTEROP_BROKER not set: this step runs from scripts/kcat-interop.sh")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(broker)}
	if ca := os.Getenv("KCAT_INTEROP_CA"); ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			t.Fatalf("no certificate in %s", ca)
		}
		opts = append(opts, kgo.DialTLSConfig(&tls.Config{RootCAs: pool}))
	}
	const user, pass = "iggy", "iggy"
	plainAuth := plain.Auth{User: user, Pass: pass}.AsMechanism()
	scramAuth := fscram.Auth{User: user, Pass: pass}
	admin, err := kgo.NewClient(append(opts, kgo.SASL(plainAuth))...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	res, err := kadm.NewClient(admin).AlterUserSCRAMs(testCtx(t), nil, []kadm.UpsertSCRAM{
		{User: user, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: pass},
		{User: user, Mechanism: kadm.ScramSha512, Iterations: 8192, Password: pass},
	})
	if err != nil {
		t.Fatalf("AlterUserScramCredentials: %v", err)
	}
	if r := res[user]; r.Err != nil {
		t.Fatalf("AlterUserScramCredentials for %s: %v %s", user, r.Err, r.ErrMessage)
	}
	if addr := os.Getenv("KCAT_INTEROP_IGGY"); addr != "" {
		provisionForKcat(t, admin, addr)
	}
	for _, m := range []sasl.Mechanism{plainAuth, scramAuth.AsSha256Mechanism(), scramAuth.AsSha512Mechanism()} {
		t.Run(m.Name(), func(t *testing.T) {
			topic := "kgo-sasl-" + m.Name()
			cl, err := kgo.NewClient(append(opts, kgo.SASL(m), kgo.AllowAutoTopicCreation(),
				kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
					topic: {0: kgo.NewOffset().AtStart()},
				}))...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx := testCtx(t)
			rec := &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("v-" + m.Name())}
			if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			fs := cl.PollFetches(ctx)
			if err := fs.Err(); err != nil {
				t.Fatalf("consume: %v", err)
			}
			got := fs.Records()
			if len(got) != 1 || string(got[0].Key) != "k" || string(got[0].Value) != "v-"+m.Name() || got[0].Offset != 0 {
				t.Fatalf("consumed %d records, want k=v-%s at offset 0: %+v", len(got), m.Name(), got)
			}
		})
	}
}

// provisionForKcat creates the Iggy user kcat-prov (read and write, no topic creation) and
// sets its SCRAM credentials as the administrator iggy, through admin (logged in as iggy).
func provisionForKcat(t *testing.T, admin *kgo.Client, iggyAddr string) {
	const prov, provPass = "kcat-prov", "kcat-prov-pass"
	ctx := testCtx(t)
	root, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{iggyAddr}})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true, SendMessages: true}}
	if _, err := root.CreateUser(ctx, prov, "iggy-password-of-kcat-prov", wire.UserStatusActive, perms); err != nil && !errors.Is(err, wire.UserAlreadyExists) {
		t.Fatalf("creating the Iggy user %s: %v", prov, err)
	}
	res, err := kadm.NewClient(admin).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: prov, Mechanism: kadm.ScramSha256, Iterations: 4096, Password: provPass},
		{User: prov, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: provPass},
	})
	if err != nil {
		t.Fatalf("AlterUserScramCredentials of %s by iggy: %v", prov, err)
	}
	if r := res[prov]; r.Err != nil {
		t.Fatalf("AlterUserScramCredentials of %s by iggy: %v %s", prov, r.Err, r.ErrMessage)
	}
}
