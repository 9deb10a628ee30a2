package kafka

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A lame duck names itself leader of nothing, answers Produce and Fetch NOT_LEADER_OR_FOLLOWER
// for every partition, and ends a long poll in flight at once; alone in its fleet it changes
// nothing.
func TestLameDuck(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	fl.set(1, Broker{1, "h1", 91})
	ts.s.LameDuck()
	if ts.s.lameDuck.Load() {
		t.Fatal("a gateway alone in its fleet became a lame duck")
	}
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92})

	// A long poll in flight when the lame duck starts answers at once.
	fetch := kmsg.NewPtrFetchRequest()
	fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = 20000, 1, 1<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes = 0, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	entered := make(chan struct{})
	ts.s.ControlKey(kmsg.Fetch.Int16(), func(r *Controlled) (kmsg.Response, error, bool) {
		close(entered)
		resp, err := r.c.handleFetch(r.req) // past the lame-duck check: the poll is in flight
		return resp, err, true
	})
	type answer struct {
		resp kmsg.Response
		err  error
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		at := time.Now()
		resp, err := cl.SeedBrokers()[0].Request(testCtx(t), fetch)
		done <- answer{resp, err, time.Since(at)}
	}()
	<-entered
	ts.s.LameDuck()
	a := <-done
	if a.err != nil || a.took > 10*time.Second {
		t.Fatalf("the long poll in flight answered after %v: %v", a.took, a.err)
	}
	if fr := a.resp.(*kmsg.FetchResponse); len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("the long poll in flight: %+v", fr.Topics)
	}

	for _, p := range metadataOf(t, cl).Topics[0].Partitions {
		if p.Leader != 2 {
			t.Fatalf("partition %d led by %d while node 1 is a lame duck", p.Partition, p.Leader)
		}
	}
	fr := seedRequest[*kmsg.FetchResponse](t, cl, fetch)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 || fr.Topics[0].Partitions[0].ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch from a lame duck: %+v", fr.Topics)
	}
	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = -1, 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	for _, p := range []int32{0, 5} {
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition = p
		pt.Partitions = append(pt.Partitions, pp)
	}
	produce.Topics = append(produce.Topics, pt)
	pr := seedRequest[*kmsg.ProduceResponse](t, cl, produce)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 2 {
		t.Fatalf("produce to a lame duck: %+v", pr.Topics)
	}
	for _, p := range pr.Topics[0].Partitions {
		if p.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("produce to a lame duck, partition %d: code %d", p.Partition, p.ErrorCode)
		}
	}
}

// With CheckReachable, Metadata leaves out a gateway of the fleet whose port refuses
// connections (it crashed), and lists a gateway that accepts them.
func TestMetadataLeavesOutUnreachableGateways(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	ts.s.cfg.CheckReachable = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	_ = ln.Close() // nothing listens there now: a crashed gateway
	self := Broker{1, "127.0.0.1", 1}
	fl.set(1, self, Broker{2, "127.0.0.1", port})
	if m := metadataOf(t, cl); len(m.Brokers) != 1 || m.Brokers[0].NodeID != 1 {
		t.Fatalf("Metadata lists %+v with node 2's port closed", m.Brokers)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	fl.set(1, self, Broker{2, "127.0.0.1", int32(ln.Addr().(*net.TCPAddr).Port)}) // node 2 back, listening
	checkfor.Eventually(t, 5*time.Second, "node 2 listed once it listens", func() error {
		if m := metadataOf(t, cl); len(m.Brokers) != 2 {
			return fmt.Errorf("brokers %+v", m.Brokers)
		}
		return nil
	})
}

// librdkafka takes a null record set for a malformed answer and backs its fetches off without
// asking for the new leader, so a consumer stalled until the lame duck closed its connection: the
// NOT_LEADER_OR_FOLLOWER of a lame duck must carry an empty set at every version.
func TestLameDuckFetchRecordSetsNotNull(t *testing.T) {
	ts, fl, _ := startFleetServer(t)
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92})
	ts.s.LameDuck()
	conn := dialRaw(t, ts.addr)
	for _, version := range []int16{0, 4, 11, 12} {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		req.ReplicaID, req.MaxBytes = -1, 1<<20
		topic := kmsg.NewFetchRequestTopic()
		topic.Topic = "t"
		for _, p := range []int32{0, 3} {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			topic.Partitions = append(topic.Partitions, rp)
		}
		req.Topics = append(req.Topics, topic)
		conn.corr++
		conn.write(t, encodeRequest(req, conn.corr))
		body := conn.readFrame(t)
		parts, err := parseFetchResponse(body[4:], version)
		if err != nil {
			t.Fatalf("v%d: parsing answer: %v", version, err)
		}
		if len(parts) != 2 {
			t.Fatalf("v%d: %d partitions answered, want 2", version, len(parts))
		}
		for _, p := range parts {
			if p.errorCode != kerr.NotLeaderForPartition.Code || p.recordsLen != 0 {
				t.Errorf("v%d: partition %d answered code %d with a record set of %d bytes (-1: null), want %d and 0",
					version, p.partition, p.errorCode, p.recordsLen, kerr.NotLeaderForPartition.Code)
			}
		}
	}
}

// A gateway that cannot read the store while a gateway of its fleet does not answer its dials
// (split off) names no leader: every partition LEADER_NOT_AVAILABLE with leader -1, every broker
// of its view listed (its clients may reach what it does not), and Produce answered
// NOT_LEADER_OR_FOLLOWER at once. Either alone changes nothing: a store down for the whole fleet
// keeps the leaders, and a gateway that does not answer is only left out.
func TestMetadataSplitOffNamesNoLeader(t *testing.T) {
	ts, fl, cl := startFleetServer(t)
	ts.s.cfg.CheckReachable = true
	var silent atomic.Bool
	ts.s.reach.mu.Lock()
	ts.s.reach.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		switch {
		case addr == "h2:92" && silent.Load():
			<-ctx.Done() // no answer: a cut link
			return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
		case addr == "h2:92":
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED} // a crash
		}
		a, b := net.Pipe()
		b.Close()
		return a, nil
	}
	ts.s.reach.mu.Unlock()
	fl.set(1, Broker{1, "h1", 91}, Broker{2, "h2", 92}, Broker{3, "h3", 93})
	check := func(what string, lost, quiet, leaderless bool) {
		t.Helper()
		fl.mu.Lock()
		fl.storeLost = lost
		fl.mu.Unlock()
		silent.Store(quiet)
		ts.s.reach.mu.Lock()
		ts.s.reach.seen = nil
		ts.s.reach.mu.Unlock()
		m := metadataOf(t, cl)
		var nodes []int32
		for _, b := range m.Brokers {
			nodes = append(nodes, b.NodeID)
		}
		if want := []int32{1, 3}; leaderless && fmt.Sprint(nodes) != "[1 2 3]" || !leaderless && fmt.Sprint(nodes) != fmt.Sprint(want) {
			t.Fatalf("%s: brokers %v", what, nodes)
		}
		produce := kmsg.NewPtrProduceRequest()
		produce.Acks, produce.TimeoutMillis = -1, 5000
		pt := kmsg.NewProduceRequestTopic()
		pt.Topic = "t"
		pp := kmsg.NewProduceRequestTopicPartition()
		pt.Partitions = append(pt.Partitions, pp)
		produce.Topics = append(produce.Topics, pt)
		pr := seedRequest[*kmsg.ProduceResponse](t, cl, produce)
		if code := pr.Topics[0].Partitions[0].ErrorCode; leaderless != (code == kerr.NotLeaderForPartition.Code) {
			t.Fatalf("%s: produce answered code %d", what, code)
		}
		for _, p := range m.Topics[0].Partitions {
			switch {
			case leaderless && (p.ErrorCode != kerr.LeaderNotAvailable.Code || p.Leader != -1):
				t.Fatalf("%s: partition %d code %d leader %d, want LEADER_NOT_AVAILABLE and -1", what, p.Partition, p.ErrorCode, p.Leader)
			case !leaderless && (p.ErrorCode != 0 || (p.Leader != 1 && p.Leader != 3)):
				t.Fatalf("%s: partition %d code %d leader %d, want led by 1 or 3", what, p.Partition, p.ErrorCode, p.Leader)
			}
		}
	}
	check("store read, node 2 silent", false, true, false)
	check("store lost, node 2 crashed", true, false, false)
	check("store lost, node 2 silent", true, true, true)
	check("store back, node 2 silent", false, true, false)
}
