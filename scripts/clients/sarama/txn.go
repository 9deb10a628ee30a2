package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/IBM/sarama"
)

// txnRun checks sarama's transactional producer against a gateway started with
// --transactions: three transactions of 10 records over two partitions (commit, abort, commit,
// the last also committing a group's offset with AddOffsetsToTxn); a read_committed consumer
// reads the 20 committed records, a read_uncommitted one all 30, and the group's offset is the
// one sent in the committed transaction.
func (r *run) txnRun() {
	r.label = "sarama " + r.version.String() + " transactions"
	admin, err := sarama.NewClusterAdmin([]string{r.broker}, r.config(r.version))
	if err != nil {
		r.fail("admin client: %v", err)
		return
	}
	defer admin.Close()
	if err := admin.CreateTopic(r.topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
		r.fail("create topic %s with 2 partitions: %v", r.topic, err)
		return
	}
	c := r.config(r.version)
	c.Producer.Idempotent = true
	c.Net.MaxOpenRequests = 1
	c.Producer.Transaction.ID = r.topic + "-producer"
	p, err := sarama.NewSyncProducer([]string{r.broker}, c)
	if err != nil {
		r.fail("transactional producer: %v", err)
		return
	}
	defer p.Close()
	txn := func(prefix string, commit bool, offsets map[string][]*sarama.PartitionOffsetMetadata) error {
		if err := p.BeginTxn(); err != nil {
			return fmt.Errorf("BeginTxn: %w", err)
		}
		for i := 0; i < 10; i++ {
			m := &sarama.ProducerMessage{Topic: r.topic, Partition: int32(i % 2), Value: sarama.StringEncoder(fmt.Sprintf("%s%d", prefix, i))}
			if _, _, err := p.SendMessage(m); err != nil {
				return fmt.Errorf("send %s%d: %w", prefix, i, err)
			}
		}
		if offsets != nil {
			if err := p.AddOffsetsToTxn(offsets, r.group); err != nil {
				return fmt.Errorf("AddOffsetsToTxn: %w", err)
			}
		}
		if commit {
			if err := p.CommitTxn(); err != nil {
				return fmt.Errorf("CommitTxn: %w", err)
			}
		} else if err := p.AbortTxn(); err != nil {
			return fmt.Errorf("AbortTxn: %w", err)
		}
		return nil
	}
	offsets := map[string][]*sarama.PartitionOffsetMetadata{r.topic: {{Partition: 0, Offset: 5, Metadata: ptr("txn")}}}
	for _, step := range []struct {
		prefix  string
		commit  bool
		offsets map[string][]*sarama.PartitionOffsetMetadata
	}{{"c1-", true, nil}, {"a-", false, offsets}, {"c2-", true, offsets}} {
		if err := txn(step.prefix, step.commit, step.offsets); err != nil {
			r.fail("transaction %s (commit %v): %v", step.prefix, step.commit, err)
			return
		}
	}
	r.pass("a commit, an abort and a commit of 10 records each over 2 partitions, the last two with the group's offset")

	var committed, all []string
	for i := 0; i < 10; i++ {
		committed = append(committed, fmt.Sprintf("c1-%d", i), fmt.Sprintf("c2-%d", i))
		all = append(all, fmt.Sprintf("c1-%d", i), fmt.Sprintf("c2-%d", i), fmt.Sprintf("a-%d", i))
	}
	slices.Sort(committed)
	slices.Sort(all)
	for _, level := range []struct {
		name string
		iso  sarama.IsolationLevel
		want []string
	}{{"read_committed", sarama.ReadCommitted, committed}, {"read_uncommitted", sarama.ReadUncommitted, all}} {
		got, err := r.readTxnTopic(level.iso, len(level.want))
		switch {
		case err != nil:
			r.fail("%s: %v", level.name, err)
		case slices.Equal(got, level.want):
			r.pass("%s reads the %d records it should", level.name, len(level.want))
		default:
			r.fail("%s read %v, want %v", level.name, got, level.want)
		}
	}

	res, err := admin.ListConsumerGroupOffsets(r.group, map[string][]int32{r.topic: {0}})
	if err != nil {
		r.fail("OffsetFetch: %v", err)
		return
	}
	if b := res.GetBlock(r.topic, 0); b != nil && b.Err == sarama.ErrNoError && b.Offset == 5 && b.Metadata == "txn" {
		r.pass("the group's offset is the committed transaction's (5, metadata txn)")
	} else {
		r.fail("the group's offset: %+v, want 5 with metadata txn", b)
	}
}

func ptr(s string) *string { return &s }

// readTxnTopic reads both partitions of the topic from the start at the isolation level until
// it holds n records, then a moment more, so that a record it should not see would show; the
// values, sorted.
func (r *run) readTxnTopic(iso sarama.IsolationLevel, n int) ([]string, error) {
	c := r.config(r.version)
	c.Consumer.IsolationLevel = iso
	c.Consumer.MaxWaitTime = 100 * time.Millisecond
	cons, err := sarama.NewConsumer([]string{r.broker}, c)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	msgs := make(chan string, 100)
	for p := int32(0); p < 2; p++ {
		pc, err := cons.ConsumePartition(r.topic, p, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		defer pc.Close()
		go func() {
			for m := range pc.Messages() {
				msgs <- string(m.Value)
			}
		}()
	}
	var got []string
	timeout := time.After(30 * time.Second)
	var settle <-chan time.Time
	for {
		select {
		case v := <-msgs:
			got = append(got, v)
			if len(got) == n {
				settle = time.After(500 * time.Millisecond)
			}
		case <-settle:
			slices.Sort(got)
			return got, nil
		case <-timeout:
			slices.Sort(got)
			return got, fmt.Errorf("%d of %d records within 30 s: %v", len(got), n, got)
		}
	}
}
