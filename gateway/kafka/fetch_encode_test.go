package kafka

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// spliced joins what appendFetchResponse returns into the bytes the writer sends.
func spliced(frame []byte, cuts []int, bufs [][]byte) []byte {
	var out []byte
	at := 0
	for i, b := range bufs {
		out = append(out, frame[at:cuts[i]]...)
		out = append(out, b...)
		at = cuts[i]
	}
	return append(out, frame[at:]...)
}

func sampleFetchResponse(version int16) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = version
	resp.ThrottleMillis = 7
	resp.ErrorCode = 0
	resp.SessionID = 0
	big := bytes.Repeat([]byte{0xab}, 200<<10)
	small := []byte("a few record bytes")
	for ti, name := range []string{"orders", "", "t-3"} {
		t := kmsg.NewFetchResponseTopic()
		t.Topic = name
		for pi, recs := range [][]byte{big, nil, {}, small, big[:inlineRecords], big[:inlineRecords-1]} {
			p := kmsg.NewFetchResponseTopicPartition()
			p.Partition = int32(10*ti + pi)
			p.HighWatermark = int64(1000 + pi)
			p.LastStableOffset = int64(999 + pi)
			p.LogStartOffset = int64(pi)
			p.RecordBatches = recs
			if pi == 1 {
				p.ErrorCode = 3
			}
			if pi == 3 {
				a := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
				a.ProducerID, a.FirstOffset = 42, 17
				p.AbortedTransactions = append(p.AbortedTransactions, a, a)
			}
			if pi == 4 {
				p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			}
			p.PreferredReadReplica = int32(pi - 1)
			t.Partitions = append(t.Partitions, p)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}

func TestFetchResponseEncodingMatchesKmsg(t *testing.T) {
	for v := int16(0); v <= 12; v++ {
		resp := sampleFetchResponse(v)
		want := resp.AppendTo([]byte("hdr"))
		frame, cuts, bufs, ok := appendFetchResponse([]byte("hdr"), nil, nil, resp)
		if !ok {
			t.Fatalf("v%d: encoder declined a plain response", v)
		}
		if got := spliced(frame, cuts, bufs); !bytes.Equal(got, want) {
			t.Fatalf("v%d: %d bytes differ from kmsg's %d", v, len(got), len(want))
		}
		// Three topics, each with a 200 KiB and a 16 KiB batch, are left out of the frame;
		// the smaller sets are copied in.
		if len(bufs) != 6 {
			t.Fatalf("v%d: %d record sets written apart, want 6", v, len(bufs))
		}
		if len(frame) > 3*inlineRecords+1<<10 {
			t.Fatalf("v%d: frame of %d bytes copies record batches", v, len(frame))
		}
		back := kmsg.NewPtrFetchResponse()
		back.Version = v
		if err := back.ReadFrom(want[3:]); err != nil {
			t.Fatalf("v%d: kmsg reads its own encoding back: %v", v, err)
		}
	}
}

func TestFetchResponseEncodingDeclinesTags(t *testing.T) {
	resp := sampleFetchResponse(12)
	resp.Topics[1].Partitions[2].CurrentLeader.LeaderID = 4
	if _, _, _, ok := appendFetchResponse(nil, nil, nil, resp); ok {
		t.Fatal("encoder took a response with a tagged field it does not write")
	}
	resp = sampleFetchResponse(12)
	resp.Brokers = append(resp.Brokers, kmsg.NewFetchResponseBroker())
	if _, _, _, ok := appendFetchResponse(nil, nil, nil, resp); ok {
		t.Fatal("encoder took a response with brokers")
	}
	resp = sampleFetchResponse(13)
	if _, _, _, ok := appendFetchResponse(nil, nil, nil, resp); ok {
		t.Fatal("encoder took v13")
	}
}
