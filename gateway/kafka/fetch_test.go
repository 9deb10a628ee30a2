package kafka

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Kafka (KIP-227) treats session epoch 0 (INITIAL) and -1 (FINAL) as full fetches whatever the
// session id says: -1 closes the named session and serves a sessionless fetch, 0 opens a new
// one. Only an incremental fetch (epoch > 0) of a session the broker does not hold is refused.
// The gateway keeps no sessions, so it answers every full fetch with session id 0 ("no session
// was created"), which makes clients go on with full fetches.
func TestFetchSessionEpochs(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "sessions", 1)
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "sessions", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	conn := dialRaw(t, ts.addr)
	fetch := func(version int16, id, epoch int32) *kmsg.FetchResponse {
		req := longPoll("sessions", 0)
		req.Version = version
		req.SessionID, req.SessionEpoch = id, epoch
		return conn.roundTrip(t, req).(*kmsg.FetchResponse)
	}
	for _, version := range []int16{7, 11, 12} {
		for _, c := range []struct{ id, epoch int32 }{{-1, -1}, {0, -1}, {0, 0}, {7, -1}, {7, 0}} {
			resp := fetch(version, c.id, c.epoch)
			if resp.ErrorCode != 0 || resp.SessionID != 0 {
				t.Fatalf("v%d session %d epoch %d: error %d, session %d; want a full fetch without a session", version, c.id, c.epoch, resp.ErrorCode, resp.SessionID)
			}
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].HighWatermark != 1 ||
				len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
				t.Fatalf("v%d session %d epoch %d: answered %+v, want the partition's record", version, c.id, c.epoch, resp.Topics)
			}
		}
		for _, c := range []struct{ id, epoch int32 }{{7, 1}, {0, 3}} {
			resp := fetch(version, c.id, c.epoch)
			if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || len(resp.Topics) != 0 {
				t.Fatalf("v%d incremental fetch of unknown session %d epoch %d: error %d, %d topics; want FETCH_SESSION_ID_NOT_FOUND and none",
					version, c.id, c.epoch, resp.ErrorCode, len(resp.Topics))
			}
		}
	}
}

// asyncFetch sends req on conn and delivers the answer (nil after a reported error) once it
// comes.
func asyncFetch(t *testing.T, conn *rawConn, req *kmsg.FetchRequest) <-chan *kmsg.FetchResponse {
	t.Helper()
	conn.corr++
	conn.write(t, encodeRequest(req, conn.corr))
	out := make(chan *kmsg.FetchResponse, 1)
	go func() {
		defer close(out)
		conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		var size [4]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			t.Errorf("reading answer: %v", err)
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(size[:]))
		if _, err := io.ReadFull(conn, body); err != nil {
			t.Errorf("reading answer: %v", err)
			return
		}
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.SetVersion(req.Version)
		if err := resp.ReadFrom(body[4:]); err != nil {
			t.Errorf("decoding answer: %v", err)
			return
		}
		out <- resp
	}()
	return out
}

func fetchedRecords(resp *kmsg.FetchResponse) int {
	n := 0
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			n += countRecords(p.RecordBatches)
		}
	}
	return n
}

// A fetch holds until MinBytes are there or MaxWait passes, also when every partition it names
// already has data: ten small records do not answer a fetch for 10 MB before its 500 ms.
func TestFetchHoldsForMinBytesUntilMaxWait(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	ts := startServer(t, func(c *Config) { c.Clock = clk })
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "minbytes", 1)
	for i := range 10 {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "minbytes", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	parked := ts.storage.parkedOn("minbytes")
	req := longPoll("minbytes", 500)
	req.MinBytes = 10 << 20
	answer := asyncFetch(t, dialRaw(t, ts.addr), req)
	select {
	case <-parked:
	case resp := <-answer:
		t.Fatalf("answered at once with %d records, before MinBytes or MaxWait", fetchedRecords(resp))
	case <-testCtx(t).Done():
		t.Fatal("the fetch never waited")
	}
	clk.Advance(499 * time.Millisecond)
	select {
	case resp := <-answer:
		t.Fatalf("answered after 499 ms of 500 with %d records", fetchedRecords(resp))
	default:
	}
	clk.Advance(time.Millisecond)
	select {
	case resp := <-answer:
		if resp == nil {
			t.FailNow()
		}
		if n := fetchedRecords(resp); n != 10 || resp.Topics[0].Partitions[0].HighWatermark != 10 {
			t.Fatalf("answered %d records, high watermark %d; want 10 and 10", n, resp.Topics[0].Partitions[0].HighWatermark)
		}
	case <-testCtx(t).Done():
		t.Fatal("no answer once MaxWait passed")
	}
}

// Data that brings a held fetch to MinBytes answers it at once, with what it held and what
// came, while the clock stands still.
func TestFetchAnswersOnceMinBytesArrive(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	ts := startServer(t, func(c *Config) { c.Clock = clk })
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	createTopic(t, cl, "minbytes", 2)
	for p := range int32(2) {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "minbytes", Partition: p, Value: []byte("small")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	parked := ts.storage.parkedOn("minbytes")
	req := longPoll("minbytes", 10_000)
	fp := req.Topics[0].Partitions[0]
	fp.Partition = 1
	req.Topics[0].Partitions = append(req.Topics[0].Partitions, fp)
	req.MinBytes = 4 << 10
	var reads []string
	ts.storage.mu.Lock()
	ts.storage.fetched = func(_ string, p int32, offset int64, _ int32) { reads = append(reads, fmt.Sprintf("%d@%d", p, offset)) }
	ts.storage.mu.Unlock()
	answer := asyncFetch(t, dialRaw(t, ts.addr), req)
	for range 2 {
		select {
		case <-parked:
		case resp := <-answer:
			t.Fatalf("answered at once with %d records, before MinBytes", fetchedRecords(resp))
		case <-testCtx(t).Done():
			t.Fatal("the fetch never waited")
		}
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "minbytes", Partition: 1, Value: bytes.Repeat([]byte("x"), 8<<10)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-answer:
		if resp == nil {
			t.FailNow()
		}
		p := resp.Topics[0].Partitions
		if n := fetchedRecords(resp); n != 3 || countRecords(p[0].RecordBatches) != 1 || p[1].HighWatermark != 2 {
			t.Fatalf("answered %d records (%d from partition 0), partition 1 at %d; want 3, 1, 2", n, countRecords(p[0].RecordBatches), p[1].HighWatermark)
		}
	case <-testCtx(t).Done():
		t.Fatal("no answer once MinBytes arrived")
	}
	ts.storage.mu.Lock()
	defer ts.storage.mu.Unlock()
	// Each partition is read from its fetch offset once, then from after what it held.
	sort.Strings(reads)
	if got := fmt.Sprint(reads); got != "[0@0 0@1 1@0 1@1]" {
		t.Fatalf("partition reads %s, want [0@0 0@1 1@0 1@1]: held data was read again", got)
	}
}

// A consumer asking for 50 MB over many partitions gets at most Config.FetchMaxBytes per answer
// (the first batch whole), and the partitions left out come in the answers after, none lost;
// a client asking for less than the cap is not given more.
func TestFetchMaxBytesCapsTheAnswer(t *testing.T) {
	const capBytes = 64 << 10
	ts := startServer(t, func(c *Config) { c.FetchMaxBytes = capBytes })
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	const parts, perPart = 8, 20
	createTopic(t, cl, "capped", parts)
	value := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
	for p := range int32(parts) {
		for range perPart {
			if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "capped", Partition: p, Value: value}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	conn := dialRaw(t, ts.addr)
	next := make([]int64, parts)
	fetch := func(maxBytes int32) *kmsg.FetchResponse {
		req := longPoll("capped", 0)
		req.MaxBytes = maxBytes
		req.Topics[0].Partitions = nil
		for p := range int32(parts) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = p, next[p], 1<<20
			req.Topics[0].Partitions = append(req.Topics[0].Partitions, fp)
		}
		resp := conn.roundTrip(t, req).(*kmsg.FetchResponse)
		for _, rp := range resp.Topics[0].Partitions {
			next[rp.Partition] += int64(countRecords(rp.RecordBatches))
		}
		return resp
	}
	size := func(resp *kmsg.FetchResponse) (n int) {
		for _, rp := range resp.Topics[0].Partitions {
			n += len(rp.RecordBatches)
		}
		return n
	}
	// Each record is its own batch here, so "at most the cap" is exact up to one batch.
	answers := 0
	for got := 0; got < parts*perPart; answers++ {
		if answers > parts*perPart {
			t.Fatalf("no progress: %d of %d records after %d answers", got, parts*perPart, answers)
		}
		resp := fetch(50 << 20)
		if n := size(resp); n > capBytes+2<<10 {
			t.Fatalf("answer %d holds %d bytes, want at most the cap %d and one batch", answers, n, capBytes)
		}
		got += fetchedRecords(resp)
	}
	if answers < (parts*perPart<<10)/capBytes {
		t.Fatalf("all %d records came in %d answers: the cap was not applied", parts*perPart, answers)
	}
	clear(next)
	if n := size(fetch(16 << 10)); n > 16<<10+2<<10 {
		t.Fatalf("a fetch of 16 KiB got %d bytes", n)
	}
}
