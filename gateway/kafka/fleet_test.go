package kafka

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeFleet is a Fleet a test changes at will.
type fakeFleet struct {
	views      atomic.Int32 // View calls
	mu         sync.Mutex
	live       []Broker
	controller int32
	self       int32
	storeLost  bool
}

func (f *fakeFleet) set(controller int32, live ...Broker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.controller, f.live = controller, live
}

func (f *fakeFleet) View() *FleetView {
	f.views.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	return &FleetView{Live: append([]Broker(nil), f.live...), Controller: f.controller, StoreLost: f.storeLost}
}

// seedRequest sends req to the server itself, not to a broker its Metadata names.
func seedRequest[R kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(R)
}

func startFleetServer(t *testing.T) (*testServer, *fakeFleet, *kgo.Client) {
	t.Helper()
	fl := &fakeFleet{self: 1}
	configured := []Broker{{1, "127.0.0.1", 1}, {2, "127.0.0.1", 2}, {3, "127.0.0.1", 3}, {4, "127.0.0.1", 4}}
	ts := startServer(t, func(c *Config) { c.Fleet, c.Brokers = fl, configured })
	cl := ts.client(t)
	createTopicIn(t, ts, "t", 12)
	return ts, fl, cl
}

// createTopicIn creates a topic in the storage directly, whatever the fleet says.
func createTopicIn(t *testing.T, ts *testServer, name string, partitions int32) {
	t.Helper()
	if err := ts.storage.CreateTopic(testCtx(t), name, partitions, nil, false); err != nil {
		t.Fatal(err)
	}
}

func metadataOf(t *testing.T, cl *kgo.Client) *kmsg.MetadataResponse {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr("t")
	req.Topics = append(req.Topics, rt)
	return seedRequest[*kmsg.MetadataResponse](t, cl, req)
}

func TestMetadataListsLiveBrokersAndHashesLeadersOverThem(t *testing.T) {
	_, fl, cl := startFleetServer(t)
	for _, live := range [][]Broker{
		{{3, "h3", 93}, {1, "h1", 91}},
		{{1, "h1", 91}, {2, "h2", 92}, {3, "h3", 93}},
		{{2, "h2", 92}},
	} {
		fl.set(2, live...)
		resp := metadataOf(t, cl)
		var got []int32
		for _, b := range resp.Brokers {
			got = append(got, b.NodeID)
		}
		want := map[int32]Broker{}
		for _, b := range live {
			want[b.NodeID] = b
		}
		if len(got) != len(live) {
			t.Fatalf("live %v: Metadata lists brokers %v", live, got)
		}
		for i, b := range resp.Brokers {
			w, ok := want[b.NodeID]
			if !ok || w.Host != b.Host || w.Port != b.Port || (i > 0 && resp.Brokers[i-1].NodeID >= b.NodeID) {
				t.Fatalf("live %v: Metadata lists %+v (want each live broker once, by node id)", live, resp.Brokers)
			}
		}
		if resp.ControllerID != 2 {
			t.Errorf("controller %d, the fleet says 2", resp.ControllerID)
		}
		listed := make([]Broker, len(resp.Brokers))
		for i, b := range resp.Brokers {
			listed[i] = Broker{NodeID: b.NodeID}
		}
		rule := partitionLeaders("t", int32(len(resp.Topics[0].Partitions)), listed)
		leaders := map[int32]bool{}
		for _, p := range resp.Topics[0].Partitions {
			want := rule[p.Partition]
			if p.Leader != want {
				t.Errorf("live %v: partition %d led by %d, the rule names %d", got, p.Partition, p.Leader, want)
			}
			if _, ok := liveBroker(want, live); !ok {
				t.Errorf("partition %d led by %d, which is not live", p.Partition, p.Leader)
			}
			leaders[p.Leader] = true
		}
		if len(leaders) != len(live) {
			t.Errorf("live %v: 12 partitions led by %v only", got, leaders)
		}
	}
}

// A request takes one view of the fleet, however many partitions it names: Metadata of a topic
// of 12 partitions and DeleteRecords of all 12 each read Fleet.View once.
func TestOneFleetViewPerRequest(t *testing.T) {
	_, fl, cl := startFleetServer(t)
	fl.set(1, Broker{1, "127.0.0.1", 1}, Broker{2, "127.0.0.1", 2}, Broker{3, "127.0.0.1", 3})
	before := fl.views.Load()
	if resp := metadataOf(t, cl); len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 12 {
		t.Fatalf("metadata: %+v", resp.Topics)
	}
	if n := fl.views.Load() - before; n != 1 {
		t.Fatalf("Metadata of 12 partitions read the fleet's view %d times, want 1", n)
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "t"
	for p := range int32(12) {
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = p, 0
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	before = fl.views.Load()
	resp := seedRequest[*kmsg.DeleteRecordsResponse](t, cl, req)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 12 {
		t.Fatalf("DeleteRecords answered %+v", resp.Topics)
	}
	if n := fl.views.Load() - before; n != 1 {
		t.Fatalf("DeleteRecords of 12 partitions read the fleet's view %d times, want 1", n)
	}
}

func liveBroker(id int32, live []Broker) (Broker, bool) {
	for _, b := range live {
		if b.NodeID == id {
			return b, true
		}
	}
	return Broker{}, false
}

func TestMetadataFallsBackToConfiguredBrokersWhileTheFleetIsUnknown(t *testing.T) {
	_, fl, cl := startFleetServer(t)
	fl.set(-1)
	resp := metadataOf(t, cl)
	if len(resp.Brokers) != 4 || resp.ControllerID != -1 {
		t.Fatalf("with no live view: brokers %+v, controller %d; want the 4 configured and -1", resp.Brokers, resp.ControllerID)
	}
}

func TestDescribeClusterFollowsTheFleet(t *testing.T) {
	_, fl, cl := startFleetServer(t)
	fl.set(3, Broker{3, "h3", 93}, Broker{1, "h1", 91})
	resp := seedRequest[*kmsg.DescribeClusterResponse](t, cl, kmsg.NewPtrDescribeClusterRequest())
	if resp.ControllerID != 3 || len(resp.Brokers) != 2 || resp.Brokers[0].NodeID != 1 || resp.Brokers[1].NodeID != 3 {
		t.Fatalf("DescribeCluster: controller %d, brokers %+v", resp.ControllerID, resp.Brokers)
	}
}

func TestTopicChangesOnlyOnTheController(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	create := func() int16 {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new", 2, 1
		req.Topics = append(req.Topics, rt)
		return seedRequest[*kmsg.CreateTopicsResponse](t, cl, req).Topics[0].ErrorCode
	}
	grow := func() int16 {
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "t", 20
		req.Topics = append(req.Topics, rt)
		return seedRequest[*kmsg.CreatePartitionsResponse](t, cl, req).Topics[0].ErrorCode
	}
	del := func() int16 {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TopicNames = []string{"t"}
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr("t")
		req.Topics = append(req.Topics, rt)
		return seedRequest[*kmsg.DeleteTopicsResponse](t, cl, req).Topics[0].ErrorCode
	}
	partitionsOf := func(name string) int32 {
		info, err := ts.storage.Topic(testCtx(t), name, false)
		if err != nil {
			return -1
		}
		return info.Partitions
	}

	for _, controller := range []int32{2, -1} {
		fl.set(controller, Broker{1, "h1", 91}, Broker{2, "h2", 92})
		for name, call := range map[string]func() int16{"CreateTopics": create, "CreatePartitions": grow, "DeleteTopics": del} {
			if code := call(); code != kerr.NotController.Code {
				t.Errorf("controller %d: %s on node 1 answered %d, want NOT_CONTROLLER", controller, name, code)
			}
		}
		if partitionsOf("new") != -1 || partitionsOf("t") != 12 {
			t.Fatalf("a refused change changed the topics: new %d, t %d partitions", partitionsOf("new"), partitionsOf("t"))
		}
	}

	fl.set(1, Broker{1, "h1", 91})
	if code := create(); code != 0 || partitionsOf("new") != 2 {
		t.Fatalf("CreateTopics on the controller: code %d, %d partitions", code, partitionsOf("new"))
	}
	if code := grow(); code != 0 || partitionsOf("t") != 20 {
		t.Fatalf("CreatePartitions on the controller: code %d, %d partitions", code, partitionsOf("t"))
	}
	if code := del(); code != 0 || partitionsOf("t") != -1 {
		t.Fatalf("DeleteTopics on the controller: code %d", code)
	}
}

// Kafka refuses a replication factor above its live brokers with INVALID_REPLICATION_FACTOR,
// for real and with validate_only; the gateway counts the gateways Metadata lists.
func TestCreateTopicsReplicationFactorUpToLiveGateways(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92})
	create := func(name string, rf int16, validateOnly bool) *kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validateOnly
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, rf
		req.Topics = append(req.Topics, rt)
		return &seedRequest[*kmsg.CreateTopicsResponse](t, cl, req).Topics[0]
	}
	exists := func(name string) bool {
		_, err := ts.storage.Topic(testCtx(t), name, false)
		return err == nil
	}
	for _, validateOnly := range []bool{true, false} {
		for _, rf := range []int16{3, 4, 100} {
			if st := create("rf", rf, validateOnly); st.ErrorCode != kerr.InvalidReplicationFactor.Code {
				t.Fatalf("replication factor %d over 2 gateways (validate only %v): code %d, want INVALID_REPLICATION_FACTOR", rf, validateOnly, st.ErrorCode)
			}
		}
	}
	if exists("rf") {
		t.Fatal("a refused replication factor created the topic")
	}
	for i, rf := range []int16{-1, 1, 2} {
		name := fmt.Sprintf("rf%d", i)
		if st := create(name, rf, true); st.ErrorCode != 0 || exists(name) {
			t.Fatalf("validate only, replication factor %d: code %d, created %v", rf, st.ErrorCode, exists(name))
		}
		if st := create(name, rf, false); st.ErrorCode != 0 || st.ReplicationFactor != 1 || !exists(name) {
			t.Fatalf("replication factor %d: code %d, answered factor %d, created %v; want 0, 1, true", rf, st.ErrorCode, st.ReplicationFactor, exists(name))
		}
	}
	// One more gateway in the view takes one more replica.
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92}, Broker{3, "h3", 93})
	if st := create("rf3", 3, false); st.ErrorCode != 0 {
		t.Fatalf("replication factor 3 over 3 gateways: code %d", st.ErrorCode)
	}
}
