package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// The transactions screen end to end, in a real terminal, on a store and a gateway started with
// `serve --transactions`, each a process: a transactional producer leaves a transaction open on
// two partitions, as one that hangs does; T lists it, a shows the plan, y aborts it. Then the
// coordinator describes the id at a bumped epoch with no open transaction, READ_COMMITTED's last
// stable offset of both partitions has moved past the transaction (to the end, its abort marker
// included), the fenced producer cannot commit, and the screen no longer lists it.
func TestConsoleAbortsATransactionEndToEnd(t *testing.T) {
	lab := newTTYLab(t)
	dir := lab.dir
	addrs := freeport.Addrs(t, 2)
	storeAddr, kafka := addrs[0], addrs[1]
	lab.startStore(storeAddr)
	lab.startGateways(storeAddr, []string{kafka}, "--transactions")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	const id = "hanging-e2e"
	prod, err := kgo.NewClient(kgo.SeedBrokers(kafka), kgo.TransactionalID(id), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		for range 3 {
			if err := prod.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("never committed")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var plan txnadmin.Plan
	checkfor.Eventually(t, 20*time.Second, "the transaction described by its coordinator", func() error {
		plan, err = txnadmin.Describe(ctx, adm, id, time.Now())
		if err != nil {
			return err
		}
		return checkfor.True(plan.State == "Ongoing" && plan.Partitions == "orders[0,1]", "plan %+v", plan)
	})
	stable := func() (map[int32]int64, error) {
		lso, err := adm.ListCommittedOffsets(ctx, "orders")
		if err == nil {
			err = lso.Error()
		}
		out := map[int32]int64{}
		lso.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
		return out, err
	}
	if lso, err := stable(); err != nil || lso[0] != 0 || lso[1] != 0 {
		t.Fatalf("last stable offsets with the transaction open: %v %v, want 0 on both", lso, err)
	}

	cliEnv := []string{"XDG_CONFIG_HOME=" + dir, "IGGY_KAFKA_OPERATOR_IGGY=" + storeAddr}
	pane := startTmux(t, dir, 120, 35, append([]string{"TERM=xterm-256color", "LANG=C.UTF-8"}, cliEnv...), testbin.Path(t)+" claims --watch")
	pane.waitScreen(20*time.Second, "16/16 owned")
	pane.keys("T")
	pane.waitScreen(10*time.Second, "[TRANSACTIONS] 1 open transaction ·", id, "orders[0,1]", "Ongoing")
	pane.keys("a")
	pane.waitScreen(10*time.Second, "[ABORT "+id+"] the plan", fmt.Sprintf("producer id %d epoch %d: fenced", plan.ProducerID, plan.Epoch),
		"abort transaction "+id+"? y aborts, any other key cancels")
	pane.keys("y")
	pane.waitScreen(20*time.Second, "transaction "+id+" aborted: abort markers on 2 partition(s)")
	pane.waitScreen(10*time.Second, "[TRANSACTIONS] 0 open transactions", "no open transaction in the coordinator log")

	after, err := txnadmin.Describe(ctx, adm, id, time.Now())
	if err != nil || (after.State != "Empty" && after.State != "CompleteAbort") || after.ProducerID == plan.ProducerID && after.Epoch <= plan.Epoch {
		t.Fatalf("after the abort: %+v %v (before: %+v)", after, err, plan)
	}
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "the last stable offsets past the transaction", func() error {
		lso, err := stable()
		if err != nil {
			return err
		}
		for p := range int32(2) {
			end, _ := ends.Lookup("orders", p)
			// Three records and the abort marker.
			if lso[p] != 4 || end.Offset != 4 {
				return fmt.Errorf("partition %d: last stable offset %d, end %d, want 4 and 4", p, lso[p], end.Offset)
			}
		}
		return nil
	})
	if err := prod.EndTransaction(ctx, kgo.TryCommit); !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the fenced producer's commit: %v, want PRODUCER_FENCED", err)
	}
	pane.keys("q")
	checkfor.Eventually(t, 10*time.Second, "q quits", func() error {
		if _, err := pane.run("has-session", "-t", pane.session); err == nil {
			return errors.New("session still running")
		}
		return nil
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "console.stderr")); len(b) > 0 {
		t.Fatalf("the console wrote to stderr: %s", b)
	}
}
