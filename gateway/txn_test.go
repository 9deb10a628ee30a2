package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
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
		Embedded:       store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations},
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
	// EndTxn v5 (transactions v2, the version the client picks) bumps the epoch and says so.
	if err != nil || eresp.ErrorCode != 0 || eresp.Version != 5 || eresp.ProducerID != pid || eresp.ProducerEpoch != epoch+1 {
		t.Fatalf("EndTxn after the restart: %v, %+v", err, eresp)
	}
	checkfor.Eventually(t, 10*time.Second, "InitProducerId of the next incarnation", func() error {
		resp, err := init.RequestWith(testCtx(t), cl)
		if err != nil {
			return err
		}
		if resp.ErrorCode == kerr.ConcurrentTransactions.Code {
			return errors.New("the commit is being written")
		}
		if resp.ErrorCode != 0 || resp.ProducerID != pid || resp.ProducerEpoch != epoch+2 {
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
		Embedded: store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations},
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

// A fleet of two: the gateway coordinating a transaction stops (SIGTERM's path) while the
// transaction is open; the other takes its log partition over, franz-go's producer finds the
// new coordinator and commits, and a READ_COMMITTED reader of the remaining gateway sees the
// transaction's records, and none of the one aborted before.
func TestTransactionCoordinatorStopsMidTransaction(t *testing.T) {
	ps := freeport.Ports(t, 2)
	fleet := []kafka.Broker{{NodeID: 1, Host: "127.0.0.1", Port: int32(ps[0])}, {NodeID: 2, Host: "127.0.0.1", Port: int32(ps[1])}}
	var gs [2]*Gateway
	stopped := [2]bool{}
	for i := range gs {
		cfg := Config{
			Bind: "127.0.0.1:" + strconv.Itoa(ps[i]), NodeID: int32(i + 1), Brokers: fleet,
			CoordinatorLog: true, Transactions: true, AutoCreateTopics: true, DrainTimeout: 2 * time.Second,
		}
		if i == 0 {
			cfg.Embedded = store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations}
		} else {
			cfg.IggyAddrs, cfg.IggyUsername, cfg.IggyPassword = []string{gs[0].StoreAddr().String()}, "iggy", "iggy"
			cfg.HeartbeatInterval = 2 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		g, err := Start(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		gs[i] = g
	}
	t.Cleanup(func() {
		for i := len(gs) - 1; i >= 0; i-- {
			if !stopped[i] {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = gs[i].Shutdown(ctx)
				cancel()
			}
		}
	})
	// The transactional id whose log partition gateway 2 coordinates: gateway 2 stops, and
	// gateway 1, which holds the store, goes on.
	cl := client(t, gs[0])
	var id string
	checkfor.Eventually(t, 15*time.Second, "a transactional id coordinated by gateway 2", func() error {
		for i := range 64 {
			cand := fmt.Sprintf("fleet-%d", i)
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, cand, []string{cand}
			resp, err := req.RequestWith(testCtx(t), cl)
			if err != nil {
				return err
			}
			if c := resp.Coordinators; len(c) == 1 && c[0].ErrorCode == 0 && c[0].NodeID == 2 {
				id = cand
				return nil
			}
		}
		return fmt.Errorf("gateway 2 coordinates none of 64 ids")
	})
	if _, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 2, 1, nil, "fleet-out"); err != nil {
		t.Fatal(err)
	}
	seeds := kgo.SeedBrokers(gs[0].Addr().String(), gs[1].Addr().String())
	prod, err := kgo.NewClient(seeds, kgo.TransactionalID(id), kgo.DefaultProduceTopic("fleet-out"), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(values ...string) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := prod.ProduceSync(testCtx(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("aborted-1", "aborted-2")
	if err := prod.EndTransaction(testCtx(t), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	produce("kept-1", "kept-2", "kept-3")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := gs[1].Shutdown(ctx); err != nil {
		t.Fatalf("shutdown of the coordinator: %v", err)
	}
	cancel()
	stopped[1] = true
	if err := prod.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatalf("commit after the coordinator stopped: %v", err)
	}
	cons := client(t, gs[0], kgo.ConsumeTopics("fleet-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	var got []string
	checkfor.Eventually(t, 15*time.Second, "the committed records", func() error {
		fs := cons.PollRecords(testCtx(t), 100)
		if err := fs.Err0(); err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		return checkfor.True(len(got) >= 3, "%v", got)
	})
	slices.Sort(got)
	if want := "[kept-1 kept-2 kept-3]"; fmt.Sprint(got) != want {
		t.Fatalf("read committed %v, want %s", got, want)
	}
}
