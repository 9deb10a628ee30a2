package kafka

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// A producer over its producer_byte_rate is muted for the throttle on the server's clock, on
// the gateway's side, whether or not the client waits: with Produce v9 (KIP-219) the answer
// comes at once with throttle_time_ms and the next request is not read until the throttle has
// passed; with Produce v5 the answer itself is held for the throttle.
func TestThrottledConnectionMuted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int16
	}{{"client throttles itself (v9)", 9}, {"older client (v5)", 5}} {
		t.Run(tc.name, func(t *testing.T) {
			fc, rc := overQuota(t)
			preq := produceOne(tc.version, 0)
			md := kmsg.NewPtrMetadataRequest()
			md.Version = 9

			if tc.version >= 6 {
				presp := rc.roundTrip(t, preq).(*kmsg.ProduceResponse)
				d := time.Duration(presp.ThrottleMillis) * time.Millisecond
				if d <= time.Second || presp.Topics[0].Partitions[0].ErrorCode != 0 {
					t.Fatalf("produce over the quota: throttle %v, error %d", d, presp.Topics[0].Partitions[0].ErrorCode)
				}
				rc.corr++
				rc.write(t, encodeRequest(md, rc.corr))
				expectSilent(t, rc)
				fc.Advance(d - time.Millisecond)
				expectSilent(t, rc)
				fc.Advance(time.Millisecond)
				rc.readFrame(t) // the Metadata answer, once the throttle has passed
				return
			}
			rc.corr++
			rc.write(t, encodeRequest(preq, rc.corr))
			expectSilent(t, rc)
			fc.Advance(time.Second)
			expectSilent(t, rc)
			fc.Advance(time.Hour)
			body := rc.readFrame(t)
			presp := kmsg.NewPtrProduceResponse()
			presp.Version = tc.version
			if err := presp.ReadFrom(body[4:]); err != nil {
				t.Fatal(err)
			}
			if presp.ThrottleMillis <= 1000 {
				t.Fatalf("held answer: throttle %d ms, want over 1000", presp.ThrottleMillis)
			}
		})
	}
}

// A client under a quota that pipelines (writes its next request before the answer to the
// one before) has the next one read only after the first is recorded: the throttle the first
// calls for holds the second, as Kafka reads one request at a time. Read ahead, the second
// would be answered at once, and a pipelining client would move more than its quota.
func TestThrottledPipelineReadOneAtATime(t *testing.T) {
	fc, rc := overQuota(t)
	produce := func(ts int32) []byte {
		rc.corr++
		return encodeRequest(produceOne(9, ts), rc.corr)
	}
	// Both requests in one write: the server has the second before it answers the first.
	rc.write(t, append(produce(0), produce(1)...))
	first := rc.readFrame(t)
	presp := kmsg.NewPtrProduceResponse()
	presp.Version = 9
	if err := presp.ReadFrom(first[5:]); err != nil {
		t.Fatal(err)
	}
	d := time.Duration(presp.ThrottleMillis) * time.Millisecond
	if d <= time.Second || presp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("first produce over the quota: throttle %v, error %d", d, presp.Topics[0].Partitions[0].ErrorCode)
	}
	expectSilent(t, rc)
	fc.Advance(d - time.Millisecond)
	expectSilent(t, rc)
	fc.Advance(time.Millisecond)
	rc.readFrame(t) // the second produce's answer, once the first's throttle has passed
}

// overQuota starts a server on a fake clock whose quota allows client id "t" (rawRequest's) one
// byte a second, so that any produce is over it, with a topic "q" of one partition, and
// returns the clock and a raw connection to it.
func overQuota(t *testing.T) (*clock.Fake, *rawConn) {
	t.Helper()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	q := quota.New(quota.Config{Clock: fc})
	q.Set(quota.Table{quota.ProducerByteRate: {quota.Entity{ClientID: quota.Name{Kind: quota.Named, Value: "t"}}: 1}})
	ts := startServer(t, func(c *Config) { c.Clock, c.Quotas = fc, q })
	createTopic(t, ts.client(t), "q", 1)
	return fc, dialRaw(t, ts.addr)
}

// produceOne is a Produce of version v (acks all) of testBatch(batchTS) to partition 0 of "q".
func produceOne(v int16, batchTS int32) *kmsg.ProduceRequest {
	preq := kmsg.NewPtrProduceRequest()
	preq.Version, preq.Acks, preq.TimeoutMillis = v, -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "q"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = testBatch(batchTS)
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	return preq
}

// expectSilent checks that nothing arrives on rc for 300 ms of wall time: the server holds
// what it holds on its fake clock, which does not move meanwhile.
func expectSilent(t *testing.T, rc *rawConn) {
	t.Helper()
	rc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var one [1]byte
	n, err := rc.Read(one[:])
	var ne net.Error
	if n > 0 || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("an answer arrived while the connection was throttled (%d bytes, %v)", n, err)
	}
}

// request_percentage counts the handler's time on the server's clock, for any request with a
// throttle field (Metadata here): 2 s of handling against 10% over 10 s windows is 20%, and
// the throttle is capped at one window (1 s), as Kafka caps the request quota's. ApiVersions is
// exempt.
func TestRequestPercentageThrottles(t *testing.T) {
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	q := quota.New(quota.Config{Clock: fc})
	q.Set(quota.Table{quota.RequestPercentage: {quota.Entity{ClientID: quota.Name{Kind: quota.Default}}: 10}})
	ts := startServer(t, func(c *Config) { c.Clock, c.Quotas = fc, q })
	slow := func(key int16) {
		ts.s.ControlKey(key, func(r *Controlled) (kmsg.Response, error, bool) {
			fc.Advance(2 * time.Second) // the handler's time, on the server's clock
			return nil, nil, false
		})
	}
	rc := dialRaw(t, ts.addr)
	slow(apiVersionsKey)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "t", "1"
	if resp := rc.roundTrip(t, av).(*kmsg.ApiVersionsResponse); resp.ThrottleMillis != 0 {
		t.Fatalf("ApiVersions throttled %d ms", resp.ThrottleMillis)
	}
	slow(metadataKey)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	if resp := rc.roundTrip(t, md).(*kmsg.MetadataResponse); resp.ThrottleMillis != 1000 {
		t.Fatalf("Metadata after 2 s of handling under a 10%% request quota: throttle %d ms, want the 1000 ms cap", resp.ThrottleMillis)
	}
}
