package kafka

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kadm's elections, reassignments and their listing against one gateway (node 1, the leader
// and only replica of every partition): answered per partition, never UNSUPPORTED_VERSION.
func TestElectLeadersAndReassignments(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t)
	createTopic(t, cl, "t", 2)
	adm := kadm.NewClient(cl)
	ctx := testCtx(t)

	for _, how := range []kadm.ElectLeadersHow{kadm.ElectPreferredReplica, kadm.ElectLiveReplica} {
		res, err := adm.ElectLeaders(ctx, how, kadm.TopicsSet{"t": {0: {}, 1: {}, 7: {}}, "missing": {0: {}}, "__consumer_offsets": {3: {}}})
		if err != nil {
			t.Fatalf("elect %d: %v", how, err)
		}
		want := map[string]map[int32]error{
			"t":                  {0: kerr.ElectionNotNeeded, 1: kerr.ElectionNotNeeded, 7: kerr.UnknownTopicOrPartition},
			"missing":            {0: kerr.UnknownTopicOrPartition},
			"__consumer_offsets": {3: kerr.ElectionNotNeeded},
		}
		for topic, ps := range want {
			for p, werr := range ps {
				r, ok := res[topic][p]
				if !ok || !errors.Is(r.Err, werr) {
					t.Errorf("elect %d %s/%d: %+v (answered %v), want %v", how, topic, p, r, ok, werr)
				}
			}
		}
		if n := len(res["t"]) + len(res["missing"]) + len(res["__consumer_offsets"]); n != 5 || len(res) != 3 {
			t.Errorf("elect %d answered %d partitions of %d topics: %+v", how, n, len(res), res)
		}
	}

	// Every partition (null topics): none needed an election, so none is listed.
	all := kmsg.NewPtrElectLeadersRequest()
	all.Topics = nil
	resp, err := all.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 0 {
		t.Fatalf("elect every partition: %+v %v", resp, err)
	}
	// An election type Kafka does not have.
	bad := kmsg.NewPtrElectLeadersRequest()
	bad.ElectionType = 2
	rt := kmsg.NewElectLeadersRequestTopic()
	rt.Topic, rt.Partitions = "t", []int32{0, 0}
	bad.Topics = append(bad.Topics, rt)
	resp, err = bad.RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 ||
		resp.Topics[0].Partitions[0].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("election type 2 (partition 0 named twice): %+v %v", resp, err)
	}

	// Reassignments: to where the partition is, nothing to do; elsewhere, refused; a cancel has
	// nothing to cancel.
	var req kadm.AlterPartitionAssignmentsReq
	req.Assign("t", 0, []int32{1})
	req.Assign("t", 1, []int32{1, 2})
	req.CancelAssign("__consumer_offsets", 0)
	req.Assign("t", 9, []int32{1})
	req.Assign("missing", 0, []int32{1})
	ares, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic     string
		partition int32
		want      error
	}{
		{"t", 0, nil},
		{"t", 1, kerr.InvalidReplicaAssignment},
		{"__consumer_offsets", 0, kerr.NoReassignmentInProgress},
		{"t", 9, kerr.UnknownTopicOrPartition},
		{"missing", 0, kerr.UnknownTopicOrPartition},
	} {
		r, ok := ares[c.topic][c.partition]
		if !ok || !errors.Is(r.Err, c.want) || (c.want == nil) != (r.Err == nil) {
			t.Errorf("reassign %s/%d: %+v (answered %v), want %v", c.topic, c.partition, r, ok, c.want)
		}
	}
	if r := ares["t"][1]; r.ErrMessage == "" {
		t.Error("a refused reassignment says nothing about why")
	}
	var cancel kadm.AlterPartitionAssignmentsReq
	cancel.CancelAssign("t", 0)
	if ares, err = adm.AlterPartitionAssignments(ctx, cancel); err != nil || !errors.Is(ares["t"][0].Err, kerr.NoReassignmentInProgress) {
		t.Fatalf("cancel after a reassignment to where it was: %+v %v", ares, err)
	}
	twice := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	at := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	at.Topic = "t"
	for range 2 {
		ap := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		ap.Partition, ap.Replicas = 1, []int32{1}
		at.Partitions = append(at.Partitions, ap)
	}
	twice.Topics = append(twice.Topics, at)
	tresp, err := twice.RequestWith(ctx, cl)
	if err != nil || len(tresp.Topics) != 1 || len(tresp.Topics[0].Partitions) != 2 {
		t.Fatalf("a partition named twice: %+v %v", tresp, err)
	}
	for _, p := range tresp.Topics[0].Partitions {
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("a partition named twice: %+v", tresp)
		}
	}

	// Nothing is ever in progress, named or not.
	lres, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"t": {0: {}, 1: {}}, "missing": {0: {}}})
	if err != nil || len(lres) != 0 {
		t.Fatalf("list named: %+v %v", lres, err)
	}
	list := kmsg.NewPtrListPartitionReassignmentsRequest()
	lresp, err := list.RequestWith(ctx, cl)
	if err != nil || lresp.ErrorCode != 0 || len(lresp.Topics) != 0 {
		t.Fatalf("list every partition: %+v %v", lresp, err)
	}
}

// In a fleet, a gateway that is not the controller answers too, and the replica list a
// reassignment may name is the partition's leader in Metadata, whichever gateway that is.
func TestReassignmentsFollowTheFleetsLeaders(t *testing.T) {
	_, fl, cl := startFleetServer(t)
	fl.set(2, Broker{1, "h1", 91}, Broker{2, "h2", 92}, Broker{3, "h3", 93})
	leaders := map[int32]int32{}
	for _, p := range metadataOf(t, cl).Topics[0].Partitions {
		leaders[p.Partition] = p.Leader
	}
	if len(leaders) != 12 {
		t.Fatalf("metadata: %v", leaders)
	}
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "t"
	for p := range int32(12) {
		rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
		rp.Partition, rp.Replicas = p, []int32{leaders[p]}
		if p%2 == 1 {
			rp.Replicas = []int32{leaders[p]%3 + 1} // another live gateway
		}
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := seedRequest[*kmsg.AlterPartitionAssignmentsResponse](t, cl, req)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 12 {
		t.Fatalf("reassign at node 1, controller 2: %+v", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		want := int16(0)
		if p.Partition%2 == 1 {
			want = kerr.InvalidReplicaAssignment.Code
		}
		if p.ErrorCode != want {
			t.Errorf("partition %d (leader %d): code %d, want %d", p.Partition, leaders[p.Partition], p.ErrorCode, want)
		}
	}

	elect := kmsg.NewPtrElectLeadersRequest()
	et := kmsg.NewElectLeadersRequestTopic()
	et.Topic, et.Partitions = "t", []int32{0, 11}
	elect.Topics = append(elect.Topics, et)
	eresp := seedRequest[*kmsg.ElectLeadersResponse](t, cl, elect)
	if eresp.ErrorCode != 0 || len(eresp.Topics) != 1 || len(eresp.Topics[0].Partitions) != 2 {
		t.Fatalf("elect at node 1, controller 2: %+v", eresp)
	}
	for _, p := range eresp.Topics[0].Partitions {
		if p.ErrorCode != kerr.ElectionNotNeeded.Code {
			t.Errorf("elect partition %d: code %d", p.Partition, p.ErrorCode)
		}
	}
}

// The same requests against kfake (one broker, franz-go's fake Kafka) and the gateway. They
// agree where nothing can happen (cancels, unknown partitions, listing); they differ where kfake
// pretends to act: it answers an election NONE (rotating leaders among its brokers; with one
// broker the leader stays) and accepts a reassignment to any broker without moving anything,
// where the gateway, whose leaders follow its fleet, answers as Kafka does when there is nothing
// to elect (ELECTION_NOT_NEEDED) and refuses a move it cannot make (INVALID_REPLICA_ASSIGNMENT).
// For every partition (null topics) kfake lists each election; Kafka and the gateway leave out
// those that needed none.
func TestElectAndReassignAsKfakeDoes(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	kcl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	ts := startServer(t, func(c *Config) { c.NodeID = 0 }) // kfake's one broker is node 0
	gcl := ts.client(t)
	createTopic(t, gcl, "t", 2)
	ctx := testCtx(t)

	type answers struct {
		electT0, electMissing, electAll          string
		moveHere, moveElsewhere, cancel, missing string
		listed                                   int
	}
	ask := func(cl *kgo.Client) answers {
		t.Helper()
		adm := kadm.NewClient(cl)
		var a answers
		res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"t": {0: {}}, "missing": {0: {}}})
		if err != nil {
			t.Fatal(err)
		}
		a.electT0, a.electMissing = errName(res["t"][0].Err), errName(res["missing"][0].Err)
		all := kmsg.NewPtrElectLeadersRequest()
		resp, err := all.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, rt := range resp.Topics {
			n += len(rt.Partitions)
		}
		a.electAll = fmt.Sprintf("%d partitions listed", n)
		var req kadm.AlterPartitionAssignmentsReq
		req.Assign("t", 0, []int32{0})
		req.Assign("t", 1, []int32{5})
		req.Assign("missing", 0, []int32{0})
		ares, err := adm.AlterPartitionAssignments(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		a.moveHere, a.moveElsewhere, a.missing = errName(ares["t"][0].Err), errName(ares["t"][1].Err), errName(ares["missing"][0].Err)
		var cancel kadm.AlterPartitionAssignmentsReq
		cancel.CancelAssign("t", 0)
		if ares, err = adm.AlterPartitionAssignments(ctx, cancel); err != nil {
			t.Fatal(err)
		}
		a.cancel = errName(ares["t"][0].Err)
		lres, err := adm.ListPartitionReassignments(ctx, kadm.TopicsSet{"t": {0: {}, 1: {}}})
		if err != nil {
			t.Fatal(err)
		}
		a.listed = len(lres)
		return a
	}
	gw, fake := ask(gcl), ask(kcl)
	want := answers{
		electT0: "ELECTION_NOT_NEEDED", electMissing: "UNKNOWN_TOPIC_OR_PARTITION", electAll: "0 partitions listed",
		moveHere: "NONE", moveElsewhere: "INVALID_REPLICA_ASSIGNMENT", cancel: "NO_REASSIGNMENT_IN_PROGRESS", missing: "UNKNOWN_TOPIC_OR_PARTITION",
	}
	if gw != want {
		t.Errorf("gateway answered\n%+v\nwant\n%+v", gw, want)
	}
	kfakeWant := want
	kfakeWant.electT0, kfakeWant.moveElsewhere = "NONE", "NONE"
	kfakeWant.electAll = fmt.Sprintf("%d partitions listed", 2+kfakeInternalPartitions(t, kcl))
	if fake != kfakeWant {
		t.Errorf("kfake answered\n%+v\nwant (the differences this test documents)\n%+v", fake, kfakeWant)
	}
}

func errName(err error) string {
	if err == nil {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

// kfakeInternalPartitions is how many partitions kfake has besides topic t (its internal
// topics, which an election of every partition covers too).
func kfakeInternalPartitions(t *testing.T, cl *kgo.Client) int {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, rt := range resp.Topics {
		if rt.Topic != nil && *rt.Topic != "t" {
			n += len(rt.Partitions)
		}
	}
	return n
}
