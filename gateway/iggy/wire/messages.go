package wire

import "encoding/binary"

// SendMessages is the send_messages body. Batch is the message batch (batch
// header and frames) kept as opaque bytes; package message owns its layout.
type SendMessages struct {
	Stream        Identifier
	Topic         Identifier
	Partitioning  Partitioning
	MessagesCount uint32
	Batch         []byte
}

// AppendTo appends [metadata_length u32][stream][topic][partitioning]
// [messages_count u32][batch].
func (q *SendMessages) AppendTo(dst []byte) []byte {
	dst = q.AppendMetadata(dst)
	return append(dst, q.Batch...)
}

// AppendMetadata appends everything before the batch, so that a client can
// write the batch straight after it into the same buffer.
func (q *SendMessages) AppendMetadata(dst []byte) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = q.Stream.AppendTo(dst)
	dst = q.Topic.AppendTo(dst)
	dst = q.Partitioning.AppendTo(dst)
	dst = appendU32(dst, q.MessagesCount)
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// Decode parses the body without allocating when both identifiers are
// numeric. The metadata length must cover the four metadata fields exactly.
// Batch and a message-key partitioning alias b.
func (q *SendMessages) Decode(b []byte) error {
	r := NewReader(b)
	metaLen := r.U32("metadata length")
	start := r.Offset()
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Partitioning = r.Partitioning("partitioning")
	q.MessagesCount = r.U32("messages count")
	if r.Err() == nil && uint64(r.Offset()-start) != uint64(metaLen) {
		r.Fail("metadata length", "does not match the metadata fields")
	}
	q.Batch = r.Rest()
	return r.Err()
}

// SendConfirmation reports where one sent batch landed.
type SendConfirmation struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	BaseOffset  uint64
}

// SendConfirmationSize is the encoded size of a SendConfirmation.
const SendConfirmationSize = 20

// SendMessagesReply is the send_messages reply: [count u32] then 20-byte
// confirmations. It must not be empty on the wire.
type SendMessagesReply []SendConfirmation

// AppendSendConfirmation appends a one-confirmation reply without
// allocating, which is what a server sends for every committed batch.
func AppendSendConfirmation(dst []byte, c SendConfirmation) []byte {
	dst = appendU32(dst, 1)
	return c.appendTo(dst)
}

func (c SendConfirmation) appendTo(dst []byte) []byte {
	dst = appendU32(dst, c.StreamID)
	dst = appendU32(dst, c.TopicID)
	dst = appendU32(dst, c.PartitionID)
	return appendU64(dst, c.BaseOffset)
}

// AppendTo appends the reply.
func (l *SendMessagesReply) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(*l)))
	for _, c := range *l {
		dst = c.appendTo(dst)
	}
	return dst
}

// Decode parses the reply.
func (l *SendMessagesReply) Decode(b []byte) error {
	r := NewReader(b)
	n := r.Count(SendConfirmationSize, "confirmations count")
	*l = nil
	if r.Err() == nil && n > 0 {
		*l = make(SendMessagesReply, n)
		for i := range *l {
			(*l)[i] = SendConfirmation{
				StreamID:    r.U32("stream id"),
				TopicID:     r.U32("topic id"),
				PartitionID: r.U32("partition id"),
				BaseOffset:  r.U64("base offset"),
			}
		}
	}
	return r.Err()
}

// PollMessages is the poll_messages body.
type PollMessages struct {
	Consumer   Consumer
	Stream     Identifier
	Topic      Identifier
	Partition  OptionalPartition
	Strategy   PollingStrategy
	Count      uint32
	AutoCommit bool
}

// AppendTo appends the body.
func (q *PollMessages) AppendTo(dst []byte) []byte {
	dst = q.Consumer.AppendTo(dst)
	dst = q.Stream.AppendTo(dst)
	dst = q.Topic.AppendTo(dst)
	dst = q.Partition.AppendTo(dst)
	dst = q.Strategy.AppendTo(dst)
	dst = appendU32(dst, q.Count)
	return appendBool(dst, q.AutoCommit)
}

// Decode parses the body.
func (q *PollMessages) Decode(b []byte) error {
	r := NewReader(b)
	q.Consumer = r.Consumer("consumer")
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Partition = r.OptionalPartition("partition")
	q.Strategy = r.PollingStrategy("strategy")
	q.Count = r.U32("count")
	q.AutoCommit = r.Bool("auto commit")
	return r.Err()
}

// PollPrefixSize is the size of the poll reply prefix.
const PollPrefixSize = 16

// PartitionResync is the partition id of a poll reply telling a group
// consumer to re-sync its assignment.
const PartitionResync uint32 = 0xFFFFFFFF

// PollReplyPrefix opens a poll_messages reply:
// [partition_id u32][current_offset u64][messages_count u32], followed by
// batch records until the body ends.
type PollReplyPrefix struct {
	PartitionID   uint32
	CurrentOffset uint64
	MessagesCount uint32 // frames in all the records that follow
}

// AppendPollPrefix appends the 16-byte prefix without allocating when dst
// has room.
func AppendPollPrefix(dst []byte, p PollReplyPrefix) []byte {
	dst = appendU32(dst, p.PartitionID)
	dst = appendU64(dst, p.CurrentOffset)
	return appendU32(dst, p.MessagesCount)
}

// PutPollPrefix overwrites the prefix at the start of body, for a server
// that reserves it and fills the count once the records are appended.
func PutPollPrefix(body []byte, p PollReplyPrefix) {
	if len(body) < PollPrefixSize {
		return
	}
	binary.LittleEndian.PutUint32(body, p.PartitionID)
	binary.LittleEndian.PutUint64(body[4:], p.CurrentOffset)
	binary.LittleEndian.PutUint32(body[12:], p.MessagesCount)
}

// PollReply is a decoded poll_messages reply; Batches aliases the body.
type PollReply struct {
	PollReplyPrefix
	Batches []byte
}

// AppendTo appends the reply.
func (p *PollReply) AppendTo(dst []byte) []byte {
	return append(AppendPollPrefix(dst, p.PollReplyPrefix), p.Batches...)
}

// Decode parses the reply. An empty body decodes as no messages (the
// official Go SDK accepts it); a body of 1..15 bytes is malformed.
func (p *PollReply) Decode(b []byte) error {
	if len(b) == 0 {
		*p = PollReply{}
		return nil
	}
	r := NewReader(b)
	p.PartitionID = r.U32("partition id")
	p.CurrentOffset = r.U64("current offset")
	p.MessagesCount = r.U32("messages count")
	p.Batches = r.Rest()
	return r.Err()
}

// FlushUnsavedBuffer is the flush_unsaved_buffer body (the official server
// refuses the command with FeatureUnavailable).
type FlushUnsavedBuffer struct {
	Stream      Identifier
	Topic       Identifier
	PartitionID uint32
	Fsync       bool
}

// AppendTo appends the body.
func (q *FlushUnsavedBuffer) AppendTo(dst []byte) []byte {
	dst = q.Topic.AppendTo(q.Stream.AppendTo(dst))
	return appendBool(appendU32(dst, q.PartitionID), q.Fsync)
}

// Decode parses the body.
func (q *FlushUnsavedBuffer) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.PartitionID = r.U32("partition id")
	q.Fsync = r.Bool("fsync")
	return r.Err()
}
