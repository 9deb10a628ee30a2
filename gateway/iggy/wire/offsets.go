package wire

// GetConsumerOffset is the get_consumer_offset body.
type GetConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
}

// AppendTo appends the body.
func (q *GetConsumerOffset) AppendTo(dst []byte) []byte {
	dst = q.Consumer.AppendTo(dst)
	dst = q.Stream.AppendTo(dst)
	dst = q.Topic.AppendTo(dst)
	return q.Partition.AppendTo(dst)
}

// Decode parses the body.
func (q *GetConsumerOffset) Decode(b []byte) error {
	r := NewReader(b)
	q.read(&r)
	return r.Err()
}

func (q *GetConsumerOffset) read(r *Reader) {
	q.Consumer = r.Consumer("consumer")
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Partition = r.OptionalPartition("partition")
}

// StoreConsumerOffset is the store_consumer_offset body.
type StoreConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
	Offset    uint64
	Ack       AckLevel
}

// AppendTo appends the body.
func (q *StoreConsumerOffset) AppendTo(dst []byte) []byte {
	dst = (&GetConsumerOffset{q.Consumer, q.Stream, q.Topic, q.Partition}).AppendTo(dst)
	return append(appendU64(dst, q.Offset), byte(q.Ack))
}

// Decode parses the body.
func (q *StoreConsumerOffset) Decode(b []byte) error {
	r := NewReader(b)
	var g GetConsumerOffset
	g.read(&r)
	q.Consumer, q.Stream, q.Topic, q.Partition = g.Consumer, g.Stream, g.Topic, g.Partition
	q.Offset = r.U64("offset")
	q.Ack = AckLevel(r.U8("ack level"))
	return r.Err()
}

// DeleteConsumerOffset is the delete_consumer_offset body.
type DeleteConsumerOffset struct {
	Consumer  Consumer
	Stream    Identifier
	Topic     Identifier
	Partition OptionalPartition
	Ack       AckLevel
}

// AppendTo appends the body.
func (q *DeleteConsumerOffset) AppendTo(dst []byte) []byte {
	dst = (&GetConsumerOffset{q.Consumer, q.Stream, q.Topic, q.Partition}).AppendTo(dst)
	return append(dst, byte(q.Ack))
}

// Decode parses the body.
func (q *DeleteConsumerOffset) Decode(b []byte) error {
	r := NewReader(b)
	var g GetConsumerOffset
	g.read(&r)
	q.Consumer, q.Stream, q.Topic, q.Partition = g.Consumer, g.Stream, g.Topic, g.Partition
	q.Ack = AckLevel(r.U8("ack level"))
	return r.Err()
}

// ConsumerOffset is the get_consumer_offset reply. The reply body is empty
// when no offset is stored; callers check that before decoding.
type ConsumerOffset struct {
	PartitionID   uint32
	CurrentOffset uint64
	StoredOffset  uint64
}

// AppendTo appends the reply.
func (o *ConsumerOffset) AppendTo(dst []byte) []byte {
	return appendU64(appendU64(appendU32(dst, o.PartitionID), o.CurrentOffset), o.StoredOffset)
}

// Decode parses the reply.
func (o *ConsumerOffset) Decode(b []byte) error {
	r := NewReader(b)
	o.PartitionID = r.U32("partition id")
	o.CurrentOffset = r.U64("current offset")
	o.StoredOffset = r.U64("stored offset")
	return r.Err()
}
