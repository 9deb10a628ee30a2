package kafka

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

type testServer struct {
	s       *Server
	addr    string
	storage *memStorage
}

func startServer(t testing.TB, mod func(*Config)) *testServer {
	t.Helper()
	b := newMemStorage()
	cfg := Config{NodeID: 1, Storage: b, AutoCreateTopics: true}
	if mod != nil {
		mod(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("serve returned %v", err)
		}
	})
	return &testServer{s: s, addr: ln.Addr().String(), storage: b}
}

func (ts *testServer) client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(ts.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createTopic(t testing.TB, cl *kgo.Client, name string, partitions int32) {
	t.Helper()
	resp, err := kadm.NewClient(cl).CreateTopic(testCtx(t), partitions, 1, nil, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

func TestProduceConsumeRoundTrip(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "orders", 3)

	const n = 900
	var wg sync.WaitGroup
	var mu sync.Mutex
	var produceErr error
	for i := range n {
		wg.Add(1)
		r := &kgo.Record{Topic: "orders", Partition: int32(i % 3), Key: []byte(strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))}
		cl.Produce(testCtx(t), r, func(_ *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				produceErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if produceErr != nil {
		t.Fatalf("produce: %v", produceErr)
	}

	consumer := ts.client(t, kgo.ConsumeTopics("orders"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testCtx(t)
	seen := map[int32]int64{}
	total := 0
	for total < n {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset != seen[r.Partition] {
				t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, seen[r.Partition])
			}
			seen[r.Partition]++
			i, _ := strconv.Atoi(string(r.Key))
			if int32(i%3) != r.Partition || string(r.Value) != "v"+string(r.Key) {
				t.Fatalf("record %q=%q on partition %d", r.Key, r.Value, r.Partition)
			}
			total++
		})
	}
	if total != n {
		t.Fatalf("consumed %d records, want %d", total, n)
	}
}

func TestAcksZeroGetsNoResponseButWrites(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	createTopic(t, cl, "fire", 1)
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "fire", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "acks=0 record stored", func() error {
		_, hw, err := ts.storage.Offsets(context.Background(), "fire", 0)
		return errors.Join(err, checkfor.True(hw == 1, "high watermark %d, want 1", hw))
	})
	// The connection is still in step: a following request gets its own answer.
	if _, err := kadm.NewClient(cl).ListTopics(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestFetchLongPollWakesOnProduce(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "slow", 1)
	parked := ts.storage.parkedOn("slow")
	consumer := ts.client(t, kgo.ConsumeTopics("slow"), kgo.FetchMaxWait(10*time.Second))

	got := make(chan time.Time, 1)
	go func() {
		fs := consumer.PollFetches(testCtx(t))
		if fs.NumRecords() > 0 {
			got <- time.Now()
		}
		close(got)
	}()
	// Once the consumer is parked in a long poll, the answer must come on the write, not after
	// the 10 s wait.
	select {
	case <-parked:
	case <-testCtx(t).Done():
		t.Fatal("the consumer never parked in a long poll")
	}
	produced := time.Now()
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "slow", Value: []byte("wake")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	at, ok := <-got
	if !ok {
		t.Fatal("no records fetched")
	}
	if d := at.Sub(produced); d > 5*time.Second {
		t.Fatalf("fetch answered %v after the produce; the long poll did not wake", d)
	}
}

func TestFetchMinBytesWaitsForMaxWait(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "quiet", 1)
	req := longPoll("quiet", 300)
	start := time.Now()
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("empty fetch answered after %v, before MaxWait", d)
	}
	if len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 || resp.Topics[0].Partitions[0].HighWatermark != 0 {
		t.Fatalf("unexpected response %+v", resp)
	}
}

func TestFetchErrorsAnswerAtOnce(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxWaitMillis = 10000
	req.MinBytes = 1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "missing"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	req.Topics = append(req.Topics, ft)
	start := time.Now()
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("error answered after %v", d)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("error code %d", code)
	}
}

func TestFetchMaxBytesStillReturnsFirstBatch(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	createTopic(t, cl, "big", 2)
	big := bytes.Repeat([]byte("a"), 64<<10)
	for p := range int32(2) {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "big", Partition: p, Value: big}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxBytes = 1024
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "big"
	for p := range int32(2) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = p
		fp.PartitionMaxBytes = 1024
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	ps := resp.Topics[0].Partitions
	if len(ps[0].RecordBatches) < 64<<10 || len(ps[1].RecordBatches) != 0 {
		t.Fatalf("got %d and %d bytes, want the first batch whole and nothing after it", len(ps[0].RecordBatches), len(ps[1].RecordBatches))
	}
	if ps[1].HighWatermark != 1 {
		t.Fatalf("partition 1 high watermark %d, want 1", ps[1].HighWatermark)
	}
}

// onFetched calls fn with the byte limit of every read the storage is asked for.
func (ts *testServer) onFetched(fn func(maxBytes int32)) {
	ts.storage.mu.Lock()
	defer ts.storage.mu.Unlock()
	ts.storage.fetched = func(_ string, _ int32, _ int64, maxBytes int32) { fn(maxBytes) }
}

// fetchParts sends one Fetch v11 of partitions 0 to parts-1 of topic from offset 0, 1 MiB each
// and maxBytes in all.
func fetchParts(t *testing.T, cl *kgo.Client, topic string, parts int, maxBytes int32) *kmsg.FetchResponse {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxBytes = maxBytes
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	for p := range int32(parts) {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition = p
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestFetchStopsReadingAtTheLimit: a fetch of many partitions reads them in waves, and once the
// records read reach the request's limit the partitions left are asked for their watermarks
// only; every partition still answers with its high watermark.
func TestFetchStopsReadingAtTheLimit(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const parts = 20
	createTopic(t, cl, "many", parts)
	val := bytes.Repeat([]byte("v"), 64<<10)
	for p := range int32(parts) {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "many", Partition: p, Value: val}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	reads := 0
	ts.onFetched(func(maxBytes int32) {
		mu.Lock()
		defer mu.Unlock()
		if maxBytes > 0 {
			reads++
		}
	})
	resp := fetchParts(t, cl, "many", parts, 100<<10)
	mu.Lock()
	n := reads
	mu.Unlock()
	if n > maxParallelReads {
		t.Fatalf("%d partitions read for records, want at most one wave of %d", n, maxParallelReads)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.HighWatermark != 1 {
			t.Fatalf("partition %d: error %d, high watermark %d", p.Partition, p.ErrorCode, p.HighWatermark)
		}
	}
	if len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatal("the first partition's records were not answered")
	}
}

// TestFetchReadsWhatFits: the reads of a fetch over many partitions full of data ask the storage
// together for about the request's MaxBytes (what is left of it after the reads before, plus
// at most one batch over), not for every partition's limit, and the answer is still filled
// to MaxBytes within a batch.
func TestFetchReadsWhatFits(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const parts, perPart, maxBytes = 16, 8, 64 << 10
	createTopic(t, cl, "full", parts)
	val := bytes.Repeat([]byte("v"), 8<<10)
	for p := range int32(parts) {
		for range perPart {
			if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "full", Partition: p, Value: val}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mu sync.Mutex
	asked := 0
	ts.onFetched(func(maxBytes int32) {
		mu.Lock()
		defer mu.Unlock()
		asked += int(maxBytes)
	})
	resp := fetchParts(t, cl, "full", parts, maxBytes)
	batch := len(val) + 128
	mu.Lock()
	n := asked
	mu.Unlock()
	if n > maxBytes+batch {
		t.Fatalf("the reads asked for %d bytes in all, want at most the request's %d and one batch", n, maxBytes)
	}
	held := 0
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 || p.HighWatermark != perPart {
			t.Fatalf("partition %d: error %d, high watermark %d", p.Partition, p.ErrorCode, p.HighWatermark)
		}
		held += len(p.RecordBatches)
	}
	if held < maxBytes-batch || held > maxBytes {
		t.Fatalf("answered %d bytes, want %d within a batch", held, maxBytes)
	}
}

func TestProduceErrorsPerPartition(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.onProduce(func(topic string, partition int32, _ []byte) error {
		if partition == 1 {
			return fmt.Errorf("wrapped: %w", kerr.MessageTooLarge)
		}
		return nil
	})
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordRetries(0))
	createTopic(t, cl, "mixed", 2)
	res := cl.ProduceSync(testCtx(t),
		&kgo.Record{Topic: "mixed", Partition: 0, Value: []byte("ok")},
		&kgo.Record{Topic: "mixed", Partition: 1, Value: []byte("too big")},
	)
	// Results come in completion order, not request order.
	for _, r := range res {
		switch r.Record.Partition {
		case 0:
			if r.Err != nil {
				t.Fatalf("partition 0: %v", r.Err)
			}
		case 1:
			if !errors.Is(r.Err, kerr.MessageTooLarge) {
				t.Fatalf("partition 1: %v, want MESSAGE_TOO_LARGE", r.Err)
			}
		}
	}
}

// A partition answered with an error carries base offset -1, as Kafka's does, whatever the
// error: franz-go takes DUPLICATE_SEQUENCE_NUMBER as a success and gives its records the answer's
// offsets. The partition written beside it has its offset.
func TestProduceErrorHasNoOffset(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.CreateTopic(context.Background(), "dup", 2, nil, false)
	for _, code := range []*kerr.Error{kerr.DuplicateSequenceNumber, kerr.OutOfOrderSequenceNumber, kerr.NotLeaderForPartition} {
		ts.storage.onProduce(func(_ string, partition int32, _ []byte) error {
			if partition == 1 {
				return code
			}
			return nil
		})
		req := kmsg.NewPtrProduceRequest()
		req.Version = 9
		req.Acks = -1
		req.TimeoutMillis = 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "dup"
		for p := range int32(2) {
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = p
			rp.Records = testBatch(p)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp := dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.ProduceResponse)
		for _, sp := range resp.Topics[0].Partitions {
			switch {
			case sp.Partition == 1 && (sp.ErrorCode != code.Code || sp.BaseOffset != -1):
				t.Fatalf("%s: partition 1 answered code %d offset %d, want %d and -1", code.Message, sp.ErrorCode, sp.BaseOffset, code.Code)
			case sp.Partition == 0 && (sp.ErrorCode != 0 || sp.BaseOffset < 0):
				t.Fatalf("%s: partition 0 answered code %d offset %d", code.Message, sp.ErrorCode, sp.BaseOffset)
			}
		}
	}
}

func TestMetadataLeadersFollowTheHash(t *testing.T) {
	fleet := []Broker{{NodeID: 3, Host: "h3", Port: 9093}, {NodeID: 1, Host: "h1", Port: 9091}, {NodeID: 2, Host: "h2", Port: 9092}}
	ts := startServer(t, func(c *Config) { c.Brokers = fleet; c.AutoCreateTopics = false })
	ts.storage.CreateTopic(context.Background(), "spread", 6, nil, false)

	conn := dialRaw(t, ts.addr)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("spread")
	req.Topics = append(req.Topics, rt)
	missing := kmsg.NewMetadataRequestTopic()
	missing.Topic = kmsg.StringPtr("absent")
	req.Topics = append(req.Topics, missing)
	resp := conn.roundTrip(t, req).(*kmsg.MetadataResponse)

	if len(resp.Brokers) != 3 || resp.Brokers[0].NodeID != 1 || resp.Brokers[2].Host != "h3" {
		t.Fatalf("brokers %+v", resp.Brokers)
	}
	if resp.ClusterID == nil || *resp.ClusterID != "iggy-kafka" || resp.ControllerID != 1 {
		t.Fatalf("cluster id %v controller %d", resp.ClusterID, resp.ControllerID)
	}
	ids := []int32{1, 2, 3}
	counts := map[int32]int{}
	want := partitionLeaders("spread", 6, []Broker{{3, "h3", 3}, {1, "h1", 1}, {2, "h2", 2}})
	for _, p := range resp.Topics[0].Partitions {
		if p.Leader != want[p.Partition] || len(p.Replicas) != 1 || p.Replicas[0] != want[p.Partition] {
			t.Fatalf("partition %d leader %d, want %d", p.Partition, p.Leader, want[p.Partition])
		}
		counts[p.Leader]++
	}
	for _, id := range ids {
		if counts[id] != 2 {
			t.Fatalf("leaders not spread evenly: %v", counts)
		}
	}
	if resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("missing topic error %d", resp.Topics[1].ErrorCode)
	}
}

func TestMetadataAutoCreate(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("fresh")
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	req.Version = 12

	ts := startServer(t, nil)
	resp := dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.MetadataResponse)
	if td := resp.Topics[0]; td.ErrorCode != 0 || len(td.Partitions) != 2 {
		t.Fatalf("auto-created topic: %+v", td)
	}
	req.AllowAutoTopicCreation = false
	resp = dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.MetadataResponse)
	if td := resp.Topics[0]; td.ErrorCode != 0 {
		t.Fatalf("existing topic: %+v", td)
	}
	rt.Topic = kmsg.StringPtr("other")
	req.Topics[0] = rt
	resp = dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.MetadataResponse)
	if td := resp.Topics[0]; td.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("request without auto-create: %+v", td)
	}

	ts2 := startServer(t, func(c *Config) { c.AutoCreateTopics = false })
	req.AllowAutoTopicCreation = true
	resp = dialRaw(t, ts2.addr).roundTrip(t, req).(*kmsg.MetadataResponse)
	if td := resp.Topics[0]; td.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("gateway without auto-create: %+v", td)
	}
}

func TestAdminTopicLifecycle(t *testing.T) {
	ts := startServer(t, nil)
	adm := kadm.NewClient(ts.client(t))
	ctx := testCtx(t)
	ret := "1000"
	if r, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": &ret}, "life"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if r, _ := adm.CreateTopic(ctx, 2, 1, nil, "life"); !errors.Is(r.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("second create: %v", r.Err)
	}
	if r, _ := adm.CreateTopic(ctx, 0, 1, nil, "zero"); !errors.Is(r.Err, kerr.InvalidPartitions) {
		t.Fatalf("zero partitions: %v", r.Err)
	}
	if r, _ := adm.ValidateCreateTopics(ctx, 2, 1, nil, "dry"); r["dry"].Err != nil {
		t.Fatalf("validate: %v", r["dry"].Err)
	}
	if _, err := ts.storage.Topic(ctx, "dry", false); err == nil {
		t.Fatal("validate-only created the topic")
	}
	if r, err := adm.CreatePartitions(ctx, 3, "life"); err != nil || r["life"].Err != nil {
		t.Fatalf("create partitions: %v %v", err, r)
	}
	if r, _ := adm.UpdatePartitions(ctx, 1, "life"); !errors.Is(r["life"].Err, kerr.InvalidPartitions) {
		t.Fatalf("shrink: %v", r["life"].Err)
	}
	if info, _ := ts.storage.Topic(ctx, "life", false); info.Partitions != 5 {
		t.Fatalf("partitions %d, want 5", info.Partitions)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "life")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On("life", nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs: %v %v", err, rc.Err)
	}
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" && c.MaybeValue() == "1000" {
			found = true
		}
	}
	if !found {
		t.Fatalf("retention.ms missing from %+v", rc.Configs)
	}
	brcs, err := adm.DescribeBrokerConfigs(ctx, 1)
	if err != nil || len(brcs) != 1 || len(brcs[0].Configs) == 0 {
		t.Fatalf("broker configs: %v %+v", err, brcs)
	}
	if r, err := adm.DeleteTopics(ctx, "life"); err != nil || r["life"].Err != nil {
		t.Fatalf("delete: %v %v", err, r)
	}
	if r, _ := adm.DeleteTopics(ctx, "life"); !errors.Is(r["life"].Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("second delete: %v", r["life"].Err)
	}
}

func TestListOffsetsAndEpochs(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "offs", 1)
	for i := range 5 {
		r := &kgo.Record{Topic: "offs", Value: []byte{byte(i)}, Timestamp: time.UnixMilli(int64(1000 * (i + 1)))}
		if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	adm := kadm.NewClient(cl)
	ctx := testCtx(t)
	end, err := adm.ListEndOffsets(ctx, "offs")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("offs", 0); o.Offset != 5 || o.LeaderEpoch != 0 {
		t.Fatalf("end offset %+v", o)
	}
	start, _ := adm.ListStartOffsets(ctx, "offs")
	if o, _ := start.Lookup("offs", 0); o.Offset != 0 {
		t.Fatalf("start offset %+v", o)
	}
	at, _ := adm.ListOffsetsAfterMilli(ctx, 2500, "offs")
	if o, _ := at.Lookup("offs", 0); o.Offset != 2 {
		t.Fatalf("offset after 2500 ms: %+v", o)
	}

	for _, v := range []int16{0, 4} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = v
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "offs"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = -1
		rp.MaxNumOffsets = 1
		rt.Partitions = append(rt.Partitions, rp, rp)
		req.Topics = append(req.Topics, rt)
		resp := dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.ListOffsetsResponse)
		if p := resp.Topics[0].Partitions; p[0].ErrorCode != kerr.InvalidRequest.Code || p[1].ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("v%d duplicate partitions: %+v", v, p)
		}
		req.Topics[0].Partitions = req.Topics[0].Partitions[:1]
		resp = dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.ListOffsetsResponse)
		p := resp.Topics[0].Partitions[0]
		if v == 0 && (len(p.OldStyleOffsets) != 1 || p.OldStyleOffsets[0] != 5) {
			t.Fatalf("v0 offsets %+v", p)
		}
		if v == 4 && p.Offset != 5 {
			t.Fatalf("v4 offset %+v", p)
		}
	}

	oreq := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oreq.Version = 3
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "offs"
	op := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	op.LeaderEpoch = 0
	ot.Partitions = append(ot.Partitions, op)
	oreq.Topics = append(oreq.Topics, ot)
	oresp, err := oreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := oresp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.EndOffset != 5 || p.LeaderEpoch != 0 {
		t.Fatalf("offset for leader epoch %+v", p)
	}
}

func TestDescribeClusterAndInitProducerID(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	adm := kadm.NewClient(cl)
	details, err := adm.BrokerMetadata(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if details.Cluster != "iggy-kafka" || len(details.Brokers) != 1 || details.Controller != 1 {
		t.Fatalf("cluster %+v", details)
	}
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dresp, err := dreq.RequestWith(testCtx(t), cl)
	if err != nil || dresp.ErrorCode != 0 || len(dresp.Brokers) != 1 || dresp.Brokers[0].NodeID != 1 {
		t.Fatalf("describe cluster %v %+v", err, dresp)
	}

	ireq := kmsg.NewPtrInitProducerIDRequest()
	first, err := ireq.RequestWith(testCtx(t), cl)
	if err != nil || first.ErrorCode != 0 {
		t.Fatalf("init producer id %v %+v", err, first)
	}
	second, _ := ireq.RequestWith(testCtx(t), cl)
	if second.ProducerID == first.ProducerID {
		t.Fatal("two producers got the same id")
	}
	// A transactional id goes to a transaction coordinator, which kgo would look up first; ask
	// directly.
	ireq.TransactionalID = kmsg.StringPtr("txn")
	txn := dialRaw(t, ts.addr).roundTrip(t, ireq).(*kmsg.InitProducerIDResponse)
	if txn.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("transactional init: %d", txn.ErrorCode)
	}
}

func TestApiVersions(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)
	resp := conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
	got := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		got[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	want := map[int16][2]int16{0: {0, 12}, 1: {0, 12}, 2: {0, 9}, 3: {0, 12}, 17: {0, 1}, 18: {0, 4}, 19: {0, 7}, 20: {0, 6}, 21: {0, 2}, 22: {0, 4}, 23: {0, 4}, 29: {0, 3}, 30: {0, 3}, 31: {0, 3}, 32: {0, 4}, 33: {0, 2}, 36: {0, 2}, 37: {0, 3}, 43: {0, 2}, 44: {0, 1}, 45: {0, 1}, 46: {0, 0}, 48: {0, 1}, 49: {0, 1}, 50: {0, 0}, 51: {0, 0}, 60: {0, 1}, 61: {0, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("api versions\n got %v\nwant %v", got, want)
	}
	for _, k := range []int16{10, 11, 24} {
		if _, ok := got[k]; ok {
			t.Fatalf("key %d advertised", k)
		}
	}

	// A version above ours gets a v0 answer with UNSUPPORTED_VERSION and our range (KIP-511).
	frame := rawRequest(18, 99, 7, nil)
	conn.write(t, frame)
	body := conn.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 7 {
		t.Fatalf("correlation %d", corr)
	}
	v0 := kmsg.NewPtrApiVersionsResponse()
	v0.Version = 0
	if err := v0.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if v0.ErrorCode != kerr.UnsupportedVersion.Code || len(v0.ApiKeys) != 1 || v0.ApiKeys[0].MaxVersion != 4 {
		t.Fatalf("KIP-511 answer %+v", v0)
	}
}

func TestUnsupportedKeysAnswerUnsupportedVersion(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)
	// FindCoordinator v1 (groups are not served yet): answered, not dropped.
	conn.write(t, rawRequest(10, 1, 11, []byte{0, 1, 'g', 0}))
	body := conn.readFrame(t)
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.Version = 1
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("error code %d", resp.ErrorCode)
	}
	// Produce v13 is above our range.
	conn.write(t, rawRequest(0, 13, 12, nil))
	body = conn.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 12 {
		t.Fatalf("correlation %d", corr)
	}
	// And the connection still works.
	conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
}

func TestBadFramesCloseOnlyTheirConnection(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxRequestBytes = 1 << 20 })
	good := dialRaw(t, ts.addr)
	good.roundTrip(t, kmsg.NewPtrApiVersionsRequest())

	for name, frame := range map[string][]byte{
		"oversized":   binary.BigEndian.AppendUint32(nil, 1<<20+1),
		"negative":    binary.BigEndian.AppendUint32(nil, 0xffffffff),
		"short":       append(binary.BigEndian.AppendUint32(nil, 3), 1, 2, 3),
		"bad client":  append(binary.BigEndian.AppendUint32(nil, 10), 0, 3, 0, 1, 0, 0, 0, 1, 0x7f, 0),
		"bad body":    rawRequest(3, 1, 1, []byte{0x7f, 0xff, 0xff, 0xff}),
		"bad tags":    rawRequest(3, 9, 1, []byte{0xff, 0xff, 0xff, 0xff, 0xff}),
		"bad produce": rawRequest(0, 9, 1, []byte{0, 0, 0, 0}),
	} {
		t.Run(name, func(t *testing.T) {
			bad := dialRaw(t, ts.addr)
			bad.write(t, frame)
			bad.expectClosed(t)
			good.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
		})
	}
}

func TestPipelinedAnswersKeepRequestOrder(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.CreateTopic(context.Background(), "pipe", 1, nil, false)
	conn := dialRaw(t, ts.addr)

	// A long-polling fetch first, then quick requests: the quick ones finish first but must be
	// answered after the fetch.
	fetch := longPoll("pipe", 400)

	var frames []byte
	frames = append(frames, encodeRequest(fetch, 100)...)
	for i := range 20 {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = int16(i % 13)
		frames = append(frames, encodeRequest(req, int32(101+i))...)
	}
	conn.write(t, frames)
	for i := range 21 {
		body := conn.readFrame(t)
		if corr := int32(binary.BigEndian.Uint32(body)); corr != int32(100+i) {
			t.Fatalf("answer %d has correlation %d", i, corr)
		}
	}
}

func TestProducesToOnePartitionStayOrdered(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.CreateTopic(context.Background(), "seq", 2, nil, false)
	const n = 30
	// Request 0 is held in the storage until all n requests have been read and handed to their
	// goroutines (a hook has seen each): without ordering, the later ones would be written first.
	allStarted := make(chan struct{})
	started := 0
	ts.s.ControlKey(produceKey, func(r *Controlled) (kmsg.Response, error, bool) {
		r.Keep()
		if started++; started == n {
			close(allStarted)
		}
		return nil, nil, false
	})
	ts.storage.onProduce(func(topic string, partition int32, records []byte) error {
		if binary.BigEndian.Uint64(records[27:]) == 0 {
			<-allStarted
		}
		return nil
	})
	conn := dialRaw(t, ts.addr)
	var frames []byte
	for i := range n {
		req := kmsg.NewPtrProduceRequest()
		req.Version = 9
		req.Acks = 1
		req.TimeoutMillis = 1000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "seq"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = 0
		rp.Records = testBatch(int32(i))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		frames = append(frames, encodeRequest(req, int32(i))...)
	}
	conn.write(t, frames)
	for i := range n {
		body := conn.readFrame(t)
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		if err := resp.ReadFrom(body[5:]); err != nil {
			t.Fatal(err)
		}
		if off := resp.Topics[0].Partitions[0].BaseOffset; off != int64(i) {
			t.Fatalf("request %d written at offset %d", i, off)
		}
	}
	// The stored batches carry their request number as the first timestamp; they must be in order.
	res, _ := ts.storage.Fetch(context.Background(), "seq", 0, 0, 1<<20, 11)
	var got []int
	for b := res.Records; len(b) > 0; {
		length := int(binary.BigEndian.Uint32(b[8:]))
		got = append(got, int(binary.BigEndian.Uint64(b[27:])))
		b = b[12+length:]
	}
	if !sort.IntsAreSorted(got) || len(got) != n {
		t.Fatalf("stored order %v", got)
	}
}

// testBatch is a one-record magic-2 batch whose first timestamp is ts (CRC not filled: the fake
// storage does not check it).
func testBatch(ts int32) []byte {
	rec := []byte{0x10, 0, 0, 0, 0, 2, 'x', 0} // length 8, attrs, ts delta, offset delta, key -1, value "x", headers 0
	rec = []byte{byte(len(rec[1:]) << 1)}
	rec = append(rec, 0, 0, 0, 1, 0, 2, 'x', 0)
	rec[0] = byte((len(rec) - 1) << 1)
	b := make([]byte, 61, 61+len(rec))
	binary.BigEndian.PutUint32(b[8:], uint32(49+len(rec)))
	b[16] = 2
	binary.BigEndian.PutUint64(b[27:], uint64(ts))
	binary.BigEndian.PutUint64(b[35:], uint64(ts))
	binary.BigEndian.PutUint64(b[43:], 0xffffffffffffffff)
	binary.BigEndian.PutUint16(b[51:], 0xffff)
	binary.BigEndian.PutUint32(b[53:], 0xffffffff)
	binary.BigEndian.PutUint32(b[57:], 1)
	return append(b, rec...)
}

func TestSASLPlain(t *testing.T) {
	users := map[string]string{"alice": "secret"}
	var logins sync.Map
	ts := startServer(t, func(c *Config) {
		c.SASL = true
		c.Authenticate = func(ctx context.Context, user, pass string) (Storage, error) {
			if users[user] != pass || pass == "" {
				return nil, errors.New("invalid credentials")
			}
			logins.Store(user, true)
			return c.Storage, nil
		}
	})
	good := ts.client(t, kgo.SASL(plain.Auth{User: "alice", Pass: "secret"}.AsMechanism()))
	createTopic(t, good, "secure", 1)
	if err := good.ProduceSync(testCtx(t), &kgo.Record{Topic: "secure", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if _, ok := logins.Load("alice"); !ok {
		t.Fatal("Authenticate was not called")
	}

	bad := ts.client(t, kgo.SASL(plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism()), kgo.RequestRetries(0))
	err := bad.Ping(testCtx(t))
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("bad password: %v", err)
	}

	// Without authenticating, anything but ApiVersions and the SASL requests closes the
	// connection.
	raw := dialRaw(t, ts.addr)
	raw.roundTrip(t, kmsg.NewPtrApiVersionsRequest())
	raw.write(t, encodeRequest(kmsg.NewPtrMetadataRequest(), 5))
	raw.expectClosed(t)

	// A bad password on a raw connection gets the error answer, then the connection closes.
	raw = dialRaw(t, ts.addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 1
	hs.Mechanism = "PLAIN"
	if r := raw.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake %d", r.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 1
	auth.SASLAuthBytes = []byte("\x00alice\x00nope")
	if r := raw.roundTrip(t, auth).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != kerr.SaslAuthenticationFailed.Code {
		t.Fatalf("authenticate %d", r.ErrorCode)
	}
	raw.expectClosed(t)

	// SaslHandshake v0: the token follows as a bare frame.
	raw = dialRaw(t, ts.addr)
	hs.Version = 0
	raw.roundTrip(t, hs)
	token := []byte("\x00alice\x00secret")
	raw.write(t, append(binary.BigEndian.AppendUint32(nil, uint32(len(token))), token...))
	if body := raw.readFrame(t); len(body) != 0 {
		t.Fatalf("v0 token answer % x", body)
	}
	raw.roundTrip(t, kmsg.NewPtrMetadataRequest())

	// Other mechanisms are refused with the list.
	raw = dialRaw(t, ts.addr)
	hs.Version = 1
	hs.Mechanism = "SCRAM-SHA-256"
	if r := raw.roundTrip(t, hs).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || r.SupportedMechanisms[0] != "PLAIN" {
		t.Fatalf("scram handshake %+v", r)
	}
}

func TestShutdownFinishesInFlightRequests(t *testing.T) {
	b := newMemStorage()
	b.CreateTopic(context.Background(), "drain", 1, nil, false)
	s, err := NewServer(Config{NodeID: 1, Storage: b})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()

	parked := b.parkedOn("drain")
	conn := dialRaw(t, ln.Addr().String())
	fetch := longPoll("drain", 10000)
	conn.write(t, encodeRequest(fetch, 1))
	// Shut down once the fetch is parked in its long poll: it must answer at once, not after
	// its 10 s.
	select {
	case <-parked:
	case <-time.After(5 * time.Second):
		t.Fatal("the fetch never parked")
	}
	start := time.Now()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(ctx) }()
	body := conn.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 1 {
		t.Fatalf("correlation %d", corr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the parked fetch answered %v after shutdown began", d)
	}
	conn.expectClosed(t)
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after shutdown")
	}
}

func TestObserverCounts(t *testing.T) {
	obs := &countingObserver{}
	ts := startServer(t, func(c *Config) { c.Observer = obs })
	cl := ts.client(t)
	createTopic(t, cl, "obs", 1)
	if err := cl.ProduceSync(testCtx(t), kgo.StringRecord("a"), kgo.StringRecord("b")).FirstErr(); err == nil {
		t.Fatal("produce without a topic succeeded")
	}
	recs := []*kgo.Record{{Topic: "obs", Value: []byte("a")}, {Topic: "obs", Value: []byte("b")}}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.opened < 1 || obs.produced != 2 || obs.requests[produceKey] == 0 || obs.bytesIn == 0 || obs.bytesOut == 0 {
		t.Fatalf("observer %+v", obs)
	}
}

type countingObserver struct {
	mu                sync.Mutex
	opened, closed    int
	requests          map[int16]int
	bytesIn, bytesOut int
	produced, fetched int
	waitsCapped       int
}

func (o *countingObserver) ConnectionOpened() { o.mu.Lock(); o.opened++; o.mu.Unlock() }
func (o *countingObserver) ConnectionClosed() { o.mu.Lock(); o.closed++; o.mu.Unlock() }
func (o *countingObserver) Request(key, code int16, in, out int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.requests == nil {
		o.requests = map[int16]int{}
	}
	o.requests[key]++
	o.bytesIn += in
	o.bytesOut += out
}
func (o *countingObserver) RecordsProduced(n int)                         { o.mu.Lock(); o.produced += n; o.mu.Unlock() }
func (o *countingObserver) RecordsFetched(n int)                          { o.mu.Lock(); o.fetched += n; o.mu.Unlock() }
func (o *countingObserver) FetchWaitCapped()                              { o.mu.Lock(); o.waitsCapped++; o.mu.Unlock() }
func (o *countingObserver) ClientTraffic(string, string, int16, int, int) {}
func (o *countingObserver) ClientThrottled(string, string, time.Duration) {}

// rawConn speaks the Kafka framing by hand, for what a client library would not send.
type rawConn struct {
	net.Conn
	corr int32
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, corr: 1000}
}

func (c *rawConn) write(t testing.TB, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

func (c *rawConn) readFrame(t testing.TB) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("reading answer: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("reading answer: %v", err)
	}
	return body
}

func (c *rawConn) expectClosed(t testing.TB) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	for {
		_, err := c.Read(one[:])
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("connection still open")
		}
		return
	}
}

func (c *rawConn) roundTrip(t testing.TB, req kmsg.Request) kmsg.Response {
	t.Helper()
	c.corr++
	c.write(t, encodeRequest(req, c.corr))
	body := c.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != c.corr {
		t.Fatalf("correlation %d, want %d", corr, c.corr)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body = body[4:]
	if resp.IsFlexible() && req.Key() != apiVersionsKey {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decoding answer: %v", err)
	}
	return resp
}

func encodeRequest(req kmsg.Request, corr int32) []byte {
	var body []byte
	if req.IsFlexible() {
		body = append(body, 0)
	}
	body = req.AppendTo(body)
	return rawRequest(req.Key(), req.GetVersion(), corr, body)
}

// rawRequest frames a request with client id "t"; body includes any header tag section.
func rawRequest(key, version int16, corr int32, body []byte) []byte {
	b := make([]byte, 4, 16+len(body))
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = append(b, 0, 1, 't')
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func TestConsumerOffsetsIsReservedAndInternal(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordRetries(0), kgo.DisableIdempotentWrite())
	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	td, ok := md.Topics[consumerOffsetsTopic]
	if !ok || !td.IsInternal || len(td.Partitions) != consumerOffsetsPartitions {
		t.Fatalf("listing all topics: %+v", td)
	}
	if r, _ := adm.CreateTopic(testCtx(t), 1, 1, nil, consumerOffsetsTopic); !errors.Is(r.Err, kerr.InvalidTopicException) {
		t.Fatalf("create: %v", r.Err)
	}
	if r, _ := adm.DeleteTopics(testCtx(t), consumerOffsetsTopic); !errors.Is(r[consumerOffsetsTopic].Err, kerr.InvalidTopicException) {
		t.Fatalf("delete: %v", r[consumerOffsetsTopic].Err)
	}
	err = cl.ProduceSync(testCtx(t), &kgo.Record{Topic: consumerOffsetsTopic, Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.InvalidTopicException) {
		t.Fatalf("produce: %v", err)
	}
	if _, err := ts.storage.Topic(context.Background(), consumerOffsetsTopic, false); err == nil {
		t.Fatal("the reserved topic reached the storage")
	}
}

func TestFinishedAnswersAreNotHeldBehindALongPoll(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.CreateTopic(context.Background(), "held", 1, nil, false)
	conn := dialRaw(t, ts.addr)

	fetch := longPoll("held", 5000)

	// Metadata first, then the long poll: the metadata answer must arrive long before the poll
	// ends, even though another request is still in flight behind it.
	var frames []byte
	frames = append(frames, encodeRequest(kmsg.NewPtrMetadataRequest(), 1)...)
	frames = append(frames, encodeRequest(fetch, 2)...)
	conn.write(t, frames)
	start := time.Now()
	body := conn.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 1 {
		t.Fatalf("correlation %d", corr)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Fatalf("metadata answer held back %v behind the long poll", d)
	}
}

// longPoll is a Fetch v11 of partition 0 of topic that waits up to waitMs for one byte.
func longPoll(topic string, waitMs int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxWaitMillis = waitMs
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	return req
}

// TestProduceTimeoutBoundsTheWrite: a write the storage does not answer is given up at the
// request's TimeoutMillis with REQUEST_TIMED_OUT, its context ended, so it cannot land after
// the client sent it again elsewhere.
func TestProduceTimeoutBoundsTheWrite(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "slow", 1)
	ended := make(chan error, 1)
	ts.storage.onProduceCtx(func(ctx context.Context) error {
		<-ctx.Done()
		ended <- ctx.Err()
		return ctx.Err()
	})
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 300
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "slow"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = testBatch(0)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sent := time.Now()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("no answer to a produce of 300 ms timeout: %v", err)
	}
	took := time.Since(sent)
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != kerr.RequestTimedOut.Code {
		t.Fatalf("answered %v, want REQUEST_TIMED_OUT", kerr.ErrorForCode(code))
	}
	if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the write's context ended with %v, want its deadline", err)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Fatalf("answered after %v, want about 300 ms", took)
	}
}
