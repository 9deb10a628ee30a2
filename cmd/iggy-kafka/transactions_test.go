package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// abortDoc is `transactions abort -o json`.
type abortDoc struct {
	Kind    string           `json:"kind"`
	Data    []txnadmin.Plan  `json:"data"`
	Summary txnadmin.Summary `json:"summary"`
}

// A transactional producer leaves a transaction open, as one that hangs does. A dry run of
// `transactions abort` describes it and writes nothing; the abort fences the producer (its end
// of the transaction fails with PRODUCER_FENCED), a READ_COMMITTED reader goes past its records to
// a later committed one, and a producer started again with the same id works at once. An unknown
// id, an id with no open transaction, and a missing confirmation are refused.
func TestTransactionsAbortEndToEnd(t *testing.T) {
	srv, gws := testfleet.Start(t, 2, func(_ int, c *gateway.Config) { c.Transactions = true })
	seeds := []string{gws[0].Addr().String(), gws[1].Addr().String()}
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + srv.Addr, "XDG_CONFIG_HOME=" + t.TempDir(), "IGGY_KAFKA_REQUEST_TIMEOUT=10s"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	const id = "hanging-1"
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(id), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := prod.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("uncommitted")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// The fleet is formed and knows the transaction: Metadata names the gateway FindCoordinator
	// names for the id (just after the fleet starts, a gateway may not list its peer yet).
	checkfor.Eventually(t, 20*time.Second, "the transaction described by its coordinator", func() error {
		d, err := txnadmin.Describe(ctx, adm, id, time.Now())
		if err != nil {
			return err
		}
		return checkfor.True(d.State == "Ongoing", "state %s", d.State)
	})
	code, out, stderr := runCLI(t, env, "transactions", "abort", id, "--dry-run", "-o", "json")
	var dry abortDoc
	if err := json.Unmarshal([]byte(out), &dry); code != exitOK || err != nil {
		t.Fatalf("dry run: exit %d %v\n%s\n%s", code, err, out, stderr)
	}
	if len(dry.Data) != 1 || dry.Data[0].State != "Ongoing" || dry.Data[0].Partitions != "orders[0,1]" || dry.Summary.Done || dry.Summary.Partitions != 2 {
		t.Fatalf("dry run plan %+v summary %+v", dry.Data, dry.Summary)
	}
	if d, err := txnadmin.Describe(ctx, adm, id, time.Now()); err != nil || d.State != "Ongoing" || d.Epoch != dry.Data[0].Epoch {
		t.Fatalf("after the dry run: %+v %v", d, err)
	}

	if code, _, stderr := runCLI(t, env, "transactions", "abort", id); code == exitOK || !strings.Contains(stderr, "--yes") {
		t.Fatalf("abort without --yes and no terminal: exit %d: %s", code, stderr)
	}

	code, out, stderr = runCLI(t, env, "transactions", "abort", id, "--yes", "-o", "json")
	var done abortDoc
	if err := json.Unmarshal([]byte(out), &done); code != exitOK || err != nil {
		t.Fatalf("abort: exit %d %v\n%s\n%s", code, err, out, stderr)
	}
	if !done.Summary.Done || (done.Summary.State != "Empty" && done.Summary.State != "CompleteAbort") ||
		done.Summary.ProducerID == dry.Data[0].ProducerID && done.Summary.Epoch <= dry.Data[0].Epoch {
		t.Fatalf("abort summary %+v after plan %+v", done.Summary, dry.Data[0])
	}
	err = prod.EndTransaction(ctx, kgo.TryCommit)
	if !errors.Is(err, kerr.ProducerFenced) && !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("the fenced producer's commit: %v, want PRODUCER_FENCED", err)
	}

	// The same id starts again and commits; a READ_COMMITTED reader sees only that record.
	again, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.TransactionalID(id), kgo.DefaultProduceTopic("orders"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if err := again.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := again.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("committed")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// An abort confirmed on the plan of the first transaction is refused now that the id holds
	// another one, and fences nobody: the new producer commits.
	if _, err := txnadmin.Abort(ctx, admCl, adm, clock.Real, dry.Data[0]); !errors.Is(err, txnadmin.ErrChanged) {
		t.Fatalf("abort on a stale plan: %v, want ErrChanged", err)
	}
	if err := again.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatalf("commit after the abort: %v", err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	checkfor.Eventually(t, 20*time.Second, "the committed record read", func() error {
		fs := cons.PollRecords(ctx, 10)
		if err := fs.Err0(); err != nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, fmt.Sprintf("%s@%d/%d", r.Value, r.Partition, r.Offset)) })
		return checkfor.True(len(got) >= 1, "read %v", got)
	})
	if len(got) != 1 || !strings.HasPrefix(got[0], "committed@0/") {
		t.Fatalf("READ_COMMITTED read %v, want the committed record only", got)
	}

	// Nothing to abort now, and an unknown id: refused, one sentence each.
	for _, c := range []struct {
		id, want string
	}{{id, "no open transaction"}, {"nobody", "no such transactional id"}} {
		code, _, stderr := runCLI(t, env, "transactions", "abort", c.id, "--yes")
		if code == exitOK || !strings.Contains(stderr, c.want) {
			t.Fatalf("abort %s: exit %d: %s", c.id, code, stderr)
		}
	}
}
