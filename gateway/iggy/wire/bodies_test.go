package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var opts = AppendTLV(nil, StringEntry(OptCompressionAlgorithm, "gzip"), Uint64Entry(OptMessageExpiry, 10))

func sampleTopic(id uint32) Topic {
	return Topic{ID: id, CreatedAt: 1_700_000_000_000_000, PartitionsCount: 2, MessageExpiry: Unlimited,
		CompressionAlgorithm: CompressionGzip, MaxTopicSize: UseServerDefault, SizeBytes: 77, MessagesCount: 5,
		Name: "orders", Options: opts, DerivedOptions: AppendTLV(nil, BoolEntry(OptEnforceFsync, false))}
}

// bodySamples holds one fully populated value of every body type. strict
// marks bodies whose every proper prefix must fail to decode (bodies whose
// last field runs to the end, or lists, can end anywhere at an entry).
func bodySamples() []struct {
	name   string
	body   Body
	strict bool
} {
	perms := &Permissions{Global: GlobalPermissions{ReadStreams: true},
		Streams: []StreamPermissions{{StreamID: 2, PollMessages: true, Topics: []TopicPermissions{{TopicID: 1, ReadTopic: true}}}}}
	consumer := Consumer{Kind: ConsumerKindGroup, ID: NamedID("workers")}
	s, tp := NumericID(1), NamedID("orders")
	batch := bytes.Repeat([]byte{0xAB}, 300)
	return []struct {
		name   string
		body   Body
		strict bool
	}{
		{"PasswordLogin", &PasswordLogin{OurClientVersion(), "iggy", "iggy", "ctx"}, true},
		{"TokenLogin", &TokenLogin{OurClientVersion(), "token", ""}, true},
		{"LoginReply", &LoginReply{UserID: 0, Session: 42, ServerProtocolVersion: ProtocolVersion, ServerVersion: "0.9.0"}, true},
		{"GetSnapshot", &GetSnapshot{Compression: 1, Types: []uint8{1, 100}}, true},
		{"DescribeOptions", &DescribeOptions{Scope: ScopeTopic}, true},
		{"GetClient", &GetClient{ClientID: 7}, true},
		{"UserRequest", &UserRequest{User: NamedID("bob")}, true},
		{"CreateUser", &CreateUser{Username: "bob", Password: "pw", Status: UserStatusActive, Permissions: perms, Options: []byte{}}, false},
		{"CreateUserNoPerms", &CreateUser{Username: "bob", Password: "", Status: UserStatusInactive, Options: []byte{}}, false},
		{"UpdateUser", &UpdateUser{User: NumericID(3), HasUsername: true, Username: "al", HasStatus: true, Status: 2, Options: []byte{}}, false},
		{"UpdatePermissions", &UpdatePermissions{User: NumericID(3), Permissions: perms}, true},
		{"ChangePassword", &ChangePassword{User: NumericID(3), CurrentPassword: "a", NewPassword: "b"}, true},
		{"CreatePAT", &CreatePersonalAccessToken{Name: "ci", Expiry: Unlimited}, true},
		{"DeletePAT", &DeletePersonalAccessToken{Name: "ci"}, true},
		{"RawToken", &RawToken{Token: "abc"}, true},
		{"PATList", &PersonalAccessTokenList{{"a", 0}, {"b", 99}}, false},
		{"PollMessages", &PollMessages{Consumer: consumer, Stream: s, Topic: tp, Partition: SomePartition(1),
			Strategy: PollingStrategy{PollNext, 0}, Count: 100, AutoCommit: true}, true},
		{"SendMessages", &SendMessages{Stream: s, Topic: tp, Partitioning: Partitioning{Kind: PartitionByMessageKey, Key: []byte("k1")},
			MessagesCount: 2, Batch: batch}, false},
		{"SendMessagesReply", &SendMessagesReply{{1, 2, 3, 4}, {1, 2, 0, 9}}, true},
		{"PollReply", &PollReply{PollReplyPrefix{PartitionID: 1, CurrentOffset: 9, MessagesCount: 2}, batch}, false},
		{"FlushUnsavedBuffer", &FlushUnsavedBuffer{Stream: s, Topic: tp, PartitionID: 1, Fsync: true}, true},
		{"GetConsumerOffset", &GetConsumerOffset{consumer, s, tp, SomePartition(0)}, true},
		{"StoreConsumerOffset", &StoreConsumerOffset{consumer, s, tp, SomePartition(0), 42, AckQuorum}, true},
		{"DeleteConsumerOffset", &DeleteConsumerOffset{Consumer{ConsumerKindSingle, NumericID(1)}, s, tp, OptionalPartition{}, AckNone}, true},
		{"ConsumerOffset", &ConsumerOffset{1, 10, 7}, true},
		{"StreamRequest", &StreamRequest{Stream: s}, true},
		{"CreateStream", &CreateStream{Name: "kafka", Options: []byte{}}, false},
		{"UpdateStream", &UpdateStream{Stream: s, Name: "kafka2", Options: []byte{}}, false},
		{"Stream", &Stream{ID: 1, CreatedAt: 2, TopicsCount: 3, SizeBytes: 4, MessagesCount: 5, Name: "kafka", Options: []byte{}}, true},
		{"StreamDetails", &StreamDetails{Stream: Stream{ID: 1, TopicsCount: 2, Name: "kafka", Options: []byte{}},
			Topics: []Topic{sampleTopic(0), sampleTopic(1)}}, true},
		{"StreamList", &StreamList{{ID: 1, Name: "a", Options: []byte{}}, {ID: 2, Name: "b", Options: opts}}, false},
		{"TopicRequest", &TopicRequest{Stream: s, Topic: tp}, true},
		{"CreateTopic", &CreateTopic{Stream: s, PartitionsCount: 3, Name: "orders", Options: opts}, false},
		{"UpdateTopic", &UpdateTopic{Stream: s, Topic: tp, Name: "orders", Options: opts}, false},
		{"PartitionsRequest", &PartitionsRequest{Stream: s, Topic: tp, Count: 2}, true},
		{"DeleteSegments", &DeleteSegments{Stream: s, Topic: tp, PartitionID: 1, SegmentsCount: 2}, true},
		{"Topic", func() *Topic { t := sampleTopic(4); return &t }(), true},
		{"TopicDetails", &TopicDetails{Topic: sampleTopic(0), Partitions: []Partition{{0, 1, 1, 5, 100, 6}, {1, 1, 1, 0, 0, 0}}}, false},
		{"TopicList", &TopicList{sampleTopic(0), sampleTopic(1)}, true},
		{"Partition", &Partition{1, 2, 3, 4, 5, 6}, true},
		{"GroupRequest", &GroupRequest{Stream: s, Topic: tp, Group: NamedID("g")}, true},
		{"CreateConsumerGroup", &CreateConsumerGroup{Stream: s, Topic: tp, Name: "g"}, true},
		{"ConsumerGroup", &ConsumerGroup{ID: 0, PartitionsCount: 3, MembersCount: 0, Name: "g"}, true},
		{"ConsumerGroupDetails", &ConsumerGroupDetails{ConsumerGroup{1, 3, 2, "g"},
			[]GroupMember{{0, []uint32{0, 2}}, {1, []uint32{1}}}}, true},
		{"ConsumerGroupList", &ConsumerGroupList{{0, 1, 1, "a"}, {1, 2, 0, "b"}}, false},
		{"GroupAssignment", &GroupAssignment{Generation: 3, Partitions: []uint32{0, 1}}, true},
		{"Stats", &Stats{ProcessID: 1, CPUUsage: 0.5, TotalCPUUsage: 1.5, MemoryUsage: 3, TotalMemory: 4, AvailableMemory: 5,
			RunTime: 6, StartTime: 7, ReadBytes: 8, WrittenBytes: 9, MessagesSizeBytes: 10, StreamsCount: 11, TopicsCount: 12,
			PartitionsCount: 13, SegmentsCount: 14, MessagesCount: 15, ClientsCount: 16, ConsumerGroupsCount: 17,
			Hostname: "h", OSName: "linux", OSVersion: "6", KernelVersion: "6.1", IggyServerVersion: "0.9.0",
			IggyServerSemver: 9000, CacheMetrics: []CacheMetric{{1, 2, 3, 4, 5, 0.25}}, ThreadsCount: 18,
			FreeDiskSpace: 19, TotalDiskSpace: 20}, true},
		{"ClusterMetadata", func() *ClusterMetadata { m := SingleNodeMetadata("127.0.0.1", 8090); return &m }(), true},
		{"ClientDetails", &ClientDetails{ClientInfo{5, NoUser, TransportTCP, "127.0.0.1:5000", 1}, []ClientGroup{{1, 2, 3}}}, true},
		{"ClientList", &ClientList{{5, 0, TransportTCP, "a", 0}, {6, 0, TransportQUIC, "b", 2}}, false},
		{"User", &User{ID: 1, CreatedAt: 2, Status: UserStatusActive, Username: "bob", Options: []byte{}}, true},
		{"UserDetails", &UserDetails{User{ID: 0, Status: 1, Username: "iggy", Options: []byte{}}, perms}, true},
		{"UserDetailsNoPerms", &UserDetails{User: User{ID: 1, Status: 1, Username: "bob", Options: []byte{}}}, false},
		{"UserList", &UserList{{ID: 0, Username: "iggy", Options: []byte{}}, {ID: 1, Username: "bob", Options: []byte{}}}, false},
		{"OptionSpecs", func() *OptionSpecs {
			l := OptionSpecs(TopicOptionCatalog())
			for i := range l {
				l[i].Updatable = false // not on the wire
			}
			return &l
		}(), true},
	}
}

func TestBodyRoundTrips(t *testing.T) {
	for _, c := range bodySamples() {
		enc := c.body.AppendTo(nil)
		// AppendTo must append, not overwrite.
		if pre := c.body.AppendTo([]byte("xyz")); !bytes.Equal(pre[3:], enc) || string(pre[:3]) != "xyz" {
			t.Errorf("%s: AppendTo does not append", c.name)
		}
		back := reflect.New(reflect.TypeOf(c.body).Elem()).Interface().(Body)
		if err := back.Decode(enc); err != nil {
			t.Errorf("%s: decode: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(back, c.body) {
			t.Errorf("%s: round trip\n got %+v\nwant %+v", c.name, back, c.body)
		}
		if again := back.AppendTo(nil); !bytes.Equal(again, enc) {
			t.Errorf("%s: re-encoding differs", c.name)
		}
		for i := 0; i < len(enc); i++ {
			err := back.Decode(enc[:i])
			if c.strict && err == nil {
				t.Errorf("%s: prefix of %d/%d bytes decoded", c.name, i, len(enc))
				break
			}
			if err != nil && !errors.Is(err, InvalidFormat) {
				t.Errorf("%s: error %v does not match InvalidFormat", c.name, err)
			}
		}
	}
}

func TestNewRequestCoversNonReplicatedAndWrites(t *testing.T) {
	for c := range commands {
		b := NewRequest(c)
		legacy := c == CmdLoginUser || c == CmdLoginWithPersonalAccessToken
		if (b == nil) != legacy {
			t.Errorf("NewRequest(%v) = %T", c, b)
		}
	}
	if NewRequest(60000) != nil {
		t.Error("unknown code")
	}
	if _, err := DecodeRequest(60000, nil); !errors.Is(err, InvalidCommand) {
		t.Error("DecodeRequest of an unknown code")
	}
	b, err := DecodeRequest(CmdGetTopic, (&TopicRequest{NumericID(1), NumericID(2)}).AppendTo(nil))
	if err != nil || b.(*TopicRequest).Topic.ID != 2 {
		t.Fatal(b, err)
	}
}

func TestMalformedBodies(t *testing.T) {
	cases := []struct {
		name string
		body Body
		in   []byte
	}{
		{"send: metadata length too long", &SendMessages{}, append([]byte{19, 0, 0, 0}, (&SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: Partitioning{Kind: PartitionBalanced}}).AppendTo(nil)[4:]...)},
		{"send: metadata length too short", &SendMessages{}, append([]byte{17, 0, 0, 0}, (&SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: Partitioning{Kind: PartitionBalanced}}).AppendTo(nil)[4:]...)},
		{"send: balanced with value", &SendMessages{}, []byte{14, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 1, 9, 0, 0, 0, 0}},
		{"send: partitioning kind 4", &SendMessages{}, []byte{18, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0}},
		{"poll: consumer kind 3", &PollMessages{}, append([]byte{3}, (&PollMessages{Stream: NumericID(1), Topic: NumericID(1)}).AppendTo(nil)[1:]...)},
		{"poll: strategy kind 6", &PollMessages{}, func() []byte {
			b := (&PollMessages{Consumer: Consumer{ConsumerKindSingle, NumericID(1)}, Stream: NumericID(1), Topic: NumericID(1), Strategy: PollingStrategy{Kind: 6}}).AppendTo(nil)
			return b
		}()},
		{"create stream: empty name", &CreateStream{}, []byte{0}},
		{"create stream: bad options", &CreateStream{}, append(AppendName(nil, "s"), 2, 1, 0, 0, 0, 'k')},
		{"create topic: name not utf8", &CreateTopic{}, append(append(NumericID(1).AppendTo(nil), 1, 0, 0, 0), 1, 0xfe)},
		{"stream list: trailing garbage", &StreamList{}, append((&Stream{Name: "a"}).AppendTo(nil), 1)},
		{"topic details: partial partition", &TopicDetails{}, append(func() []byte { t := sampleTopic(0); return t.AppendTo(nil) }(), 1, 2, 3)},
		{"topic list: huge count", &TopicList{}, []byte{0xff, 0xff, 0xff, 0xff}},
		{"group details: huge members", &ConsumerGroupDetails{}, append((&ConsumerGroup{Name: "g", MembersCount: 1 << 30}).AppendTo(nil), 0)},
		{"assignment: huge count", &GroupAssignment{}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}},
		{"cluster: 65 nodes", &ClusterMetadata{}, func() []byte {
			m := ClusterMetadata{Name: "c"}
			for i := 0; i < 65; i++ {
				m.Nodes = append(m.Nodes, ClusterNode{Name: "n", IP: "i"})
			}
			return m.AppendTo(nil)
		}()},
		{"cluster: status 5", &ClusterMetadata{}, (&ClusterMetadata{Name: "c", Nodes: []ClusterNode{{Name: "n", Status: 5}}}).AppendTo(nil)},
		{"poll reply: 15 bytes", &PollReply{}, make([]byte, 15)},
		{"user details: bad permissions length", &UserDetails{}, append((&User{Username: "u"}).AppendTo(nil), 1, 200, 0, 0, 0, 1)},
		{"stats: huge cache count", &Stats{}, nil},
		{"options: default length past end", &OptionSpecs{}, append(AppendName([]byte{1, 0, 0, 0}, "k"), 12, 0xff, 0xff, 0, 0)},
	}
	for _, c := range cases {
		err := c.body.Decode(c.in)
		if !errors.Is(err, InvalidFormat) {
			t.Errorf("%s: Decode = %v, want InvalidFormat", c.name, err)
		}
	}
}

func TestPollPrefixAndEmptyReplies(t *testing.T) {
	b := AppendPollPrefix(nil, PollReplyPrefix{PartitionID: PartitionResync})
	if !bytes.Equal(b, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("resync prefix %v", b)
	}
	PutPollPrefix(b, PollReplyPrefix{PartitionID: 1, CurrentOffset: 2, MessagesCount: 3})
	var p PollReply
	if err := p.Decode(b); err != nil || p.PartitionID != 1 || p.CurrentOffset != 2 || p.MessagesCount != 3 || len(p.Batches) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
	if err := p.Decode(nil); err != nil || p.MessagesCount != 0 {
		t.Fatal("empty poll body is no messages")
	}
	conf := AppendSendConfirmation(nil, SendConfirmation{1, 2, 3, 4})
	var l SendMessagesReply
	if err := l.Decode(conf); err != nil || len(l) != 1 || l[0].BaseOffset != 4 || len(conf) != 24 {
		t.Fatalf("%v %v", l, err)
	}
}

func TestSendMessagesMetadataLayout(t *testing.T) {
	q := SendMessages{Stream: NumericID(1), Topic: NumericID(2), Partitioning: Partitioning{Kind: PartitionBalanced}, MessagesCount: 2, Batch: []byte{9}}
	want := []byte{18, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 2, 0, 0, 0, 9}
	if got := q.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("send body\n got %v\nwant %v", got, want)
	}
}

func TestTopicCatalog(t *testing.T) {
	cat := TopicOptionCatalog()
	if len(cat) != 8 {
		t.Fatalf("%d keys", len(cat))
	}
	var entries []TLVEntry
	updatable := 0
	for _, o := range cat {
		entries = append(entries, o.DefaultEntry())
		if o.Updatable {
			updatable++
		}
	}
	if updatable != 3 {
		t.Errorf("%d updatable keys", updatable)
	}
	if _, err := ValidateTLVStrict(AppendTLV(nil, entries...)); err != nil {
		t.Errorf("catalog defaults do not form a valid block: %v", err)
	}
	if c, ok := OptionCatalog(ScopeStream); !ok || len(c) != 0 {
		t.Error("stream scope")
	}
	if _, ok := OptionCatalog(4); ok {
		t.Error("scope 4")
	}
}
