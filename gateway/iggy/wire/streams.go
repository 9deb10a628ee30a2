package wire

// StreamRequest is the body [stream Identifier] of get_stream,
// delete_stream, purge_stream and get_topics.
type StreamRequest struct {
	Stream Identifier
}

// AppendTo appends the body.
func (q *StreamRequest) AppendTo(dst []byte) []byte { return q.Stream.AppendTo(dst) }

// Decode parses the body.
func (q *StreamRequest) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	return r.Err()
}

// CreateStream is the create_stream body: a name and an options block
// running to the end of the body.
type CreateStream struct {
	Name    string
	Options []byte
}

// AppendTo appends the body.
func (q *CreateStream) AppendTo(dst []byte) []byte {
	return append(AppendName(dst, q.Name), q.Options...)
}

// Decode parses the body and validates the options block.
func (q *CreateStream) Decode(b []byte) error {
	r := NewReader(b)
	q.Name = r.Name("name")
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// UpdateStream is the update_stream body.
type UpdateStream struct {
	Stream  Identifier
	Name    string
	Options []byte
}

// AppendTo appends the body.
func (q *UpdateStream) AppendTo(dst []byte) []byte {
	dst = q.Stream.AppendTo(dst)
	return append(AppendName(dst, q.Name), q.Options...)
}

// Decode parses the body and validates the options block.
func (q *UpdateStream) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Name = r.Name("name")
	q.Options = r.OptionsTail("options")
	return r.Err()
}

// Stream is one stream in a reply.
type Stream struct {
	ID            uint32
	CreatedAt     uint64 // µs since the epoch
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	Options       []byte
}

// AppendTo appends the stream entry.
func (s *Stream) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, s.ID)
	dst = appendU64(dst, s.CreatedAt)
	dst = appendU32(dst, s.TopicsCount)
	dst = appendU64(dst, s.SizeBytes)
	dst = appendU64(dst, s.MessagesCount)
	dst = AppendName(dst, s.Name)
	return AppendOptionsPrefixed(dst, s.Options)
}

// Decode parses one stream entry.
func (s *Stream) Decode(b []byte) error {
	r := NewReader(b)
	s.read(&r)
	return r.Err()
}

func (s *Stream) read(r *Reader) {
	s.ID = r.U32("stream id")
	s.CreatedAt = r.U64("created at")
	s.TopicsCount = r.U32("topics count")
	s.SizeBytes = r.U64("size bytes")
	s.MessagesCount = r.U64("messages count")
	s.Name = r.Name("stream name")
	s.Options = r.OptionsPrefixed("stream options")
}

// StreamDetails is the get_stream and create_stream reply: a stream and
// exactly TopicsCount topics.
type StreamDetails struct {
	Stream
	Topics []Topic
}

// AppendTo appends the reply; TopicsCount is written as len(Topics).
func (s *StreamDetails) AppendTo(dst []byte) []byte {
	st := s.Stream
	st.TopicsCount = uint32(len(s.Topics))
	dst = st.AppendTo(dst)
	for i := range s.Topics {
		dst = s.Topics[i].AppendTo(dst)
	}
	return dst
}

// Decode parses the reply.
func (s *StreamDetails) Decode(b []byte) error {
	r := NewReader(b)
	s.Stream.read(&r)
	if r.Err() == nil && uint64(s.TopicsCount)*topicFixedSize > uint64(r.Len()) {
		r.Fail("topics", "count exceeds body")
	}
	s.Topics = nil
	for i := uint32(0); i < s.TopicsCount && r.Err() == nil; i++ {
		var t Topic
		t.read(&r)
		s.Topics = append(s.Topics, t)
	}
	return r.Err()
}

// StreamList is the get_streams reply: stream entries back to back.
type StreamList []Stream

// AppendTo appends the entries.
func (l *StreamList) AppendTo(dst []byte) []byte {
	for i := range *l {
		dst = (*l)[i].AppendTo(dst)
	}
	return dst
}

// Decode parses entries until the body ends.
func (l *StreamList) Decode(b []byte) error {
	r := NewReader(b)
	*l = nil
	for r.Len() > 0 && r.Err() == nil {
		var s Stream
		s.read(&r)
		*l = append(*l, s)
	}
	return r.Err()
}
