package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The quota tests run the gateway with quota windows of 50 ms (11 of them, as Kafka's 11 x 1 s
// scaled down twenty times): a client over its quota then sends in bursts at most 0.55 s
// apart, so a rate measured over 4 s is within one burst (an eighth) of the quota. The
// tolerance, 25%, is twice that.
const (
	quotaWindow    = 50 * time.Millisecond
	quotaRate      = 256 << 10 // bytes per second
	quotaTolerance = 0.25
	quotaRun       = 6 * time.Second
	// The rate is measured from measureFrom to measureTo after the client starts: the first
	// burst (10 windows of the quota at once, as Kafka allows a new client) is left out.
	measureFrom = 1500 * time.Millisecond
	measureTo   = 5500 * time.Millisecond
)

func quotaGateway(t *testing.T, window time.Duration) *Gateway {
	return startGateway(t, func(c *Config) {
		c.QuotaWindowSize, c.QuotaWindows, c.QuotaRefresh = window, 11, 100*time.Millisecond
	})
}

// throttles counts the throttles a kgo client was told (HookBrokerThrottle).
type throttles struct {
	n     atomic.Int64
	total atomic.Int64 // milliseconds
}

func (h *throttles) OnBrokerThrottle(_ kgo.BrokerMetadata, d time.Duration, _ bool) {
	if d > 0 {
		h.n.Add(1)
		h.total.Add(d.Milliseconds())
	}
}

// flow is what a client moved: bytes and when, from its start.
type flow struct {
	mu    sync.Mutex
	start time.Time
	at    []time.Duration
	n     []int
}

func newFlow() *flow { return &flow{start: time.Now()} }

func (f *flow) add(n int) {
	f.mu.Lock()
	f.at = append(f.at, time.Since(f.start))
	f.n = append(f.n, n)
	f.mu.Unlock()
}

// rate is the bytes per second moved between from and to after the start.
func (f *flow) rate(from, to time.Duration) float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := 0
	for i, at := range f.at {
		if at >= from && at < to {
			sum += f.n[i]
		}
	}
	return float64(sum) / (to - from).Seconds()
}

// produceFlow produces 2 KiB records from cl to topic for d and returns the acknowledged bytes.
func produceFlow(t *testing.T, cl *kgo.Client, topic string, d time.Duration) *flow {
	t.Helper()
	value := randomValue(2048)
	f := newFlow()
	ctx, cancel := context.WithTimeout(testCtx(t), d)
	defer cancel()
	var failed atomic.Value
	for ctx.Err() == nil {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(r *kgo.Record, err error) {
			// A record still buffered when the flow's time is up fails with the flow's
			// context; only other errors are the gateway's.
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					failed.Store(err)
				}
				return
			}
			f.add(len(r.Value))
		})
	}
	// Called from the tests' own goroutines too: an error is reported, never Fatal there.
	if err, _ := failed.Load().(error); err != nil {
		t.Errorf("produce: %v", err)
	}
	return f
}

// randomValue is n random bytes. The quotas count the bytes on the wire, so the producers of
// the tests do not compress either.
func randomValue(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func within(got, want, tolerance float64) bool {
	return got >= want*(1-tolerance) && got <= want*(1+tolerance)
}

func setClientQuota(t *testing.T, cl *kgo.Client, clientID, key string, v float64) {
	t.Helper()
	if err := alterQuota(t, cl, map[string]*string{"client-id": kmsg.StringPtr(clientID)}, quotaOp{key: key, value: v}); err != nil {
		t.Fatalf("set %s=%v for client %s: %v", key, v, clientID, err)
	}
}

// Two producers on one gateway, one with a producer_byte_rate quota: its acknowledged rate,
// measured over 4 s once its first burst is past, is the quota within 25%, and it was told to
// throttle; the other, on the same gateway at the same time, is never throttled and moves at
// least four times that quota (what it moves beside the first depends on the machine's load, so
// it is not compared with its rate alone). The gateway's metrics show both by client id.
func TestProducerByteRateHeld(t *testing.T) {
	g := quotaGateway(t, quotaWindow)
	adm := kadm.NewClient(client(t, g))
	for _, topic := range []string{"quota-slow", "quota-fast"} {
		if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	setClientQuota(t, client(t, g), "slow", "producer_byte_rate", quotaRate)
	producer := func(id string, h *throttles) *kgo.Client {
		return client(t, g, kgo.ClientID(id), kgo.WithHooks(h), kgo.ProducerBatchMaxBytes(16<<10), kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.MaxBufferedRecords(64), kgo.ProducerLinger(0))
	}
	var slowT, fastT throttles
	slow, fast := producer("slow", &slowT), producer("fast", &fastT)
	var slowFlow, fastFlow *flow
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); slowFlow = produceFlow(t, slow, "quota-slow", quotaRun) }()
	go func() { defer wg.Done(); fastFlow = produceFlow(t, fast, "quota-fast", quotaRun) }()
	wg.Wait()
	slowRate, fastRate := slowFlow.rate(measureFrom, measureTo), fastFlow.rate(measureFrom, measureTo)
	t.Logf("quota %d B/s: slow %.0f B/s (%d throttles, %d ms), fast %.0f B/s (%d throttles)",
		quotaRate, slowRate, slowT.n.Load(), slowT.total.Load(), fastRate, fastT.n.Load())
	if !within(slowRate, quotaRate, quotaTolerance) {
		t.Errorf("the producer under a %d B/s quota moved %.0f B/s", quotaRate, slowRate)
	}
	if slowT.n.Load() == 0 {
		t.Error("the producer over its quota was never told throttle_time_ms")
	}
	if n := fastT.n.Load(); n != 0 {
		t.Errorf("the producer without a quota was throttled %d times", n)
	}
	if fastRate < 4*quotaRate {
		t.Errorf("the producer without a quota moved %.0f B/s beside the other", fastRate)
	}
	body := scrapeText(t, g)
	for _, want := range []string{
		`iggy_kafka_client_throttle_seconds_total{client_id="slow",user="ANONYMOUS"}`,
		`iggy_kafka_client_bytes_total{client_id="fast",quota="producer_byte_rate",user="ANONYMOUS"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `iggy_kafka_client_throttle_seconds_total{client_id="fast"`) {
		t.Error("/metrics shows throttle time for the client without a quota")
	}
}

func scrapeText(t *testing.T, g *Gateway) string {
	t.Helper()
	resp, err := http.Get("http://" + g.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A consumer with a consumer_byte_rate quota reads near the quota (at 0.6-1.1 of it) and is
// told to throttle; a fetch over the quota answers no records and the throttle, as Kafka answers it,
// while the same fetch by a client without a quota gets the records.
func TestConsumerByteRateHeld(t *testing.T) {
	g := quotaGateway(t, 2*quotaWindow)
	loader := client(t, g, kgo.ProducerBatchMaxBytes(16<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
	adm := kadm.NewClient(loader)
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, "quota-read"); err != nil {
		t.Fatal(err)
	}
	value := randomValue(2048)
	var recs []*kgo.Record
	for range 1600 { // 3.2 MB, more than 6 s at the quota
		recs = append(recs, &kgo.Record{Topic: "quota-read", Value: value})
	}
	if err := loader.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	setClientQuota(t, loader, "reader", "consumer_byte_rate", quotaRate)
	setClientQuota(t, loader, "starved", "consumer_byte_rate", 1000)

	var readerT throttles
	// Fetches of 16 KiB, with windows of 100 ms: the rate's window (1 s of the quota) then
	// holds sixteen of them. A fetch that does not fit is throttled and answers nothing, so
	// fetches near the size of the window would read about half the quota, a step of its own.
	reader := client(t, g, kgo.ClientID("reader"), kgo.WithHooks(&readerT), kgo.ConsumeTopics("quota-read"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(16<<10), kgo.FetchMaxPartitionBytes(16<<10))
	f := newFlow()
	ctx, cancel := context.WithTimeout(testCtx(t), quotaRun)
	for ctx.Err() == nil {
		fs := reader.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { f.add(len(r.Value)) })
	}
	cancel()
	rate := f.rate(measureFrom, measureTo)
	t.Logf("quota %d B/s: reader %.0f B/s (%d throttles, %d ms)", quotaRate, rate, readerT.n.Load(), readerT.total.Load())
	// Kafka's rule for fetches reads under the quota: a fetch that does not fit is answered
	// empty and taken back, and the client waits until the whole fetch fits again, so the
	// rate's window is seldom full. With these fetches, a tenth of the window, the rule on a
	// fake clock (a client that fetches again as soon as it may) reads 0.78-0.80 of the quota
	// whatever the round trip; the bound is 0.6-1.1.
	if rate < 0.6*quotaRate || rate > 1.1*quotaRate {
		t.Errorf("the consumer under a %d B/s quota read %.0f B/s", quotaRate, rate)
	}
	if readerT.n.Load() == 0 {
		t.Error("the consumer over its quota was never told throttle_time_ms")
	}

	// One fetch of a batch (16 KiB) is over 1,000 B/s at once.
	fetch := func(clientID string) *kmsg.FetchResponse {
		cl := client(t, g, kgo.ClientID(clientID))
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxWaitMillis, req.MaxBytes, req.ReplicaID = 12, 0, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "quota-read"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := fetch("starved"); resp.ThrottleMillis <= 0 || len(resp.Topics) != 0 {
		t.Errorf("a fetch over its quota: throttle %d ms, %d topics; want a throttle and no topics", resp.ThrottleMillis, len(resp.Topics))
	}
	if resp := fetch("unlimited"); resp.ThrottleMillis != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Errorf("a fetch without a quota: throttle %d ms, %d topics; want records", resp.ThrottleMillis, len(resp.Topics))
	}
}
