package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestControlSeesChangesAnswersDropsCloses(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)

	// See, and keep seeing: an observer with Keep counts every Metadata.
	var mu sync.Mutex
	seen := 0
	ts.s.ControlKey(metadataKey, func(r *Controlled) (kmsg.Response, error, bool) {
		mu.Lock()
		seen++
		mu.Unlock()
		if r.ClientID() != "t" || r.Remote() == nil {
			t.Errorf("client id %q, remote %v", r.ClientID(), r.Remote())
		}
		r.Keep()
		return nil, nil, false
	})
	// Answer one: the next Metadata gets the hook's answer, the one after the handler's.
	ts.s.ControlKey(metadataKey, func(r *Controlled) (kmsg.Response, error, bool) {
		resp := r.Request().ResponseKind().(*kmsg.MetadataResponse)
		id := "from the hook"
		resp.ClusterID = &id
		return resp, nil, true
	})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	if got := conn.roundTrip(t, md).(*kmsg.MetadataResponse); got.ClusterID == nil || *got.ClusterID != "from the hook" {
		t.Fatalf("first metadata cluster id %v", got.ClusterID)
	}
	if got := conn.roundTrip(t, md).(*kmsg.MetadataResponse); got.ClusterID == nil || *got.ClusterID != "iggy-kafka" {
		t.Fatalf("second metadata cluster id %v", got.ClusterID)
	}
	mu.Lock()
	if seen != 2 {
		t.Fatalf("observer saw %d metadata requests, want 2", seen)
	}
	mu.Unlock()

	// Change: the topic is created with the partition count the hook wrote in.
	ts.s.ControlKey(createTopicsKey, func(r *Controlled) (kmsg.Response, error, bool) {
		r.Request().(*kmsg.CreateTopicsRequest).Topics[0].NumPartitions = 7
		return nil, nil, false
	})
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 5
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "changed", 1, 1
	ct.Topics = append(ct.Topics, rt)
	conn.roundTrip(t, ct)
	if ti, err := ts.storage.Topic(context.Background(), "changed", false); err != nil || ti.Partitions != 7 {
		t.Fatalf("created topic %+v, %v; want 7 partitions", ti, err)
	}

	// Drop: no answer at all, and the connection goes on with the next request.
	ts.s.ControlKey(listOffsetsKey, func(r *Controlled) (kmsg.Response, error, bool) { return nil, nil, true })
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 4
	conn.write(t, encodeRequest(lo, 500))
	av := kmsg.NewPtrApiVersionsRequest()
	conn.write(t, encodeRequest(av, 501))
	if corr := int32(binary.BigEndian.Uint32(conn.readFrame(t))); corr != 501 {
		t.Fatalf("after the dropped request, answer %d, want 501", corr)
	}
	// The hook handled one request and is gone: the next ListOffsets is answered.
	conn.roundTrip(t, lo)

	// Drop wins over Keep, also for a hook that lets the request through.
	var calls atomic.Int32
	ts.s.ControlKey(apiVersionsKey, func(r *Controlled) (kmsg.Response, error, bool) {
		calls.Add(1)
		r.Keep()
		r.Drop()
		return nil, nil, false
	})
	conn.roundTrip(t, av)
	conn.roundTrip(t, av)
	if n := calls.Load(); n != 1 {
		t.Fatalf("dropped hook ran %d times", n)
	}

	// Close: an error closes the connection, after the answers before it.
	ts.s.ControlKey(describeClusterKey, func(r *Controlled) (kmsg.Response, error, bool) {
		return nil, errors.New("closed by the hook"), true
	})
	dc := kmsg.NewPtrDescribeClusterRequest()
	conn.write(t, append(encodeRequest(md, 600), encodeRequest(dc, 601)...))
	if corr := int32(binary.BigEndian.Uint32(conn.readFrame(t))); corr != 600 {
		t.Fatalf("answer %d before the close, want 600", corr)
	}
	conn.expectClosed(t)
	dialRaw(t, ts.addr).roundTrip(t, dc)
}

// TestControlSleepHoldsOnlyItsRequest parks a Fetch in a hook and checks that other requests, on
// another connection and on the same one, and the hooks of other keys keep running.
func TestControlSleepHoldsOnlyItsRequest(t *testing.T) {
	ts := startServer(t, nil)
	ts.storage.CreateTopic(context.Background(), "held", 1, nil, false)
	release := make(chan struct{})
	sleeping := make(chan struct{})
	woke := make(chan bool, 1)
	ts.s.ControlKey(fetchKey, func(r *Controlled) (kmsg.Response, error, bool) {
		close(sleeping)
		woke <- r.Sleep(func() { <-release })
		return nil, nil, false
	})
	var metadataHooked atomic.Int32
	ts.s.ControlKey(metadataKey, func(r *Controlled) (kmsg.Response, error, bool) {
		metadataHooked.Add(1)
		r.Keep()
		return nil, nil, false
	})

	conn := dialRaw(t, ts.addr)
	conn.write(t, encodeRequest(longPoll("held", 0), 1))
	<-sleeping
	other := dialRaw(t, ts.addr)
	other.roundTrip(t, kmsg.NewPtrMetadataRequest())
	if n := metadataHooked.Load(); n != 1 {
		t.Fatalf("metadata hook ran %d times while a fetch slept", n)
	}
	if _, err := ts.storage.Produce(context.Background(), "held", 0, testBatch(9)); err != nil {
		t.Fatal(err)
	}
	close(release)
	body := conn.readFrame(t)
	if corr := int32(binary.BigEndian.Uint32(body)); corr != 1 {
		t.Fatalf("correlation %d", corr)
	}
	if !<-woke {
		t.Fatal("Sleep reported it did not wake")
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = 11
	if err := resp.ReadFrom(body[4:]); err != nil {
		t.Fatal(err)
	}
	// The fetch ran after the wake-up, so it sees the record produced while it slept.
	if p := resp.Topics[0].Partitions[0]; p.HighWatermark != 1 || len(p.RecordBatches) == 0 {
		t.Fatalf("fetch after the sleep: high watermark %d, %d bytes", p.HighWatermark, len(p.RecordBatches))
	}
}

// TestProduceRetriedAfterNotLeader answers the first Produce with NOT_LEADER_OR_FOLLOWER, which
// the gateway itself never sends: the client must refresh its metadata, retry, and land the
// record once, at offset 0.
func TestProduceRetriedAfterNotLeader(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.MetadataMinAge(10*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return time.Millisecond }))
	createTopic(t, cl, "fenced", 1)

	var mu sync.Mutex
	var keys []int16
	// Observers first: the hooks of a key run in the order they were added.
	observe := func(r *Controlled) (kmsg.Response, error, bool) {
		mu.Lock()
		keys = append(keys, r.Request().Key())
		mu.Unlock()
		r.Keep()
		return nil, nil, false
	}
	ts.s.ControlKey(produceKey, observe)
	ts.s.ControlKey(metadataKey, observe)
	ts.s.ControlKey(produceKey, func(r *Controlled) (kmsg.Response, error, bool) {
		preq := r.Request().(*kmsg.ProduceRequest)
		resp := preq.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range preq.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				sp.BaseOffset = -1
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	rec := &kgo.Record{Topic: "fenced", Value: []byte("once")}
	if err := cl.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if rec.Offset != 0 {
		t.Fatalf("record landed at offset %d, want 0", rec.Offset)
	}
	if _, hw, _ := ts.storage.Offsets(context.Background(), "fenced", 0); hw != 1 {
		t.Fatalf("high watermark %d: the record was stored %d times", hw, hw)
	}
	mu.Lock()
	defer mu.Unlock()
	// Produce (refused), then a metadata refresh, then the produce that landed.
	first, refreshed, second := -1, false, false
	for i, k := range keys {
		switch {
		case k == produceKey && first < 0:
			first = i
		case k == metadataKey && first >= 0:
			refreshed = true
		case k == produceKey && refreshed:
			second = true
		}
	}
	if first < 0 || !refreshed || !second {
		t.Fatalf("requests seen %v: want a produce, a metadata refresh, then a produce", keys)
	}
}
