package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// DescribeProducers through kadm against the bridge on the embedded store: an idempotent
// producer's last sequence and timestamp; a transactional producer's open transaction with its
// first offset, gone once committed; and after a second instance of the transactional id
// fenced the first, the abort marker's bumped epoch with no sequence on the partition the
// fenced transaction had written.
func TestDescribeProducers(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.CoordinatorLog, c.Transactions = true, true
		c.NodeID = 1
		c.TransactionVersion = 2 // franz-go then ends with EndTxn v5, whose markers bump the epoch
	})
	adm := kadm.NewClient(client(t, g))
	if _, err := adm.CreateTopic(testCtx(t), 2, 1, nil, "dp"); err != nil {
		t.Fatal(err)
	}
	produce := func(cl *kgo.Client, partition int32, values ...string) []*kgo.Record {
		t.Helper()
		var out []*kgo.Record
		for _, v := range values {
			r := &kgo.Record{Partition: partition, Value: []byte(v)}
			if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic("dp"), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	idem := client(t, g, opts...)
	idemRecs := produce(idem, 0, "i0", "i1", "i2", "i3", "i4")
	txn := client(t, g, append(opts, kgo.TransactionalID("dp-1"))...)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	txnRecs := produce(txn, 1, "t0", "t1", "t2")
	pid, epoch := txnRecs[0].ProducerID, txnRecs[0].ProducerEpoch

	describe := func() map[string]string {
		t.Helper()
		d, err := adm.DescribeProducers(testCtx(t), kadm.TopicsSet{"dp": {0: {}, 1: {}}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		d.EachPartition(func(p kadm.DescribedProducersPartition) {
			if p.Err != nil {
				t.Fatalf("partition %d: %v", p.Partition, p.Err)
			}
			s := ""
			for _, dp := range p.ActiveProducers.Sorted() {
				s += fmt.Sprintf("[pid %d epoch %d seq %d ts %d txn %d]", dp.ProducerID, dp.ProducerEpoch, dp.LastSequence, dp.LastTimestamp, dp.CurrentTxnStartOffset)
			}
			got[fmt.Sprint(p.Partition)] = s
		})
		return got
	}
	idemDesc := fmt.Sprintf("[pid %d epoch %d seq 4 ts %d txn -1]", idemRecs[0].ProducerID, idemRecs[0].ProducerEpoch, idemRecs[4].Timestamp.UnixMilli())
	want := map[string]string{
		"0": idemDesc,
		"1": fmt.Sprintf("[pid %d epoch %d seq 2 ts %d txn %d]", pid, epoch, txnRecs[2].Timestamp.UnixMilli(), txnRecs[0].Offset),
	}
	if got := describe(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("with the transaction open:\n got %v\nwant %v", got, want)
	}
	if err := txn.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// The commit marker takes offset 3. Under transactions v2 (franz-go's EndTxn v5) it is
	// written at the epoch the end bumped to, so the producer is at that epoch with no
	// sequence, as Kafka's producer state has it after a v2 marker. The markers are written
	// after EndTxn is answered: wait until partition 1 holds its marker.
	want["1"] = fmt.Sprintf("[pid %d epoch %d seq -1 ts %%d txn -1]", pid, epoch+1)
	var got map[string]string
	var markerTS int64
	checkfor.Eventually(t, 10*time.Second, "the commit marker on partition 1", func() error {
		got = describe()
		_, err := fmt.Sscanf(got["1"], want["1"], &markerTS)
		return checkfor.True(err == nil, "partition 1 %s, want %s", got["1"], want["1"])
	})
	if markerTS < txnRecs[2].Timestamp.UnixMilli() {
		t.Fatalf("after the commit: partition 1 %s, want %s with the marker's time", got["1"], want["1"])
	}
	if got["0"] != idemDesc {
		t.Fatalf("after the commit: partition 0 %s, want %s", got["0"], idemDesc)
	}

	// An open transaction of the first instance, fenced by a second one.
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(txn, 1, "t3")
	second := client(t, g, append(opts, kgo.TransactionalID("dp-1"))...)
	if err := second.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	sr := produce(second, 0, "s0")
	if err := second.EndTransaction(testCtx(t), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if sr[0].ProducerID != pid || sr[0].ProducerEpoch <= epoch {
		t.Fatalf("the second instance produced as %d/%d, want %d at an epoch above %d", sr[0].ProducerID, sr[0].ProducerEpoch, pid, epoch)
	}
	// The second instance's commit marker on partition 0, at the epoch its EndTxn v5 bumped to,
	// comes after its EndTxn is answered.
	want0 := idemDesc + fmt.Sprintf("[pid %d epoch %d seq -1 ts %%d txn -1]", pid, sr[0].ProducerEpoch+1)
	if idemRecs[0].ProducerID > pid {
		want0 = fmt.Sprintf("[pid %d epoch %d seq -1 ts %%d txn -1]", pid, sr[0].ProducerEpoch+1) + idemDesc
	}
	var ts int64
	checkfor.Eventually(t, 10*time.Second, "the second instance's commit marker on partition 0", func() error {
		got = describe()
		_, err := fmt.Sscanf(got["0"], want0, &ts)
		return checkfor.True(err == nil, "partition 0 %s, want %s", got["0"], want0)
	})
	var fencedEpoch int16
	if _, err := fmt.Sscanf(got["1"], fmt.Sprintf("[pid %d epoch %%d seq -1 ts %%d txn -1]", pid), &fencedEpoch, &ts); err != nil || fencedEpoch <= epoch || fencedEpoch > sr[0].ProducerEpoch {
		t.Fatalf("after the fence: partition 1 %s, want pid %d at a bumped epoch above %d, no sequence, no open transaction", got["1"], pid, epoch)
	}
}
