package kafka

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// A long poll naming 40 empty partitions, each twice, watches maxFetchWaiters of them, once each,
// and answers when MaxWaitMillis has passed on the server's clock, not before.
func TestFetchLongPollBounded(t *testing.T) {
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	obs := &countingObserver{}
	ts := startServer(t, func(c *Config) { c.Clock = fc; c.Observer = obs })
	cl := ts.client(t)
	const parts = 40
	createTopic(t, cl, "lp", parts)
	var parked atomic.Int32
	ts.storage.onParked(func(string, int32) { parked.Add(1) })

	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = 12, 10_000, 1, 1<<20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "lp"
	for range 2 {
		for p := range int32(parts) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
	}
	req.Topics = append(req.Topics, rt)
	armed := fc.Added()
	answered := make(chan error, 1)
	go func() {
		resp, err := req.RequestWith(testCtx(t), cl)
		if err == nil && len(resp.Topics) != 1 {
			err = fmt.Errorf("%d topics answered", len(resp.Topics))
		}
		answered <- err
	}()
	select {
	case <-armed:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll set no timer")
	}
	checkfor.Eventually(t, 10*time.Second, "the long poll parked", func() error {
		return checkfor.True(parked.Load() >= maxFetchWaiters, "%d waits parked", parked.Load())
	})
	fc.Advance(9 * time.Second)
	select {
	case err := <-answered:
		t.Fatalf("answered before MaxWaitMillis passed: %v", err)
	default:
	}
	fc.Advance(time.Second)
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer once MaxWaitMillis passed on the server's clock")
	}
	if n := parked.Load(); n != maxFetchWaiters {
		t.Fatalf("%d partition waits for one long poll of %d partitions named twice, want %d", n, parts, maxFetchWaiters)
	}
	obs.mu.Lock()
	capped := obs.waitsCapped
	obs.mu.Unlock()
	if capped != 1 {
		t.Fatalf("%d long polls reported capped, want 1", capped)
	}
}

// fetchAloneServer starts a server on a fake clock with topic "q" of one partition (produceOne's)
// and returns the clock, a raw connection, and a channel that receives once a long poll of it
// has parked and armed its timer.
func fetchAloneServer(t *testing.T) (*clock.Fake, *rawConn, <-chan struct{}) {
	t.Helper()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	ts := startServer(t, func(c *Config) { c.Clock = fc })
	createTopic(t, ts.client(t), "q", 1)
	parked := make(chan struct{}, 1)
	ts.storage.onParked(func(string, int32) {
		select {
		case parked <- struct{}{}:
		default:
		}
	})
	return fc, dialRaw(t, ts.addr), parked
}

// answerCorr is the correlation id of an answer frame.
func answerCorr(body []byte) int32 { return int32(binary.BigEndian.Uint32(body)) }

// A request the client sent in the same write as a long poll, behind it, is read and run while
// the poll waits: a produce there wakes the poll, which answers with its record without waiting
// for MaxWaitMillis (the server's clock never moves here).
func TestPipelinedProduceWakesTheFetchBeforeIt(t *testing.T) {
	_, rc, _ := fetchAloneServer(t)
	rc.write(t, append(encodeRequest(longPoll("q", 10_000), 1), encodeRequest(produceOne(9, 0), 2)...))
	first := rc.readFrame(t)
	if c := answerCorr(first); c != 1 {
		t.Fatalf("first answer has correlation %d, want the fetch's", c)
	}
	fresp := kmsg.NewPtrFetchResponse()
	fresp.Version = 11
	if err := fresp.ReadFrom(first[4:]); err != nil { // v11: no tagged header
		t.Fatal(err)
	}
	if len(fresp.Topics) != 1 || len(fresp.Topics[0].Partitions) != 1 || len(fresp.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatal("the long poll answered without the record produced behind it")
	}
	if c := answerCorr(rc.readFrame(t)); c != 2 {
		t.Fatalf("second answer has correlation %d, want the produce's", c)
	}
}

// A long poll alone on its connection runs on the reader: a request sent after it, once it
// waits, is read when it has been answered, as Kafka reads a connection one request at a time.
func TestFetchAloneReadsNextRequestAfterIt(t *testing.T) {
	fc, rc, parked := fetchAloneServer(t)
	armed := fc.Added()
	rc.write(t, encodeRequest(longPoll("q", 10_000), 1))
	for _, ch := range []<-chan struct{}{parked, armed} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("the long poll did not park and arm its timer")
		}
	}
	rc.write(t, encodeRequest(produceOne(9, 0), 2))
	expectSilent(t, rc) // the produce is not read: nothing wakes the poll
	fc.Advance(10 * time.Second)
	first := rc.readFrame(t)
	fresp := kmsg.NewPtrFetchResponse()
	fresp.Version = 11
	if err := fresp.ReadFrom(first[4:]); err != nil { // v11: no tagged header
		t.Fatal(err)
	}
	if answerCorr(first) != 1 || len(fresp.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("first answer: correlation %d with %d bytes of records; want the fetch's, empty",
			answerCorr(first), len(fresp.Topics[0].Partitions[0].RecordBatches))
	}
	if c := answerCorr(rc.readFrame(t)); c != 2 {
		t.Fatalf("second answer has correlation %d, want the produce's", c)
	}
}
