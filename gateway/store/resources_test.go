package store

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

func TestStreamLifecycle(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)

	a := mustCreateStream(t, c, "alpha")
	b := mustCreateStream(t, c, "beta")
	if a.ID != 0 || b.ID != 1 {
		t.Fatalf("stream ids %d, %d; want 0, 1", a.ID, b.ID)
	}
	wantStatus(t, c.do(wire.CmdCreateStream, (&wire.CreateStream{Name: "alpha"}).AppendTo(nil)), wire.StreamNameAlreadyExists)

	var d wire.StreamDetails
	if err := d.Decode(ok(t, c.do(wire.CmdGetStream, (&wire.StreamRequest{Stream: wire.NamedID("beta")}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if d.ID != 1 || d.Name != "beta" {
		t.Fatalf("get_stream by name: %+v", d)
	}
	if body := ok(t, c.do(wire.CmdGetStream, (&wire.StreamRequest{Stream: wire.NumericID(9)}).AppendTo(nil))); len(body) != 0 {
		t.Fatalf("missing stream: body %d bytes, want empty", len(body))
	}

	ok(t, c.do(wire.CmdUpdateStream, (&wire.UpdateStream{Stream: wire.NumericID(0), Name: "gamma"}).AppendTo(nil)))
	wantStatus(t, c.do(wire.CmdUpdateStream, (&wire.UpdateStream{Stream: wire.NumericID(0), Name: "beta"}).AppendTo(nil)), wire.StreamNameAlreadyExists)
	wantStatus(t, c.do(wire.CmdUpdateStream, (&wire.UpdateStream{Stream: wire.NumericID(7), Name: "x"}).AppendTo(nil)), wire.StreamIDNotFound)

	var list wire.StreamList
	if err := list.Decode(ok(t, c.do(wire.CmdGetStreams, nil))); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "gamma" || list[1].Name != "beta" {
		t.Fatalf("streams %+v", list)
	}

	// The lowest freed id is reused.
	ok(t, c.do(wire.CmdDeleteStream, (&wire.StreamRequest{Stream: wire.NumericID(0)}).AppendTo(nil)))
	wantStatus(t, c.do(wire.CmdDeleteStream, (&wire.StreamRequest{Stream: wire.NumericID(0)}).AppendTo(nil)), wire.StreamIDNotFound)
	if again := mustCreateStream(t, c, "delta"); again.ID != 0 {
		t.Fatalf("reused id %d, want 0", again.ID)
	}
}

func TestTopicLifecycleAndPartitions(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	mustCreateStream(t, c, "s")
	sid := wire.NumericID(0)

	td := mustCreateTopic(t, c, sid, "orders", 3)
	if td.ID != 0 || len(td.Partitions) != 3 || td.Partitions[2].ID != 2 {
		t.Fatalf("create topic reply %+v", td)
	}
	if _, ok := wire.LookupTLV(td.DerivedOptions, wire.OptSegmentSize); !ok {
		t.Fatalf("derived options lack segment_size")
	}
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid, PartitionsCount: 1, Name: "orders"}).AppendTo(nil)), wire.TopicNameAlreadyExists)
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: wire.NumericID(5), PartitionsCount: 1, Name: "x"}).AppendTo(nil)), wire.StreamIDNotFound)
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid, PartitionsCount: 1001, Name: "x"}).AppendTo(nil)), wire.TooManyPartitions)
	bad := wire.AppendTLV(nil, wire.StringEntry("no_such_key", "1"))
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid, PartitionsCount: 1, Name: "x", Options: bad}).AppendTo(nil)), wire.UnsupportedOptionKey)
	odd := wire.AppendTLV(nil, wire.Uint64Entry(wire.OptSegmentSize, 1<<20+1))
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid, PartitionsCount: 1, Name: "x", Options: odd}).AppendTo(nil)), wire.InvalidOptionValue)
	small := wire.AppendTLV(nil, wire.Uint64Entry(wire.OptMaxTopicSize, 1000))
	wantStatus(t, c.do(wire.CmdCreateTopic, (&wire.CreateTopic{Stream: sid, PartitionsCount: 1, Name: "x", Options: small}).AppendTo(nil)), wire.InvalidTopicSize)

	tid := wire.NamedID("orders")
	topicReq := (&wire.TopicRequest{Stream: sid, Topic: tid}).AppendTo(nil)
	ok(t, c.do(wire.CmdCreatePartitions, (&wire.PartitionsRequest{Stream: sid, Topic: tid, Count: 2}).AppendTo(nil)))
	ok(t, c.do(wire.CmdDeletePartitions, (&wire.PartitionsRequest{Stream: sid, Topic: tid, Count: 1}).AppendTo(nil)))
	wantStatus(t, c.do(wire.CmdDeletePartitions, (&wire.PartitionsRequest{Stream: sid, Topic: tid, Count: 9}).AppendTo(nil)), wire.InvalidPartitionsCount)
	wantStatus(t, c.do(wire.CmdCreatePartitions, (&wire.PartitionsRequest{Stream: sid, Topic: tid, Count: 0}).AppendTo(nil)), wire.TooManyPartitions)
	var got wire.TopicDetails
	if err := got.Decode(ok(t, c.do(wire.CmdGetTopic, topicReq))); err != nil {
		t.Fatal(err)
	}
	if got.PartitionsCount != 4 || len(got.Partitions) != 4 || got.Partitions[3].ID != 3 || got.Partitions[0].SegmentsCount < 1 {
		t.Fatalf("after partition changes: %+v", got)
	}

	// Updatable option keys only.
	exp := wire.AppendTLV(nil, wire.Uint64Entry(wire.OptMessageExpiry, 5_000_000))
	ok(t, c.do(wire.CmdUpdateTopic, (&wire.UpdateTopic{Stream: sid, Topic: tid, Name: "orders2", Options: exp}).AppendTo(nil)))
	seg := wire.AppendTLV(nil, wire.Uint64Entry(wire.OptSegmentSize, 1<<20))
	wantStatus(t, c.do(wire.CmdUpdateTopic, (&wire.UpdateTopic{Stream: sid, Topic: wire.NumericID(0), Name: "orders2", Options: seg}).AppendTo(nil)), wire.UnsupportedOptionKey)
	if err := got.Decode(ok(t, c.do(wire.CmdGetTopic, (&wire.TopicRequest{Stream: sid, Topic: wire.NumericID(0)}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if got.Name != "orders2" || got.MessageExpiry != 5_000_000 {
		t.Fatalf("after update: %+v", got.Topic)
	}
	if _, ok := wire.LookupTLV(got.Options, wire.OptMessageExpiry); !ok {
		t.Fatalf("message_expiry not explicit after update")
	}

	var topics wire.TopicList
	if err := topics.Decode(ok(t, c.do(wire.CmdGetTopics, (&wire.StreamRequest{Stream: sid}).AppendTo(nil)))); err != nil {
		t.Fatal(err)
	}
	if len(topics) != 1 {
		t.Fatalf("topics %+v", topics)
	}
	ok(t, c.do(wire.CmdDeleteTopic, (&wire.TopicRequest{Stream: sid, Topic: wire.NumericID(0)}).AppendTo(nil)))
	if body := ok(t, c.do(wire.CmdGetTopic, (&wire.TopicRequest{Stream: sid, Topic: wire.NumericID(0)}).AppendTo(nil))); len(body) != 0 {
		t.Fatalf("deleted topic still answers")
	}
	wantStatus(t, c.do(wire.CmdDeleteTopic, (&wire.TopicRequest{Stream: sid, Topic: wire.NumericID(0)}).AppendTo(nil)), wire.TopicIDNotFound)
}

func TestDescribeOptionsAndSystemReads(t *testing.T) {
	s := startServer(t, t.TempDir(), nil)
	c := loggedIn(t, s)
	var specs wire.OptionSpecs
	if err := specs.Decode(ok(t, c.do(wire.CmdDescribeOptions, []byte{byte(wire.ScopeTopic)}))); err != nil {
		t.Fatal(err)
	}
	if len(specs) != 8 {
		t.Fatalf("%d topic options, want 8", len(specs))
	}
	if err := specs.Decode(ok(t, c.do(wire.CmdDescribeOptions, []byte{byte(wire.ScopeStream)}))); err != nil || len(specs) != 0 {
		t.Fatalf("stream options %v %v", specs, err)
	}
	wantStatus(t, c.do(wire.CmdDescribeOptions, []byte{9}), wire.InvalidCommand)

	var md wire.ClusterMetadata
	if err := md.Decode(ok(t, c.do(wire.CmdGetClusterMetadata, nil))); err != nil {
		t.Fatal(err)
	}
	if len(md.Nodes) != 1 || md.Nodes[0].Role != wire.RoleLeader || md.Nodes[0].Status != wire.NodeHealthy {
		t.Fatalf("cluster metadata %+v", md)
	}

	mustCreateStream(t, c, "s")
	var st wire.Stats
	if err := st.Decode(ok(t, c.do(wire.CmdGetStats, nil))); err != nil {
		t.Fatal(err)
	}
	if st.StreamsCount != 1 || st.ClientsCount < 1 || st.IggyServerVersion != Version {
		t.Fatalf("stats %+v", st)
	}

	var me wire.ClientDetails
	if err := me.Decode(ok(t, c.do(wire.CmdGetMe, nil))); err != nil {
		t.Fatal(err)
	}
	if me.UserID != 0 {
		t.Fatalf("get_me user %d", me.UserID)
	}
	var clients wire.ClientList
	if err := clients.Decode(ok(t, c.do(wire.CmdGetClients, nil))); err != nil {
		t.Fatal(err)
	}
	if len(clients) != 1 || clients[0].ClientID != me.ClientID {
		t.Fatalf("clients %+v, me %+v", clients, me)
	}
	if body := ok(t, c.do(wire.CmdGetClient, (&wire.GetClient{ClientID: 999}).AppendTo(nil))); len(body) != 0 {
		t.Fatalf("unknown client answered")
	}
	wantStatus(t, c.do(wire.CmdFlushUnsavedBuffer, (&wire.FlushUnsavedBuffer{Stream: wire.NumericID(0), Topic: wire.NumericID(0)}).AppendTo(nil)), wire.FeatureUnavailable)
}
