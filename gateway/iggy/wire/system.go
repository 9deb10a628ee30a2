package wire

// GetSnapshot is the get_snapshot_file body: a compression code and the
// snapshot types wanted. The reply is ZIP archive bytes with no framing.
type GetSnapshot struct {
	Compression uint8
	Types       []uint8
}

// AppendTo appends the body; at most 255 types are sent.
func (q *GetSnapshot) AppendTo(dst []byte) []byte {
	t := q.Types
	if len(t) > 255 {
		t = t[:255]
	}
	return append(append(dst, q.Compression, byte(len(t))), t...)
}

// Decode parses the body; Types aliases b.
func (q *GetSnapshot) Decode(b []byte) error {
	r := NewReader(b)
	q.Compression = r.U8("compression")
	q.Types = r.Bytes(int(r.U8("types count")), "types")
	return r.Err()
}

// OptionsScope selects the catalog DescribeOptions returns.
type OptionsScope uint8

// Option scopes.
const (
	ScopeTopic  OptionsScope = 1
	ScopeStream OptionsScope = 2
	ScopeUser   OptionsScope = 3
)

// DescribeOptions is the describe_options body.
type DescribeOptions struct {
	Scope OptionsScope
}

// AppendTo appends the body.
func (q *DescribeOptions) AppendTo(dst []byte) []byte { return append(dst, byte(q.Scope)) }

// Decode parses the body. An unknown scope decodes; the server answers it
// with InvalidCommand.
func (q *DescribeOptions) Decode(b []byte) error {
	r := NewReader(b)
	q.Scope = OptionsScope(r.U8("scope"))
	return r.Err()
}

// GetClient is the get_client body.
type GetClient struct {
	ClientID uint32
}

// AppendTo appends the body.
func (q *GetClient) AppendTo(dst []byte) []byte { return appendU32(dst, q.ClientID) }

// Decode parses the body.
func (q *GetClient) Decode(b []byte) error {
	r := NewReader(b)
	q.ClientID = r.U32("client id")
	return r.Err()
}

// CacheMetric is one entry of Stats.CacheMetrics (32 bytes).
type CacheMetric struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Hits        uint64
	Misses      uint64
	HitRatio    float32
}

// Stats is the get_stats reply.
type Stats struct {
	ProcessID           uint32
	CPUUsage            float32
	TotalCPUUsage       float32
	MemoryUsage         uint64
	TotalMemory         uint64
	AvailableMemory     uint64
	RunTime             uint64
	StartTime           uint64
	ReadBytes           uint64
	WrittenBytes        uint64
	MessagesSizeBytes   uint64
	StreamsCount        uint32
	TopicsCount         uint32
	PartitionsCount     uint32
	SegmentsCount       uint32
	MessagesCount       uint64
	ClientsCount        uint32
	ConsumerGroupsCount uint32
	Hostname            string
	OSName              string
	OSVersion           string
	KernelVersion       string
	IggyServerVersion   string
	// IggyServerSemver is major·10^6 + minor·10^3 + patch, 0 when unknown.
	IggyServerSemver uint32
	CacheMetrics     []CacheMetric
	ThreadsCount     uint32
	FreeDiskSpace    uint64
	TotalDiskSpace   uint64
}

// AppendTo appends the reply.
func (s *Stats) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, s.ProcessID)
	dst = appendU32(dst, f32bits(s.CPUUsage))
	dst = appendU32(dst, f32bits(s.TotalCPUUsage))
	for _, v := range [...]uint64{s.MemoryUsage, s.TotalMemory, s.AvailableMemory, s.RunTime,
		s.StartTime, s.ReadBytes, s.WrittenBytes, s.MessagesSizeBytes} {
		dst = appendU64(dst, v)
	}
	for _, v := range [...]uint32{s.StreamsCount, s.TopicsCount, s.PartitionsCount, s.SegmentsCount} {
		dst = appendU32(dst, v)
	}
	dst = appendU64(dst, s.MessagesCount)
	dst = appendU32(dst, s.ClientsCount)
	dst = appendU32(dst, s.ConsumerGroupsCount)
	for _, v := range [...]string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.IggyServerVersion} {
		dst = appendString32(dst, v)
	}
	dst = appendU32(dst, s.IggyServerSemver)
	dst = appendU32(dst, uint32(len(s.CacheMetrics)))
	for _, m := range s.CacheMetrics {
		dst = appendU32(appendU32(appendU32(dst, m.StreamID), m.TopicID), m.PartitionID)
		dst = appendU32(appendU64(appendU64(dst, m.Hits), m.Misses), f32bits(m.HitRatio))
	}
	dst = appendU32(dst, s.ThreadsCount)
	return appendU64(appendU64(dst, s.FreeDiskSpace), s.TotalDiskSpace)
}

// Decode parses the reply.
func (s *Stats) Decode(b []byte) error {
	r := NewReader(b)
	s.ProcessID = r.U32("process id")
	s.CPUUsage = r.F32("cpu usage")
	s.TotalCPUUsage = r.F32("total cpu usage")
	for _, v := range [...]*uint64{&s.MemoryUsage, &s.TotalMemory, &s.AvailableMemory, &s.RunTime,
		&s.StartTime, &s.ReadBytes, &s.WrittenBytes, &s.MessagesSizeBytes} {
		*v = r.U64("stats")
	}
	for _, v := range [...]*uint32{&s.StreamsCount, &s.TopicsCount, &s.PartitionsCount, &s.SegmentsCount} {
		*v = r.U32("stats")
	}
	s.MessagesCount = r.U64("messages count")
	s.ClientsCount = r.U32("clients count")
	s.ConsumerGroupsCount = r.U32("consumer groups count")
	for _, v := range [...]*string{&s.Hostname, &s.OSName, &s.OSVersion, &s.KernelVersion, &s.IggyServerVersion} {
		*v = r.String32("stats string")
	}
	s.IggyServerSemver = r.U32("server semver")
	n := r.Count(32, "cache metrics count")
	s.CacheMetrics = nil
	if n > 0 && r.Err() == nil {
		s.CacheMetrics = make([]CacheMetric, n)
		for i := range s.CacheMetrics {
			m := &s.CacheMetrics[i]
			m.StreamID, m.TopicID, m.PartitionID = r.U32("cache"), r.U32("cache"), r.U32("cache")
			m.Hits, m.Misses, m.HitRatio = r.U64("cache"), r.U64("cache"), r.F32("cache")
		}
	}
	s.ThreadsCount = r.U32("threads count")
	s.FreeDiskSpace = r.U64("free disk space")
	s.TotalDiskSpace = r.U64("total disk space")
	return r.Err()
}

// Cluster node roles and statuses.
const (
	RoleLeader   uint8 = 0
	RoleFollower uint8 = 1

	NodeHealthy     uint8 = 0
	NodeStarting    uint8 = 1
	NodeStopping    uint8 = 2
	NodeUnreachable uint8 = 3
	NodeMaintenance uint8 = 4
)

// MaxClusterNodes is the most nodes the official Go SDK accepts.
const MaxClusterNodes = 64

// ClusterNode is one node of ClusterMetadata.
type ClusterNode struct {
	Name          string
	IP            string
	TCPPort       uint16
	QUICPort      uint16
	HTTPPort      uint16
	WebSocketPort uint16
	Role          uint8
	Status        uint8
}

// ClusterMetadata is the get_cluster_metadata reply.
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

// SingleNodeMetadata is what a non-clustered server reports: one healthy
// leader, so that clients stay where they are.
func SingleNodeMetadata(ip string, tcpPort uint16) ClusterMetadata {
	return ClusterMetadata{Name: "single-node", Nodes: []ClusterNode{{
		Name: "iggy-node", IP: ip, TCPPort: tcpPort, Role: RoleLeader, Status: NodeHealthy,
	}}}
}

// AppendTo appends the reply.
func (m *ClusterMetadata) AppendTo(dst []byte) []byte {
	dst = appendString32(dst, m.Name)
	dst = appendU32(dst, uint32(len(m.Nodes)))
	for _, n := range m.Nodes {
		dst = appendString32(appendString32(dst, n.Name), n.IP)
		for _, p := range [...]uint16{n.TCPPort, n.QUICPort, n.HTTPPort, n.WebSocketPort} {
			dst = appendU16(dst, p)
		}
		dst = append(dst, n.Role, n.Status)
	}
	return dst
}

// Decode parses the reply, rejecting more than MaxClusterNodes nodes, an
// unknown role and a status above NodeMaintenance as the Go SDK does.
func (m *ClusterMetadata) Decode(b []byte) error {
	r := NewReader(b)
	m.Name = r.String32("cluster name")
	n := r.Count(18, "nodes count")
	if r.Err() == nil && n > MaxClusterNodes {
		r.Fail("nodes count", "more than 64 nodes")
	}
	m.Nodes = nil
	for i := 0; i < n && r.Err() == nil; i++ {
		var nd ClusterNode
		nd.Name = r.String32("node name")
		nd.IP = r.String32("node ip")
		nd.TCPPort, nd.QUICPort = r.U16("tcp port"), r.U16("quic port")
		nd.HTTPPort, nd.WebSocketPort = r.U16("http port"), r.U16("websocket port")
		nd.Role, nd.Status = r.U8("role"), r.U8("status")
		if r.Err() == nil && (nd.Role > RoleFollower || nd.Status > NodeMaintenance) {
			r.Fail("node", "unknown role or status")
		}
		m.Nodes = append(m.Nodes, nd)
	}
	return r.Err()
}

// Client transports.
const (
	TransportTCP       uint8 = 1
	TransportQUIC      uint8 = 2
	TransportWebSocket uint8 = 4
)

// NoUser is the user id of a connection that is not logged in.
const NoUser uint32 = 0xFFFFFFFF

// ClientInfo is one connection in a clients reply.
type ClientInfo struct {
	ClientID            uint32
	UserID              uint32
	Transport           uint8
	Address             string
	ConsumerGroupsCount uint32
}

func (c *ClientInfo) appendTo(dst []byte) []byte {
	dst = appendU32(appendU32(dst, c.ClientID), c.UserID)
	dst = appendString32(append(dst, c.Transport), c.Address)
	return appendU32(dst, c.ConsumerGroupsCount)
}

func (c *ClientInfo) read(r *Reader) {
	c.ClientID = r.U32("client id")
	c.UserID = r.U32("user id")
	c.Transport = r.U8("transport")
	c.Address = r.String32("address")
	c.ConsumerGroupsCount = r.U32("consumer groups count")
}

// ClientGroup is a consumer group a client belongs to.
type ClientGroup struct {
	StreamID, TopicID, GroupID uint32
}

// ClientDetails is the get_client and get_me reply.
type ClientDetails struct {
	ClientInfo
	Groups []ClientGroup
}

// AppendTo appends the reply; ConsumerGroupsCount is written as len(Groups).
func (c *ClientDetails) AppendTo(dst []byte) []byte {
	ci := c.ClientInfo
	ci.ConsumerGroupsCount = uint32(len(c.Groups))
	dst = ci.appendTo(dst)
	for _, g := range c.Groups {
		dst = appendU32(appendU32(appendU32(dst, g.StreamID), g.TopicID), g.GroupID)
	}
	return dst
}

// Decode parses the reply.
func (c *ClientDetails) Decode(b []byte) error {
	r := NewReader(b)
	c.ClientInfo.read(&r)
	if r.Err() == nil && uint64(c.ConsumerGroupsCount)*12 > uint64(r.Len()) {
		r.Fail("consumer groups", "count exceeds body")
	}
	c.Groups = nil
	if c.ConsumerGroupsCount > 0 && r.Err() == nil {
		c.Groups = make([]ClientGroup, c.ConsumerGroupsCount)
		for i := range c.Groups {
			c.Groups[i] = ClientGroup{r.U32("stream id"), r.U32("topic id"), r.U32("group id")}
		}
	}
	return r.Err()
}

// ClientList is the get_clients reply: entries back to back.
type ClientList []ClientInfo

// AppendTo appends the entries.
func (l *ClientList) AppendTo(dst []byte) []byte {
	for i := range *l {
		dst = (*l)[i].appendTo(dst)
	}
	return dst
}

// Decode parses entries until the body ends.
func (l *ClientList) Decode(b []byte) error {
	r := NewReader(b)
	*l = nil
	for r.Len() > 0 && r.Err() == nil {
		var c ClientInfo
		c.read(&r)
		*l = append(*l, c)
	}
	return r.Err()
}
