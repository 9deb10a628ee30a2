package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// A transactional id's producer and open transaction live on the coordinator log: the gateway
// started again on the same store knows them, takes the commit of the transaction opened before
// the restart, and fences the old epoch after the next InitProducerId.
func TestTransactionSurvivesARestart(t *testing.T) {
	cfg := Config{
		Bind:           "127.0.0.1:0",
		NodeID:         3,
		CoordinatorLog: true,
		Transactions:   true,
		DrainTimeout:   5 * time.Second,
		Embedded:       store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second},
	}
	start := func() *Gateway {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		g, err := Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	stop := func(g *Gateway) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	}
	id := "etl-1"
	g := start()
	cl := client(t, g)
	findTxnCoordinator(t, cl, id, 3)
	if _, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 2, 1, nil, "out"); err != nil {
		t.Fatal(err)
	}
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID, init.TransactionTimeoutMillis = &id, 60000
	resp, err := init.RequestWith(testCtx(t), cl)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v, %+v", err, resp)
	}
	pid, epoch := resp.ProducerID, resp.ProducerEpoch
	if epoch != 0 || pid < 0 {
		t.Fatalf("InitProducerId gave %d/%d", pid, epoch)
	}
	add := func(topic string, epoch int16) int16 {
		t.Helper()
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic, rt.Partitions = topic, []int32{0, 1}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := add("nope", epoch); code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("adding a topic that does not exist: code %d", code)
	}
	if code := add("out", epoch); code != 0 {
		t.Fatalf("AddPartitionsToTxn: code %d", code)
	}
	// Kafka's admin APIs see the open transaction (kafka-transactions.sh list and describe).
	adm := kadm.NewClient(cl)
	listed, err := adm.ListTransactions(testCtx(t), nil, []string{"Ongoing"})
	if err != nil || len(listed) != 1 || listed[id].ProducerID != pid || listed[id].Coordinator != 3 {
		t.Fatalf("ListTransactions: %v, %+v", err, listed)
	}
	described, err := adm.DescribeTransactions(testCtx(t), id)
	if d := described[id]; err != nil || d.State != "Ongoing" || d.TimeoutMillis != 60000 || len(d.Topics["out"]) != 2 {
		t.Fatalf("DescribeTransactions: %v, %+v", err, described)
	}
	stop(g)

	g = start()
	defer stop(g)
	cl = client(t, g)
	findTxnCoordinator(t, cl, id, 3)
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, pid, epoch, true
	eresp, err := end.RequestWith(testCtx(t), cl)
	if err != nil || eresp.ErrorCode != 0 {
		t.Fatalf("EndTxn after the restart: %v, %+v", err, eresp)
	}
	checkfor.Eventually(t, 10*time.Second, "InitProducerId of the next incarnation", func() error {
		resp, err := init.RequestWith(testCtx(t), cl)
		if err != nil {
			return err
		}
		if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != epoch+1 {
			return fmt.Errorf("code %d, %d/%d", resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch)
		}
		return nil
	})
	if code := add("out", epoch); code != kerr.ProducerFenced.Code {
		t.Fatalf("the fenced epoch adds: code %d, want PRODUCER_FENCED", code)
	}
}

// findTxnCoordinator waits until FindCoordinator names node for the transactional id.
func findTxnCoordinator(t *testing.T, cl interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}, id string, node int32) {
	t.Helper()
	checkfor.Eventually(t, 10*time.Second, "the transaction coordinator", func() error {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, id, []string{id}
		resp, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			return err
		}
		for _, c := range resp.Coordinators {
			if c.ErrorCode != 0 || c.NodeID != node {
				return fmt.Errorf("code %d, node %d", c.ErrorCode, c.NodeID)
			}
		}
		if resp.Version < 4 && (resp.ErrorCode != 0 || resp.NodeID != node) {
			return fmt.Errorf("code %d, node %d", resp.ErrorCode, resp.NodeID)
		}
		return nil
	})
}

// A transactional producer of franz-go commits and aborts through the gateway: each end is a
// marker on the partition (it takes an offset, as Kafka's control batch does), which consumers
// never see as a record.
func TestTransactionalProducerMarkers(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.CoordinatorLog, c.Transactions = true, true
		c.NodeID = 1
	})
	adm := kadm.NewClient(client(t, g))
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, "txn-out"); err != nil {
		t.Fatal(err)
	}
	prod := client(t, g, kgo.TransactionalID("markers-1"), kgo.DefaultProduceTopic("txn-out"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	txn := func(commit bool, values ...string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := prod.ProduceSync(testCtx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(testCtx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn(true, "a", "b", "c")
	txn(false, "x", "y")
	txn(true, "d")
	cons := client(t, g, kgo.ConsumeTopics("txn-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
	var got []string
	checkfor.Eventually(t, 10*time.Second, "every record read uncommitted", func() error {
		fs := cons.PollRecords(testCtx(t), 100)
		if err := fs.Err0(); err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%s@%d", r.Value, r.Offset)) })
		return checkfor.True(len(got) >= 6, "%v", got)
	})
	// Markers at 3, 6 and 8.
	if want := "[a@0 b@1 c@2 x@4 y@5 d@7]"; fmt.Sprint(got) != want {
		t.Fatalf("read uncommitted %v, want %s", got, want)
	}
}

// A READ_COMMITTED consumer sees only committed records and stops at the last stable offset
// while a transaction is open; ListOffsets answers that offset to READ_COMMITTED; a gateway
// started again rebuilds what it knows of the partition's transactions from Iggy.
func TestReadCommitted(t *testing.T) {
	cfg := Config{
		Bind: "127.0.0.1:0", NodeID: 1, CoordinatorLog: true, Transactions: true, DrainTimeout: 5 * time.Second,
		Embedded: store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second},
	}
	start := func() *Gateway {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		g, err := Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	stop := func(g *Gateway) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	g := start()
	adm := kadm.NewClient(client(t, g))
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, "rc"); err != nil {
		t.Fatal(err)
	}
	prod := client(t, g, kgo.TransactionalID("rc-1"), kgo.DefaultProduceTopic("rc"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	plain := client(t, g, kgo.DefaultProduceTopic("rc"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produce := func(cl *kgo.Client, values ...string) {
		t.Helper()
		for _, v := range values {
			if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	txn := func(values ...string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(prod, values...)
	}
	end := func(commit bool) {
		t.Helper()
		if err := prod.EndTransaction(testCtx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn("a", "b") // 0, 1, marker 2
	end(true)
	txn("x", "y") // 3, 4, marker 5
	end(false)
	produce(plain, "plain") // 6
	txn("c")                // 7, marker 8
	end(true)
	txn("open")                  // 9: nothing from here on is stable
	produce(plain, "after-open") // 10
	read := func(g *Gateway, want int) []string {
		t.Helper()
		cons := client(t, g, kgo.ConsumeTopics("rc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
		var got []string
		checkfor.Eventually(t, 10*time.Second, "the committed records", func() error {
			fs := cons.PollRecords(testCtx(t), 100)
			if err := fs.Err0(); err != nil {
				return err
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
			return checkfor.True(len(got) >= want, "%v", got)
		})
		// One more poll: nothing else may come.
		ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
		defer cancel()
		cons.PollRecords(ctx, 100).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		return got
	}
	if got, want := fmt.Sprint(read(g, 4)), "[a b plain c]"; got != want {
		t.Fatalf("read committed %s, want %s", got, want)
	}
	ends := func(g *Gateway) (committed, uncommitted int64) {
		t.Helper()
		adm := kadm.NewClient(client(t, g))
		c, err := adm.ListCommittedOffsets(testCtx(t), "rc")
		if err != nil {
			t.Fatal(err)
		}
		u, err := adm.ListEndOffsets(testCtx(t), "rc")
		if err != nil {
			t.Fatal(err)
		}
		co, _ := c.Lookup("rc", 0)
		uo, _ := u.Lookup("rc", 0)
		return co.Offset, uo.Offset
	}
	if c, u := ends(g); c != 9 || u != 11 {
		t.Fatalf("end offsets: read committed %d, read uncommitted %d; want 9 and 11", c, u)
	}
	end(true) // marker 11
	produce(plain, "last")
	stop(g)

	g = start()
	defer stop(g)
	if got, want := fmt.Sprint(read(g, 7)), "[a b plain c open after-open last]"; got != want {
		t.Fatalf("read committed after a restart %s, want %s", got, want)
	}
	if c, u := ends(g); c != 13 || u != 13 {
		t.Fatalf("end offsets after the commit: %d, %d; want 13 and 13", c, u)
	}
}
