package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// txnLayout is what txnBatches wrote: the value at each offset that holds a record, and which
// of them were committed.
type txnLayout struct {
	values    map[int64]string
	committed map[int64]bool
	end       int64 // the high watermark
}

// committedFrom is what a READ_COMMITTED reader starting at offset must read, in order.
func (l txnLayout) committedFrom(offset int64) []string {
	var out []string
	for o := offset; o < l.end; o++ {
		if l.committed[o] {
			out = append(out, l.values[o])
		}
	}
	return out
}

// txnBatches produces, through g, transactions of several records per batch (each flush is one
// batch), committing some and aborting others, one of them of two batches.
func txnBatches(t *testing.T, g *Gateway, topic string) txnLayout {
	t.Helper()
	prod := client(t, g, kgo.TransactionalID(topic+"-txn"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ManualFlushing())
	l := txnLayout{values: map[int64]string{}, committed: map[int64]bool{}}
	txn := func(name string, commit bool, batches ...int) {
		t.Helper()
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var written []int64
		for b, n := range batches {
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf("%s-%d-%d", name, b, i))})
			}
			results := make(chan kgo.ProduceResult, n)
			for _, r := range recs {
				prod.Produce(testCtx(t), r, func(r *kgo.Record, err error) { results <- kgo.ProduceResult{Record: r, Err: err} })
			}
			if err := prod.Flush(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			for range n {
				res := <-results
				if res.Err != nil {
					t.Fatal(res.Err)
				}
				l.values[res.Record.Offset] = string(res.Record.Value)
				written = append(written, res.Record.Offset)
			}
		}
		if err := prod.EndTransaction(testCtx(t), kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
		for _, o := range written {
			l.committed[o] = commit
		}
	}
	txn("c1", true, 5)
	txn("a2", false, 5)
	txn("c3", true, 5)
	txn("a4", false, 4, 4)
	txn("c5", true, 4)
	// EndTxn answers once its end is decided; the last markers are written after, as Kafka's.
	adm := kadm.NewClient(client(t, g))
	want := int64(5 + 5 + 5 + 8 + 4 + 5)
	checkfor.Eventually(t, 10*time.Second, "the last commit marker", func() error {
		ends, err := adm.ListEndOffsets(testCtx(t), topic)
		if err != nil {
			return err
		}
		e, _ := ends.Lookup(topic, 0)
		l.end = e.Offset
		if l.end > want {
			t.Fatalf("high watermark %d, want %d (27 records, 5 markers)", l.end, want)
		}
		return checkfor.True(l.end == want, "high watermark %d, want %d (27 records, 5 markers)", l.end, want)
	})
	return l
}

// readCommittedFrom reads topic's partition 0 READ_COMMITTED from offset until it has the
// records l says are committed from there on; a record of an aborted transaction comes before
// the last committed one, so it would be read.
func readCommittedFrom(t *testing.T, g *Gateway, topic string, offset int64, l txnLayout) []string {
	t.Helper()
	want := l.committedFrom(offset)
	cons := client(t, g, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(offset)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	defer cons.Close()
	var got []string
	poll := func(wait time.Duration) error {
		ctx, cancel := context.WithTimeout(testCtx(t), wait)
		defer cancel()
		fs := cons.PollRecords(ctx, 100)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		return nil
	}
	if len(want) == 0 {
		// Only markers from here: nothing may come.
		if err := poll(300 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		return got
	}
	checkfor.Eventually(t, 10*time.Second, fmt.Sprintf("the committed records from %d", offset), func() error {
		if err := poll(time.Second); err != nil {
			return err
		}
		return checkfor.True(len(got) >= len(want), "%v", got)
	})
	return got
}

// txnGateway starts a gateway with transactions over an embedded store kept on disk, and
// returns it with restart, which stops it and starts it again on the same store (a gateway that
// knows no batch of what it wrote before). The last one is stopped at the end of the test.
func txnGateway(t *testing.T) (*Gateway, func() *Gateway) {
	t.Helper()
	cfg := Config{
		Bind: "127.0.0.1:0", NodeID: 1, CoordinatorLog: true, Transactions: true, DrainTimeout: 5 * time.Second,
		Embedded: store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations},
	}
	var g *Gateway
	start := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var err error
		if g, err = Start(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	start()
	t.Cleanup(stop)
	return g, func() *Gateway {
		t.Helper()
		stop()
		start()
		return g
	}
}

// A READ_COMMITTED reader starting at any offset, inside a transactional batch too, reads
// exactly the committed records from there: at the gateway that wrote them (which knows where
// its batches start) and at the same gateway started again, which knows no batch and gets the
// records from the reader's offset on.
func TestReadCommittedFromInsideBatches(t *testing.T) {
	g, restart := txnGateway(t)
	if _, err := kadm.NewClient(client(t, g)).CreateTopic(testCtx(t), 1, 1, nil, "rcmid"); err != nil {
		t.Fatal(err)
	}
	l := txnBatches(t, g, "rcmid")
	check := func(g *Gateway, when string) {
		t.Helper()
		for o := range l.end {
			if got, want := fmt.Sprint(readCommittedFrom(t, g, "rcmid", o, l)), fmt.Sprint(l.committedFrom(o)); got != want {
				t.Errorf("%s, from %d: read %s, want %s", when, o, got, want)
			}
		}
	}
	check(g, "at the writing gateway")
	check(restart(), "after a restart")
}
