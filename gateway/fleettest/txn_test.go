package fleettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

const (
	etlIn, etlOut = "etl-in", "etl-out"
	etlPartitions = 3
	etlTxnID      = "etl-txn"
)

// etlGroup is a group the gateways coordinate on another log partition than the transactional
// id, so its offsets are ended by WriteTxnMarkers whenever another gateway holds it.
func etlGroup() string {
	for i := 0; ; i++ {
		g := fmt.Sprintf("etl-group-%d", i)
		if LogPartition(g) != LogPartition(etlTxnID) {
			return g
		}
	}
}

// txnOpts are the options of every client of the transactional scenario: the whole fleet as
// seeds and the patience of clientOpts for a coordinator moving.
func txnOpts(f *fleet, name string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(f.seeds()...),
		kgo.ClientID(name),
		kgo.RequestTimeoutOverhead(3 * time.Second),
		kgo.MetadataMinAge(200 * time.Millisecond),
		kgo.MetadataMaxAge(2 * time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
		kgo.RequestRetries(200),
	}
}

// TestTransactionalETLThroughCoordinatorLoss: franz-go's GroupTransactSession reads etl-in and
// writes each record to etl-out in a transaction that commits the group's offsets with it,
// while a producer keeps adding input, and the gateway coordinating the transactional id is
// drained, then (its successor) SIGTERMed, then (the next) SIGKILLed. A read_committed reader of
// etl-out then finds every input record exactly once: nothing lost with a coordinator, nothing
// written twice by a transaction whose offsets were not committed with it.
func TestTransactionalETLThroughCoordinatorLoss(t *testing.T) {
	f := startFleet(t, "--transactions")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin, err := kgo.NewClient(txnOpts(f, "admin")...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	checkfor.Eventually(t, 30*time.Second, "the topics created", func() error {
		resp, err := adm.CreateTopics(ctx, etlPartitions, 1, nil, etlIn, etlOut)
		if err != nil {
			return err
		}
		for _, r := range resp {
			if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
				return r.Err
			}
		}
		return nil
	})
	group := etlGroup()

	// The input: an idempotent producer writing until stopped.
	in, err := kgo.NewClient(append(txnOpts(f, "input"), kgo.DefaultProduceTopic(etlIn))...)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var produced atomic.Int64
	stopInput := make(chan struct{})
	inputDone := make(chan struct{})
	var stopInputOnce sync.Once
	endInput := func() {
		stopInputOnce.Do(func() { close(stopInput) })
		<-inputDone
	}
	defer endInput() // before the client closes, on any way out
	inCtx, inCancel := context.WithCancel(ctx)
	defer inCancel() // first on a failure: a produce in flight ends at once
	go func() {
		defer close(inputDone)
		for i := 0; ; i++ {
			select {
			case <-stopInput:
				return
			default:
			}
			if err := in.ProduceSync(inCtx, kgo.StringRecord(fmt.Sprintf("in-%06d", i))).FirstErr(); err != nil {
				if inCtx.Err() != nil || errors.Is(err, kgo.ErrClientClosed) {
					return
				}
				t.Logf("input record %d: %v", i, err)
				continue
			}
			produced.Add(1)
		}
	}()

	// The ETL: one GroupTransactSession, transaction after transaction.
	var committed atomic.Int64
	var etlErrs sync.Map
	etlStop := make(chan struct{})
	etlDone := make(chan struct{})
	var stopETLOnce sync.Once
	endETL := func() {
		stopETLOnce.Do(func() { close(etlStop) })
		<-etlDone
	}
	defer endETL()
	etlCtx, etlCancel := context.WithCancel(ctx)
	defer etlCancel() // first on a failure: a transaction in flight ends at once
	var sessions atomic.Int32
	go func() {
		defer close(etlDone)
		var sess *kgo.GroupTransactSession
		defer func() {
			if sess != nil {
				sess.Close()
			}
		}()
		for {
			select {
			case <-etlStop:
				return
			default:
			}
			if sess == nil {
				// A fenced producer is done for good; an application makes a new one with the
				// same transactional id, as Kafka's clients document (and Streams does).
				var err error
				sess, err = kgo.NewGroupTransactSession(append(txnOpts(f, "etl"),
					kgo.TransactionalID(etlTxnID), kgo.TransactionTimeout(20*time.Second),
					kgo.ConsumerGroup(group), kgo.ConsumeTopics(etlIn), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
					kgo.DefaultProduceTopic(etlOut),
					kgo.FetchMaxWait(200*time.Millisecond))...)
				if err != nil {
					etlErrs.Store("session "+err.Error(), err)
					return
				}
				sessions.Add(1)
			}
			pctx, pcancel := context.WithTimeout(etlCtx, 2*time.Second)
			fs := sess.PollFetches(pctx)
			pcancel()
			if err := sess.Begin(); err != nil {
				etlErrs.Store("begin "+err.Error(), err)
				if errors.Is(err, kerr.ProducerFenced) || strings.Contains(err.Error(), "fatal") {
					sess.Close()
					sess = nil
				}
				continue
			}
			n := 0
			fs.EachRecord(func(r *kgo.Record) {
				n++
				sess.Produce(etlCtx, kgo.StringRecord(string(r.Value)), func(_ *kgo.Record, err error) {
					if err != nil {
						etlErrs.Store("produce "+err.Error(), err)
					}
				})
			})
			ok, err := sess.End(etlCtx, kgo.TryCommit)
			if err != nil {
				etlErrs.Store("end "+err.Error(), err)
				continue
			}
			if ok {
				committed.Add(int64(n))
			}
		}
	}()
	progress := func(what string) {
		t.Helper()
		from := committed.Load()
		checkfor.Eventually(t, 60*time.Second, what, func() error {
			return checkfor.True(committed.Load() >= from+200, "%d records committed since; the ETL's errors: %s",
				committed.Load()-from, etlErrors(&etlErrs))
		})
	}
	txnCoordinator := func() *gw {
		t.Helper()
		var node int32 = -1
		checkfor.Eventually(t, 30*time.Second, "the transaction's coordinator", func() error {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, etlTxnID, []string{etlTxnID}
			resp, err := req.RequestWith(ctx, admin)
			if err != nil {
				return err
			}
			if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
				return fmt.Errorf("answer %+v", resp.Coordinators)
			}
			node = resp.Coordinators[0].NodeID
			return nil
		})
		return f.gw(node)
	}

	progress("the ETL committing")
	// Drained: its log partitions, the transaction's among them, move to the others.
	drained := txnCoordinator()
	drain := func(args ...string) {
		t.Helper()
		dctx, dcancel := context.WithTimeout(ctx, 60*time.Second)
		defer dcancel()
		cmd := f.command(dctx, append(args, "--iggy", f.iggyAddr())...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("iggy-kafka %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
	drain("drain", "node", fmt.Sprint(drained.id), "--yes", "--wait", "--timeout", "30s")
	t.Logf("drained gateway %d, the transaction's coordinator", drained.id)
	progress("the ETL after the drain")
	drain("drain", "node", fmt.Sprint(drained.id), "--undo", "--yes", "--wait")
	progress("the ETL after the drain's undo")

	termed := txnCoordinator()
	exit := termed.term(t, exitLimit)
	t.Logf("SIGTERM to gateway %d, the transaction's coordinator: exited after %v", termed.id, exit)
	progress("the ETL after the SIGTERM")
	f.restart(termed)
	progress("the ETL after the restart")

	killed := txnCoordinator()
	killed.kill(t)
	t.Logf("SIGKILL to gateway %d, the transaction's coordinator", killed.id)
	progress("the ETL after the SIGKILL")
	f.restart(killed)

	endInput()
	want := produced.Load()
	// Through when the group's committed offsets reach the input's end: a commit whose answer
	// a crash lost is not in the session's count, but its offsets are the group's.
	var inEnds kadm.ListedOffsets
	checkfor.Eventually(t, 30*time.Second, "the input's end offsets", func() error {
		var err error
		if inEnds, err = adm.ListEndOffsets(ctx, etlIn); err == nil {
			err = inEnds.Error()
		}
		return err
	})
	checkfor.Eventually(t, 90*time.Second, "the ETL through every input record", func() error {
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		var behind []string
		for p, end := range inEnds[etlIn] {
			if at, ok := offs.Lookup(etlIn, p); end.Offset > 0 && (!ok || at.At < end.Offset) {
				behind = append(behind, fmt.Sprintf("%d at %d of %d", p, at.At, end.Offset))
			}
		}
		return checkfor.True(len(behind) == 0, "partitions behind: %v (%d records committed by the session's count, %d acknowledged); the ETL's errors: %s",
			behind, committed.Load(), want, etlErrors(&etlErrs))
	})
	endETL()
	if n := sessions.Load(); n > 1 {
		t.Logf("the ETL made %d sessions: a fenced one is replaced, as applications do", n)
	}
	etlErrs.Range(func(k, _ any) bool {
		t.Logf("ETL error (retried): %v", k)
		return true
	})

	// Every stored input record, once, in the committed output.
	inputs := readTopic(t, ctx, f, etlIn, kgo.ReadUncommitted())
	outputs := readTopic(t, ctx, f, etlOut, kgo.ReadCommitted())
	seen := map[string]int{}
	for _, v := range outputs {
		seen[v]++
	}
	var missing, twice []string
	for _, v := range inputs {
		switch seen[v] {
		case 0:
			missing = append(missing, v)
		case 1:
		default:
			twice = append(twice, fmt.Sprintf("%s x%d", v, seen[v]))
		}
		delete(seen, v)
	}
	var extra []string
	for v := range seen {
		extra = append(extra, v)
	}
	t.Logf("%d input records (%d acknowledged), %d committed output records", len(inputs), want, len(outputs))
	if len(missing)+len(twice)+len(extra) > 0 {
		t.Fatalf("output is not the input exactly once: missing %s; twice %s; not an input %s",
			firstFew(missing), firstFew(twice), firstFew(extra))
	}
}

// readTopic reads every partition of topic from its start to its end (at the isolation level's
// end: the last stable offset for read_committed) and returns the values.
func readTopic(t *testing.T, ctx context.Context, f *fleet, topic string, iso kgo.IsolationLevel) []string {
	t.Helper()
	cl, err := kgo.NewClient(append(txnOpts(f, "reader-"+topic),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.FetchMaxWait(200*time.Millisecond), kgo.KeepControlRecords())...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var ends kadm.ListedOffsets
	checkfor.Eventually(t, 30*time.Second, "the end offsets of "+topic, func() error {
		adm := kadm.NewClient(cl)
		var err error
		if iso == kgo.ReadCommitted() {
			ends, err = adm.ListCommittedOffsets(ctx, topic)
		} else {
			ends, err = adm.ListEndOffsets(ctx, topic)
		}
		if err == nil {
			err = ends.Error()
		}
		return err
	})
	next := map[int32]int64{}
	done := func() bool {
		for _, o := range ends[topic] {
			if next[o.Partition] < o.Offset {
				return false
			}
		}
		return true
	}
	var out []string
	rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
	defer rcancel()
	for !done() {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("reading %s: %v (at %v, ends %v)", topic, rctx.Err(), next, ends)
		}
		fs.EachRecord(func(r *kgo.Record) {
			// Markers come too (KeepControlRecords), so the position reaches the end even
			// when a marker is the last offset; they are not records of the topic.
			next[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() {
				out = append(out, string(r.Value))
			}
		})
	}
	return out
}

// etlErrors lists the distinct errors the ETL met so far.
func etlErrors(m *sync.Map) string {
	var out []string
	m.Range(func(k, _ any) bool {
		out = append(out, fmt.Sprint(k))
		return true
	})
	return firstFew(out)
}
