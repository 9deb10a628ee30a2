//go:build cgo

package gateway

import (
	"fmt"
	"sort"
	"testing"
	"time"

	rdk "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// librdkafka's transactional producer (confluent-kafka-go) against a gateway with transactions:
// a transaction that also sends a consumer group's offsets commits both, an aborted one neither;
// librdkafka's read_committed consumer reads only the committed records, and the group's offset
// is the one sent in the committed transaction.
func TestLibrdkafkaTransactions(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.CoordinatorLog, c.Transactions = true, true
		c.NodeID = 1
	})
	adm := kadm.NewClient(client(t, g))
	topic := "rdk-txn-out"
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	p, err := rdk.NewProducer(&rdk.ConfigMap{
		"bootstrap.servers": g.Addr().String(),
		"transactional.id":  "rdk-txn-1",
		"log_level":         0,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	go func() {
		for range p.Events() { // delivery reports are checked through Flush and Commit
		}
	}()
	ctx := testCtx(t)
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatalf("InitTransactions: %v", err)
	}
	group := "rdk-txn-group"
	txn := func(commit bool, offset int64, values ...string) {
		t.Helper()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := p.Produce(&rdk.Message{TopicPartition: rdk.TopicPartition{Topic: &topic, Partition: 0}, Value: []byte(v)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		// Sent before the end, so an abort has records to abort (librdkafka purges unsent ones).
		if n := p.Flush(10000); n != 0 {
			t.Fatalf("%d records not delivered", n)
		}
		in := "rdk-txn-in"
		md, err := rdk.NewTestConsumerGroupMetadata(group)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.SendOffsetsToTransaction(ctx, []rdk.TopicPartition{{Topic: &in, Partition: 0, Offset: rdk.Offset(offset)}}, md); err != nil {
			t.Fatalf("SendOffsetsToTransaction: %v", err)
		}
		if commit {
			err = p.CommitTransaction(ctx)
		} else {
			err = p.AbortTransaction(ctx)
		}
		if err != nil {
			t.Fatalf("end (commit %v): %v", commit, err)
		}
	}
	if _, err := adm.CreateTopic(testCtx(t), 1, 1, nil, "rdk-txn-in"); err != nil {
		t.Fatal(err)
	}
	txn(true, 3, "a", "b", "c")
	txn(false, 5, "x", "y")
	txn(true, 4, "d")

	c, err := rdk.NewConsumer(&rdk.ConfigMap{
		"bootstrap.servers":  g.Addr().String(),
		"group.id":           "rdk-txn-reader",
		"auto.offset.reset":  "earliest",
		"isolation.level":    "read_committed",
		"enable.auto.commit": false,
		"log_level":          0,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Assign([]rdk.TopicPartition{{Topic: &topic, Partition: 0, Offset: rdk.OffsetBeginning}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	checkfor.Eventually(t, 20*time.Second, "the committed records read committed", func() error {
		m, err := c.ReadMessage(200 * time.Millisecond)
		if err == nil {
			got = append(got, fmt.Sprintf("%s@%d", m.Value, m.TopicPartition.Offset))
		}
		return checkfor.True(len(got) >= 4, "%v", got)
	})
	// Markers at 3, 6 and 8; x and y (4, 5) were aborted.
	if want := "[a@0 b@1 c@2 d@7]"; fmt.Sprint(got) != want {
		t.Fatalf("read committed %v, want %s", got, want)
	}
	if m, err := c.ReadMessage(300 * time.Millisecond); err == nil {
		t.Fatalf("read past the committed records: %s@%d", m.Value, m.TopicPartition.Offset)
	}

	offs, err := adm.FetchOffsets(testCtx(t), group)
	if err != nil {
		t.Fatal(err)
	}
	var committed []string
	offs.Each(func(o kadm.OffsetResponse) {
		committed = append(committed, fmt.Sprintf("%s/%d=%d", o.Topic, o.Partition, o.At))
	})
	sort.Strings(committed)
	if want := "[rdk-txn-in/0=4]"; fmt.Sprint(committed) != want {
		t.Fatalf("the group's offsets %v, want %s (the last committed transaction's)", committed, want)
	}
}

// librdkafka's read_committed consumer, assigned at offsets inside transactional batches of a
// gateway started again (which knows no batch start and answers from the offset on), reads
// exactly the committed records from there.
func TestLibrdkafkaReadCommittedFromInsideBatches(t *testing.T) {
	g, restart := txnGateway(t)
	topic := "rdk-rcmid"
	if _, err := kadm.NewClient(client(t, g)).CreateTopic(testCtx(t), 1, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	l := txnBatches(t, g, topic)
	g = restart()
	// Inside the aborted single batch, inside each batch of the aborted pair, inside committed
	// batches.
	for _, from := range []int64{2, 7, 9, 19, 24, 13, 28} {
		want := l.committedFrom(from)
		c, err := rdk.NewConsumer(&rdk.ConfigMap{
			"bootstrap.servers":  g.Addr().String(),
			"group.id":           fmt.Sprintf("rdk-rcmid-%d", from),
			"isolation.level":    "read_committed",
			"enable.auto.commit": false,
			"log_level":          0,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Assign([]rdk.TopicPartition{{Topic: &topic, Partition: 0, Offset: rdk.Offset(from)}}); err != nil {
			t.Fatal(err)
		}
		var got []string
		checkfor.Eventually(t, 20*time.Second, fmt.Sprintf("the committed records from %d", from), func() error {
			m, err := c.ReadMessage(200 * time.Millisecond)
			if err == nil {
				got = append(got, string(m.Value))
			}
			return checkfor.True(len(got) >= len(want), "%v", got)
		})
		c.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("from %d: read %v, want %v", from, got, want)
		}
	}
}
