package wire

// GroupRequest is the body [stream][topic][group] of get, delete, join,
// leave and sync consumer group.
type GroupRequest struct {
	Stream Identifier
	Topic  Identifier
	Group  Identifier
}

// AppendTo appends the body.
func (q *GroupRequest) AppendTo(dst []byte) []byte {
	return q.Group.AppendTo(q.Topic.AppendTo(q.Stream.AppendTo(dst)))
}

// Decode parses the body.
func (q *GroupRequest) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Group = r.Identifier("group")
	return r.Err()
}

// CreateConsumerGroup is the create_consumer_group body.
type CreateConsumerGroup struct {
	Stream Identifier
	Topic  Identifier
	Name   string
}

// AppendTo appends the body.
func (q *CreateConsumerGroup) AppendTo(dst []byte) []byte {
	return AppendName(q.Topic.AppendTo(q.Stream.AppendTo(dst)), q.Name)
}

// Decode parses the body.
func (q *CreateConsumerGroup) Decode(b []byte) error {
	r := NewReader(b)
	q.Stream = r.Identifier("stream")
	q.Topic = r.Identifier("topic")
	q.Name = r.Name("name")
	return r.Err()
}

// ConsumerGroup is one group in a reply.
type ConsumerGroup struct {
	ID              uint32
	PartitionsCount uint32
	MembersCount    uint32
	Name            string
}

// AppendTo appends the group entry.
func (g *ConsumerGroup) AppendTo(dst []byte) []byte {
	return AppendName(appendU32(appendU32(appendU32(dst, g.ID), g.PartitionsCount), g.MembersCount), g.Name)
}

// Decode parses one group entry.
func (g *ConsumerGroup) Decode(b []byte) error {
	r := NewReader(b)
	g.read(&r)
	return r.Err()
}

func (g *ConsumerGroup) read(r *Reader) {
	g.ID = r.U32("group id")
	g.PartitionsCount = r.U32("partitions count")
	g.MembersCount = r.U32("members count")
	g.Name = r.Name("group name")
}

// GroupMember is a member with every partition it owns.
type GroupMember struct {
	ID         uint32
	Partitions []uint32
}

// ConsumerGroupDetails is the get and create consumer group reply.
type ConsumerGroupDetails struct {
	ConsumerGroup
	Members []GroupMember
}

// AppendTo appends the reply; MembersCount is written as len(Members).
func (g *ConsumerGroupDetails) AppendTo(dst []byte) []byte {
	cg := g.ConsumerGroup
	cg.MembersCount = uint32(len(g.Members))
	dst = cg.AppendTo(dst)
	for _, m := range g.Members {
		dst = appendU32(appendU32(dst, m.ID), uint32(len(m.Partitions)))
		for _, p := range m.Partitions {
			dst = appendU32(dst, p)
		}
	}
	return dst
}

// Decode parses the reply.
func (g *ConsumerGroupDetails) Decode(b []byte) error {
	r := NewReader(b)
	g.ConsumerGroup.read(&r)
	if r.Err() == nil && uint64(g.MembersCount)*8 > uint64(r.Len()) {
		r.Fail("members", "count exceeds body")
	}
	g.Members = nil
	for i := uint32(0); i < g.MembersCount && r.Err() == nil; i++ {
		m := GroupMember{ID: r.U32("member id")}
		m.Partitions = readU32s(&r, "member partitions")
		g.Members = append(g.Members, m)
	}
	return r.Err()
}

func readU32s(r *Reader, what string) []uint32 {
	n := r.Count(4, what)
	if n == 0 || r.Err() != nil {
		return nil
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = r.U32(what)
	}
	return out
}

// ConsumerGroupList is the get_consumer_groups reply: entries back to back.
type ConsumerGroupList []ConsumerGroup

// AppendTo appends the entries.
func (l *ConsumerGroupList) AppendTo(dst []byte) []byte {
	for i := range *l {
		dst = (*l)[i].AppendTo(dst)
	}
	return dst
}

// Decode parses entries until the body ends.
func (l *ConsumerGroupList) Decode(b []byte) error {
	r := NewReader(b)
	*l = nil
	for r.Len() > 0 && r.Err() == nil {
		var g ConsumerGroup
		g.read(&r)
		*l = append(*l, g)
	}
	return r.Err()
}

// GroupAssignment is the sync_consumer_group reply: the partitions the
// caller may poll now. The body is empty when the caller is not a member.
type GroupAssignment struct {
	Generation uint64
	Partitions []uint32
}

// AppendTo appends the reply.
func (a *GroupAssignment) AppendTo(dst []byte) []byte {
	dst = appendU32(appendU64(dst, a.Generation), uint32(len(a.Partitions)))
	for _, p := range a.Partitions {
		dst = appendU32(dst, p)
	}
	return dst
}

// Decode parses the reply.
func (a *GroupAssignment) Decode(b []byte) error {
	r := NewReader(b)
	a.Generation = r.U64("generation")
	a.Partitions = readU32s(&r, "partitions")
	return r.Err()
}
