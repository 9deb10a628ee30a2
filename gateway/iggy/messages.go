package iggy

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// SendBatch appends one batch record (as message.Builder.Finish returns it)
// to a partition and returns the offset the server gave its first message.
// The batch is written to the socket straight from the caller's memory, in
// the same vectored write as the request header, and is not retained after
// the call returns. Through Config.Local the store appends it from the
// caller's memory and stamps its header there (partition, offsets, timestamp).
//
// SendBatch is a write: if the connection breaks after the request left,
// the error matches ErrConnectionLost and the batch may or may not be
// stored; the client does not resend it.
func (a api) SendBatch(ctx context.Context, stream, topic wire.Identifier, partition uint32, batch []byte) (uint64, error) {
	h, err := message.ParseBatchHeader(batch)
	if err != nil {
		return 0, fmt.Errorf("iggy: send: %w: %w", wire.InvalidFormat, err)
	}
	if h.Count == 0 {
		return 0, fmt.Errorf("iggy: send of an empty batch: %w", wire.InvalidMessagesCount)
	}
	if h.BatchLength != uint64(len(batch)) {
		return 0, fmt.Errorf("iggy: send: batch_length %d but %d bytes given: %w", h.BatchLength, len(batch), wire.InvalidFormat)
	}
	var meta [64]byte
	req := wire.SendMessages{Stream: stream, Topic: topic, Partitioning: wire.PartitionIDPartitioning(partition), MessagesCount: h.Count}
	cl := call{cmd: wire.CmdSendMessages, body: req.AppendMetadata(meta[:0]), tail: batch}
	var base uint64
	unresolved := false
	err = a.run(ctx, &cl, func(b []byte) error {
		// [count u32] then 20-byte confirmations; the first one is ours.
		if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0 {
			// "Committed, no offsets to report": the real server's answer when it cannot
			// resolve the batch's offsets. The batch is stored.
			unresolved = true
			return nil
		}
		if len(b) < 4+wire.SendConfirmationSize {
			return fmt.Errorf("iggy: send reply of %d bytes without a confirmation: %w", len(b), ErrProtocol)
		}
		base = binary.LittleEndian.Uint64(b[4+12:])
		return nil
	})
	if err != nil || !unresolved {
		return base, err
	}
	return a.locateSent(ctx, stream, topic, partition, batch, h.Count)
}

// maxLocate bounds how many of a partition's last messages locateSent reads looking for a batch.
const maxLocate = 1 << 16

// locateSent finds the base offset of a batch the server stored without saying where: it reads
// the partition's last messages, more each round (from four times the batch's size up to
// maxLocate), for the batch's first message id. Message ids are the sender's, unique per batch
// (the gateway draws them from a per-process counter over a random prefix), so the first match
// from the end is ours. It fails, with ErrUnresolved, when the batch is not among them; the batch
// is stored all the same, and the caller must not send it again.
func (a api) locateSent(ctx context.Context, stream, topic wire.Identifier, partition uint32, batch []byte, count uint32) (uint64, error) {
	it := message.Frames(batch)
	first, ok := it.Next()
	if !ok {
		return 0, fmt.Errorf("iggy: locate a sent batch: %w", it.Err())
	}
	for n := min(max(4*count, 64), maxLocate); ; n = min(4*n, maxLocate) {
		p, err := a.Poll(ctx, PollRequest{Stream: stream, Topic: topic, Partition: partition,
			Strategy: wire.PollingStrategy{Kind: wire.PollLast}, Count: n})
		if err != nil {
			return 0, fmt.Errorf("iggy: the batch was stored but its offset was not reported, and reading it back failed: %w: %w", ErrUnresolved, err)
		}
		off, found := lastWithID(p.Batches, first.ID)
		p.Release()
		if found {
			return off, nil
		}
		if n == maxLocate || p.Count < n {
			return 0, fmt.Errorf("iggy: the batch was stored but its offset was not reported, nor found among the partition's last %d messages: %w", p.Count, ErrUnresolved)
		}
	}
}

// lastWithID is the offset of the last message in body (batch records back to back) whose id is
// id.
func lastWithID(body []byte, id [16]byte) (uint64, bool) {
	var off uint64
	found := false
	recs := message.Records(body)
	for rec, ok := recs.Next(); ok; rec, ok = recs.Next() {
		h, err := message.ParseBatchHeader(rec)
		if err != nil {
			break
		}
		fr := message.Frames(rec)
		for f, ok := fr.Next(); ok; f, ok = fr.Next() {
			if f.ID == id {
				off, found = h.BaseOffset+uint64(f.OffsetDelta), true
			}
		}
	}
	return off, found
}

// Message is one message for SendMessages.
type Message struct {
	// ID is the 16-byte message id (a u128, little-endian); a zero id is
	// replaced by a random one, as the official SDK does.
	ID [16]byte
	// Timestamp is the origin timestamp; zero means now.
	Timestamp time.Time
	Payload   []byte
	// Headers is a TLV user-header block (wire.AppendTLV), or nil.
	Headers []byte
}

var builders = sync.Pool{New: func() any { return new(message.Builder) }}

// SendMessages builds one batch of msgs and sends it with SendBatch.
func (a api) SendMessages(ctx context.Context, stream, topic wire.Identifier, partition uint32, msgs []Message) (uint64, error) {
	if len(msgs) == 0 {
		return 0, fmt.Errorf("iggy: no messages to send: %w", wire.InvalidMessagesCount)
	}
	b := builders.Get().(*message.Builder)
	defer builders.Put(b)
	b.Reset()
	now := uint64(time.Now().UnixMicro())
	for i := range msgs {
		m := &msgs[i]
		if len(m.Payload) == 0 {
			return 0, fmt.Errorf("iggy: message %d has an empty payload: %w", i, wire.EmptyMessagePayload)
		}
		id := m.ID
		if id == ([16]byte{}) {
			_, _ = rand.Read(id[:])
		}
		ts := now
		if !m.Timestamp.IsZero() {
			ts = uint64(m.Timestamp.UnixMicro())
		}
		b.Add(id, ts, m.Payload, m.Headers)
	}
	batch, err := b.Finish()
	if err != nil {
		return 0, fmt.Errorf("iggy: build batch: %w", err)
	}
	return a.SendBatch(ctx, stream, topic, partition, batch)
}

// PollRequest says what to read. The zero Consumer means the single
// consumer 0.
type PollRequest struct {
	Consumer      wire.Consumer
	Stream, Topic wire.Identifier
	Partition     uint32
	Strategy      wire.PollingStrategy
	Count         uint32
	AutoCommit    bool
}

// Polled is the answer to a poll. Batches holds the batch records exactly as
// the server sent them, back to back; walk them with message.Records and
// message.Frames. It lives in a pooled buffer: call Release when done with
// it to let the next poll reuse the memory (and do not touch Batches after).
type Polled struct {
	PartitionID   uint32
	CurrentOffset uint64
	Count         uint32
	Batches       []byte

	buf *[]byte
}

// Resync reports whether a group poll was told to re-sync its assignment.
func (p *Polled) Resync() bool { return p.PartitionID == wire.PartitionResync }

// maxPooledFrame keeps one huge poll from pinning its memory in the pool.
const maxPooledFrame = 16 << 20

var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// Release hands the buffer back for reuse. It is safe to call twice.
func (p *Polled) Release() {
	if p == nil || p.buf == nil {
		return
	}
	if cap(*p.buf) <= maxPooledFrame {
		*p.buf = (*p.buf)[:0]
		frameBufs.Put(p.buf)
	}
	p.buf = nil
	p.Batches = nil
}

// Poll reads messages from one partition. The reply is checked to be whole
// batch records whose message counts add up to the count the server
// reports; message checksums are not verified.
func (a api) Poll(ctx context.Context, req PollRequest) (*Polled, error) {
	consumer := req.Consumer
	if consumer.Kind == 0 {
		consumer = wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NumericID(0)}
	}
	body := (&wire.PollMessages{
		Consumer:   consumer,
		Stream:     req.Stream,
		Topic:      req.Topic,
		Partition:  wire.SomePartition(req.Partition),
		Strategy:   req.Strategy,
		Count:      req.Count,
		AutoCommit: req.AutoCommit,
	}).AppendTo(make([]byte, 0, 64))
	buf := frameBufs.Get().(*[]byte)
	p := &Polled{buf: buf}
	err := a.run(ctx, &call{cmd: wire.CmdPollMessages, body: body, into: buf}, func(b []byte) error {
		var r wire.PollReply
		if err := r.Decode(b); err != nil {
			return fmt.Errorf("iggy: poll reply: %w: %w", ErrProtocol, err)
		}
		if err := checkRecords(r.Batches, r.MessagesCount); err != nil {
			return err
		}
		p.PartitionID, p.CurrentOffset, p.Count, p.Batches = r.PartitionID, r.CurrentOffset, r.MessagesCount, r.Batches
		return nil
	})
	if err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// checkRecords verifies that body is whole batch records holding want
// messages in total, as the official SDK requires of a poll reply.
func checkRecords(body []byte, want uint32) error {
	var total uint64
	it := message.Records(body)
	for {
		rec, ok := it.Next()
		if !ok {
			break
		}
		h, _ := message.ParseBatchHeader(rec)
		total += uint64(h.Count)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("iggy: poll reply records: %w: %w", ErrProtocol, err)
	}
	if total != uint64(want) {
		return fmt.Errorf("iggy: poll reply holds %d messages but reports %d: %w", total, want, ErrProtocol)
	}
	return nil
}
