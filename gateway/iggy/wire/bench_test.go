package wire

import (
	"bytes"
	"testing"
)

func BenchmarkDecodeSendMessages(b *testing.B) {
	body := (&SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: PartitionIDPartitioning(3),
		MessagesCount: 100, Batch: make([]byte, 64<<10)}).AppendTo(nil)
	var q SendMessages
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendSendMessagesMetadata(b *testing.B) {
	q := SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: PartitionIDPartitioning(3), MessagesCount: 100}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = q.AppendMetadata(buf[:0])
	}
}

func BenchmarkPollReplyPrefix(b *testing.B) {
	var hdr [HeaderSize]byte
	req := RequestHeader{Client: Uint128{Lo: 1}, Request: 5, Operation: OpNonReplicated, Code: CmdPollMessages}
	frame := make([]byte, 0, HeaderSize+PollPrefixSize)
	b.ReportAllocs()
	for b.Loop() {
		rep := ReplyTo(&req, OK)
		rep.Encode(&hdr)
		frame = append(frame[:0], hdr[:]...)
		frame = AppendPollPrefix(frame, PollReplyPrefix{PartitionID: 1, CurrentOffset: 99, MessagesCount: 10})
		PutFrameSize(frame)
	}
}

func BenchmarkDecodePollMessages(b *testing.B) {
	body := (&PollMessages{Consumer: Consumer{ConsumerKindSingle, NumericID(1)}, Stream: NumericID(1), Topic: NumericID(2),
		Partition: SomePartition(0), Strategy: PollingStrategy{PollOffset, 10}, Count: 100}).AppendTo(nil)
	var q PollMessages
	b.ReportAllocs()
	for b.Loop() {
		if err := q.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFrame(b *testing.B) {
	frame := frameBytes(HeaderSize+64<<10, CommandRequest, 64<<10)
	r := bytes.NewReader(frame)
	buf := make([]byte, 0, len(frame))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frame)
		var err error
		if buf, err = ReadFrame(r, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHotPathsDoNotAllocate pins the zero-allocation promise of the send
// and poll paths so a regression fails plain go test, not only a benchmark.
func TestHotPathsDoNotAllocate(t *testing.T) {
	body := (&SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: PartitionIDPartitioning(3),
		MessagesCount: 1, Batch: make([]byte, 512)}).AppendTo(nil)
	var q SendMessages
	if n := testing.AllocsPerRun(100, func() { _ = q.Decode(body) }); n != 0 {
		t.Errorf("SendMessages.Decode allocates %v times", n)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendPollPrefix(buf[:0], PollReplyPrefix{PartitionID: 1, CurrentOffset: 2, MessagesCount: 3})
	}); n != 0 {
		t.Errorf("AppendPollPrefix allocates %v times", n)
	}
	var hdr [HeaderSize]byte
	req := RequestHeader{Client: Uint128{Lo: 1}, Request: 5, Operation: OpNonReplicated}
	var back ReplyHeader
	if n := testing.AllocsPerRun(100, func() {
		rep := ReplyTo(&req, OK)
		rep.Encode(&hdr)
		if back.Decode(hdr[:]) != nil {
			t.Fatal("reply header did not decode")
		}
	}); n != 0 {
		t.Errorf("header encode/decode allocates %v times", n)
	}
}
