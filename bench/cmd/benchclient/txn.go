package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// runKafkaTxn is the transactions case (issue 27): the case's records sent
// by a plain producer (franz-go's default: idempotent, not transactional),
// then the same records again by a transactional producer, c.TxnBatch to a
// transaction, each flushed (not left to linger), acked and committed
// before the next begins; then all of them read back READ_COMMITTED, which
// only finds them once every commit has been made visible. Each producer
// is a client of its own, warmed up before its window: the transactional
// one by a first transaction, so that its producer id, coordinator and
// partitions are known before the first timed commit.
func runKafkaTxn(ctx context.Context, c *workload.Case, pool *workload.Pool) (workload.Report, error) {
	rep := workload.Report{Client: "franz-go"}
	_, drop, err := createTopic(ctx, c)
	if err != nil {
		return rep, err
	}
	defer drop()
	bytes := int64(c.Records) * int64(c.Size)

	plain, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(c.Topic))
	if err != nil {
		return rep, err
	}
	defer plain.Close()
	if err := produceRange(ctx, plain, pool, pool.Len()-warmRecords, pool.Len(), false); err != nil {
		return rep, fmt.Errorf("warm-up produce: %w", err)
	}
	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	if err := produceRange(ctx, plain, pool, 0, c.Records, false); err != nil {
		return rep, fmt.Errorf("produce: %w", err)
	}
	ph, err := w.End("produce", int64(c.Records), bytes)
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, ph)
	plain.Close()

	tx, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(c.Topic),
		kgo.TransactionalID("bench-txn-"+c.Topic))
	if err != nil {
		return rep, err
	}
	defer tx.Close()
	if _, err := transact(ctx, tx, pool, pool.Len()-warmRecords, pool.Len()); err != nil {
		return rep, fmt.Errorf("warm-up transaction: %w", err)
	}
	commits := make([]time.Duration, 0, (c.Records+c.TxnBatch-1)/c.TxnBatch)
	w, err = workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	for from := 0; from < c.Records; from += c.TxnBatch {
		d, err := transact(ctx, tx, pool, from, min(from+c.TxnBatch, c.Records))
		if err != nil {
			return rep, fmt.Errorf("transaction of records %d on: %w", from, err)
		}
		commits = append(commits, d)
	}
	ph, err = w.TimedPhase(workload.TxnProduce, int64(c.Records), bytes, commits)
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, ph)
	tx.Close()

	want := int64(2 * (c.Records + warmRecords))
	w, err = workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return rep, err
	}
	defer cons.Close()
	got, read, err := poll(ctx, cons, want)
	if err != nil {
		return rep, fmt.Errorf("read committed: %w", err)
	}
	ph, err = w.End("consume", got, read)
	if err != nil {
		return rep, err
	}
	if got != want || read != want*int64(c.Size) {
		return rep, fmt.Errorf("read committed %d records of %d bytes, want %d records of %d bytes", got, read, want, want*int64(c.Size))
	}
	rep.Phases = append(rep.Phases, ph)
	return rep, nil
}

// transact sends the pool's values from to to (not included) in one
// transaction, flushes them and waits for their acks (EndTransaction must
// come after a Flush), and commits it; d is how long the commit
// (EndTransaction) took.
func transact(ctx context.Context, tx *kgo.Client, pool *workload.Pool, from, to int) (d time.Duration, err error) {
	if err := tx.BeginTransaction(); err != nil {
		return 0, err
	}
	if err := produceRange(ctx, tx, pool, from, to, true); err != nil {
		return 0, errors.Join(err, tx.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort))
	}
	t0 := time.Now()
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return time.Since(t0), nil
}
