package wire

// Permissions is a user's permission set: ten global flags and optional
// per-stream and per-topic grants.
type Permissions struct {
	Global  GlobalPermissions
	Streams []StreamPermissions
}

// GlobalPermissions are the server-wide flags, in wire order.
type GlobalPermissions struct {
	ManageServers bool
	ReadServers   bool
	ManageUsers   bool
	ReadUsers     bool
	ManageStreams bool
	ReadStreams   bool
	ManageTopics  bool
	ReadTopics    bool
	PollMessages  bool
	SendMessages  bool
}

// StreamPermissions are the grants on one stream, in wire order.
type StreamPermissions struct {
	StreamID     uint32
	ManageStream bool
	ReadStream   bool
	ManageTopics bool
	ReadTopics   bool
	PollMessages bool
	SendMessages bool
	Topics       []TopicPermissions
}

// TopicPermissions are the grants on one topic, in wire order.
type TopicPermissions struct {
	TopicID      uint32
	ManageTopic  bool
	ReadTopic    bool
	PollMessages bool
	SendMessages bool
}

// AllPermissions returns every global flag set, as root has them.
func AllPermissions() Permissions {
	return Permissions{Global: GlobalPermissions{true, true, true, true, true, true, true, true, true, true}}
}

// AppendTo appends the permissions block. Streams and topics form chains
// closed by a zero "has next" byte.
func (p *Permissions) AppendTo(dst []byte) []byte {
	g := p.Global
	for _, f := range [...]bool{g.ManageServers, g.ReadServers, g.ManageUsers, g.ReadUsers,
		g.ManageStreams, g.ReadStreams, g.ManageTopics, g.ReadTopics, g.PollMessages, g.SendMessages} {
		dst = appendBool(dst, f)
	}
	dst = appendBool(dst, len(p.Streams) > 0)
	for i, s := range p.Streams {
		dst = appendU32(dst, s.StreamID)
		for _, f := range [...]bool{s.ManageStream, s.ReadStream, s.ManageTopics, s.ReadTopics, s.PollMessages, s.SendMessages} {
			dst = appendBool(dst, f)
		}
		dst = appendBool(dst, len(s.Topics) > 0)
		for j, t := range s.Topics {
			dst = appendU32(dst, t.TopicID)
			dst = appendBool(dst, t.ManageTopic)
			dst = appendBool(dst, t.ReadTopic)
			dst = appendBool(dst, t.PollMessages)
			dst = appendBool(dst, t.SendMessages)
			dst = appendBool(dst, j < len(s.Topics)-1)
		}
		dst = appendBool(dst, i < len(p.Streams)-1)
	}
	return dst
}

// Decode parses a permissions block; bytes after it are ignored.
func (p *Permissions) Decode(b []byte) error {
	r := NewReader(b)
	*p = r.Permissions("permissions")
	return r.Err()
}

// Permissions reads a permissions block. Every chain element consumes
// bytes, so the chains end with the input at the latest.
func (r *Reader) Permissions(what string) Permissions {
	var p Permissions
	g := &p.Global
	for _, f := range [...]*bool{&g.ManageServers, &g.ReadServers, &g.ManageUsers, &g.ReadUsers,
		&g.ManageStreams, &g.ReadStreams, &g.ManageTopics, &g.ReadTopics, &g.PollMessages, &g.SendMessages} {
		*f = r.Bool(what)
	}
	more := r.Bool(what)
	for more && r.err == nil {
		var s StreamPermissions
		s.StreamID = r.U32(what)
		for _, f := range [...]*bool{&s.ManageStream, &s.ReadStream, &s.ManageTopics, &s.ReadTopics, &s.PollMessages, &s.SendMessages} {
			*f = r.Bool(what)
		}
		moreTopics := r.Bool(what)
		for moreTopics && r.err == nil {
			var t TopicPermissions
			t.TopicID = r.U32(what)
			t.ManageTopic = r.Bool(what)
			t.ReadTopic = r.Bool(what)
			t.PollMessages = r.Bool(what)
			t.SendMessages = r.Bool(what)
			moreTopics = r.Bool(what)
			s.Topics = append(s.Topics, t)
		}
		more = r.Bool(what)
		p.Streams = append(p.Streams, s)
	}
	if r.err != nil {
		return Permissions{}
	}
	return p
}

// appendOptionalPermissions and optionalPermissions handle the [has u8][len u32][block] form used by
// user requests and replies.
func appendOptionalPermissions(dst []byte, p *Permissions) []byte {
	if p == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1, 0, 0, 0, 0)
	lenAt := len(dst) - 4
	dst = p.AppendTo(dst)
	n := uint32(len(dst) - lenAt - 4)
	dst[lenAt], dst[lenAt+1], dst[lenAt+2], dst[lenAt+3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return dst
}

func (r *Reader) optionalPermissions(what string) *Permissions {
	if !r.Bool(what) {
		return nil
	}
	return r.permissionsBlock(what)
}

func (r *Reader) permissionsBlock(what string) *Permissions {
	n := r.U32(what)
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(r.Len()) {
		r.Fail(what, "truncated permissions")
		return nil
	}
	sub := NewReader(r.take(int(n), what))
	p := sub.Permissions(what)
	if sub.err != nil {
		r.Fail(what, "malformed permissions block")
		return nil
	}
	return &p
}
