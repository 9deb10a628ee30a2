package wire

// TopicRequest is the body [stream][topic] of get_topic, delete_topic,
// purge_topic and get_consumer_groups.
type TopicRequest struct {
	Stream Identifier
	Topic  Identifier
}

// AppendTo appends the body.
func (q *TopicRequest) AppendTo(dst []byte) []byte {
	return q.Topic.AppendTo(q.Stream.AppendTo(dst))
}

// Decode parses the body.
func (q *TopicRequest) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	return r.Err()
}

// CreateTopic is the create_topic body.
type CreateTopic struct {
	Stream          Identifier
	PartitionsCount uint32
	Name            string
	Options         []byte
}

// AppendTo appends the body.
func (q *CreateTopic) AppendTo(dst []byte) []byte {
	dst = q.Stream.AppendTo(dst)
	dst = appendU32(dst, q.PartitionsCount)
	return append(AppendName(dst, q.Name), q.Options...)
}

// Decode parses the body and validates the options block.
func (q *CreateTopic) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.PartitionsCount = r.U32("partitions count")
	q.Name = r.Name("name")
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// UpdateTopic is the update_topic body.
type UpdateTopic struct {
	Stream  Identifier
	Topic   Identifier
	Name    string
	Options []byte
}

// AppendTo appends the body.
func (q *UpdateTopic) AppendTo(dst []byte) []byte {
	dst = q.Topic.AppendTo(q.Stream.AppendTo(dst))
	return append(AppendName(dst, q.Name), q.Options...)
}

// Decode parses the body and validates the options block.
func (q *UpdateTopic) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Name = r.Name("name")
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// PartitionsRequest is the body [stream][topic][count u32] of
// create_partitions and delete_partitions.
type PartitionsRequest struct {
	Stream Identifier
	Topic  Identifier
	Count  uint32
}

// AppendTo appends the body.
func (q *PartitionsRequest) AppendTo(dst []byte) []byte {
	return appendU32(q.Topic.AppendTo(q.Stream.AppendTo(dst)), q.Count)
}

// Decode parses the body.
func (q *PartitionsRequest) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Count = r.U32("count")
	return r.Err()
}

// DeleteSegments is the delete_segments body.
type DeleteSegments struct {
	Stream        Identifier
	Topic         Identifier
	PartitionID   uint32
	SegmentsCount uint32
}

// AppendTo appends the body.
func (q *DeleteSegments) AppendTo(dst []byte) []byte {
	dst = q.Topic.AppendTo(q.Stream.AppendTo(dst))
	return appendU32(appendU32(dst, q.PartitionID), q.SegmentsCount)
}

// Decode parses the body.
func (q *DeleteSegments) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.PartitionID = r.U32("partition id")
	q.SegmentsCount = r.U32("segments count")
	return r.Err()
}

// Compression algorithm codes of the Topic reply field.
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2
)

// Sentinels of MessageExpiry and MaxTopicSize.
const (
	UseServerDefault uint64 = 0
	Unlimited        uint64 = ^uint64(0)
)

// topicFixedSize is the smallest encoded Topic: 50 fixed bytes including the
// name length, a 1-byte name and two empty option blocks.
const topicFixedSize = 50 + 1 + 4 + 4

// Topic is one topic in a reply.
type Topic struct {
	ID                   uint32
	CreatedAt            uint64
	PartitionsCount      uint32
	MessageExpiry        uint64 // µs; UseServerDefault or Unlimited
	CompressionAlgorithm uint8
	MaxTopicSize         uint64 // bytes; UseServerDefault or Unlimited
	SizeBytes            uint64
	MessagesCount        uint64
	Name                 string
	Options              []byte // keys the client set, in canonical kinds
	DerivedOptions       []byte // defaults of keys the client did not set
}

// AppendTo appends the topic entry.
func (t *Topic) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, t.ID)
	dst = appendU64(dst, t.CreatedAt)
	dst = appendU32(dst, t.PartitionsCount)
	dst = appendU64(dst, t.MessageExpiry)
	dst = append(dst, t.CompressionAlgorithm)
	dst = appendU64(dst, t.MaxTopicSize)
	dst = appendU64(dst, t.SizeBytes)
	dst = appendU64(dst, t.MessagesCount)
	dst = AppendName(dst, t.Name)
	dst = AppendOptionsPrefixed(dst, t.Options)
	return AppendOptionsPrefixed(dst, t.DerivedOptions)
}

// Decode parses one topic entry.
func (t *Topic) Decode(b []byte) error {
	r := NewReader(b)
	t.read(&r)
	return r.Err()
}

func (t *Topic) read(r *Reader) {
	t.ID = r.U32("topic id")
	t.CreatedAt = r.U64("created at")
	t.PartitionsCount = r.U32("partitions count")
	t.MessageExpiry = r.U64("message expiry")
	t.CompressionAlgorithm = r.U8("compression algorithm")
	t.MaxTopicSize = r.U64("max topic size")
	t.SizeBytes = r.U64("size bytes")
	t.MessagesCount = r.U64("messages count")
	t.Name = r.Name("topic name")
	t.Options = r.OptionsPrefixed("topic options")
	t.DerivedOptions = r.OptionsPrefixed("derived options")
}

// Partition is one partition inside TopicDetails (40 bytes).
type Partition struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// PartitionSize is the encoded size of a Partition.
const PartitionSize = 40

// AppendTo appends the partition entry.
func (p *Partition) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, p.ID)
	dst = appendU64(dst, p.CreatedAt)
	dst = appendU32(dst, p.SegmentsCount)
	dst = appendU64(dst, p.CurrentOffset)
	dst = appendU64(dst, p.SizeBytes)
	return appendU64(dst, p.MessagesCount)
}

// Decode parses one partition entry.
func (p *Partition) Decode(b []byte) error {
	r := NewReader(b)
	p.read(&r)
	return r.Err()
}

func (p *Partition) read(r *Reader) {
	p.ID = r.U32("partition id")
	p.CreatedAt = r.U64("created at")
	p.SegmentsCount = r.U32("segments count")
	p.CurrentOffset = r.U64("current offset")
	p.SizeBytes = r.U64("size bytes")
	p.MessagesCount = r.U64("messages count")
}

// TopicDetails is the get_topic and create_topic reply: a topic followed by
// its partitions.
type TopicDetails struct {
	Topic
	Partitions []Partition
}

// AppendTo appends the reply; PartitionsCount is written as len(Partitions).
func (t *TopicDetails) AppendTo(dst []byte) []byte {
	tp := t.Topic
	tp.PartitionsCount = uint32(len(t.Partitions))
	dst = tp.AppendTo(dst)
	for i := range t.Partitions {
		dst = t.Partitions[i].AppendTo(dst)
	}
	return dst
}

// Decode parses the reply, reading partitions until the body ends as the
// official Go SDK does.
func (t *TopicDetails) Decode(b []byte) error {
	r := NewReader(b)
	t.Topic.read(&r)
	if r.Err() == nil && r.Len()%PartitionSize != 0 {
		r.Fail("partitions", "body is not a whole number of partitions")
	}
	t.Partitions = nil
	if n := r.Len() / PartitionSize; n > 0 && r.Err() == nil {
		t.Partitions = make([]Partition, n)
		for i := range t.Partitions {
			t.Partitions[i].read(&r)
		}
	}
	return r.Err()
}

// TopicList is the get_topics reply: [count u32] then topic entries.
type TopicList []Topic

// AppendTo appends the reply.
func (l *TopicList) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(*l)))
	for i := range *l {
		dst = (*l)[i].AppendTo(dst)
	}
	return dst
}

// Decode parses the reply.
func (l *TopicList) Decode(b []byte) error {
	r := NewReader(b)
	n := r.Count(topicFixedSize, "topics count")
	*l = nil
	for i := 0; i < n && r.Err() == nil; i++ {
		var t Topic
		t.read(&r)
		*l = append(*l, t)
	}
	return r.Err()
}
