package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// kafkaFanOut runs the fan-out phases: one group, c.Groups groups in
// turn, c.Groups at once (each a client of its own, every group a fresh
// name), each group phase on a topic of its own that holds c.Records
// records of c.Size bytes, produced just before it outside the window and read by
// nobody before, so that every phase starts from data the broker has not
// served yet (a broker that keeps what it served gains in the phases of
// several groups, not in the one-group phase it is compared with); then a
// consumer at the tail of the case's topic reading c.Records more as one
// producer sends them.
func kafkaFanOut(ctx context.Context, c *workload.Case, pool *workload.Pool, adm *kadm.Client) ([]workload.Phase, error) {
	var out []workload.Phase
	want := int64(c.Records)
	seq := 0
	groups := func(phase string, n int, together bool) error {
		topic := c.Topic + "-" + phase
		if err := fillTopic(ctx, c, pool, adm, topic); err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		defer func() { _, _ = adm.DeleteTopics(context.WithoutCancel(ctx), topic) }()
		w, err := workload.Begin(c.BrokerPID)
		if err != nil {
			return err
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for g := range n {
			seq++
			name := fmt.Sprintf("%s-g%d", c.Topic, seq)
			read := func() { errs[g] = readGroup(ctx, c, topic, name, want) }
			if together {
				wg.Go(read)
			} else {
				read()
			}
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return fmt.Errorf("%s: %w", phase, err)
			}
		}
		ph, err := w.End(phase, int64(n)*want, int64(n)*want*int64(c.Size))
		if err != nil {
			return err
		}
		out = append(out, ph)
		return nil
	}
	if err := groups(workload.OneGroup, 1, false); err != nil {
		return out, err
	}
	if err := groups(workload.GroupsTurn, c.Groups, false); err != nil {
		return out, err
	}
	if err := groups(workload.GroupsOnce, c.Groups, true); err != nil {
		return out, err
	}
	phs, err := kafkaTail(ctx, c, pool, adm)
	return append(out, phs...), err
}

// fillTopic creates topic with the case's partitions and sends it the
// case's records from one producer, waiting for every ack.
func fillTopic(ctx context.Context, c *workload.Case, pool *workload.Pool, adm *kadm.Client, topic string) error {
	resp, err := adm.CreateTopic(ctx, int32(c.Partitions), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(topic))
	if err != nil {
		return err
	}
	defer prod.Close()
	return produceAll(ctx, prod, c, pool)
}

// readGroup joins a fresh group and reads topic from the start until it
// has want records, each of c.Size bytes; leaving the group is part of
// its work.
func readGroup(ctx context.Context, c *workload.Case, topic, group string, want int64) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	got, bytes, err := poll(ctx, cl, want)
	if err != nil {
		return fmt.Errorf("group %s: %w", group, err)
	}
	if got != want || bytes != want*int64(c.Size) {
		return fmt.Errorf("group %s consumed %d records of %d bytes, want %d of %d", group, got, bytes, want, want*int64(c.Size))
	}
	return nil
}

// poll reads until want records have come or the context ends.
func poll(ctx context.Context, cl *kgo.Client, want int64) (got, bytes int64, err error) {
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return got, bytes, fmt.Errorf("consumed %d of %d records: %w", got, want, err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return got, bytes, fmt.Errorf("fetch %s/%d: %w", errs[0].Topic, errs[0].Partition, errs[0].Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			bytes += int64(len(r.Value))
		})
	}
	return got, bytes, nil
}

// kafkaTail times, workload.TailPairs times, one producer sending c.Records
// records with no consumer (workload.TailAlone) and the same producer
// sending c.Records more while a group-less consumer, positioned at the end
// of every partition beforehand, reads them as they arrive
// (workload.TailConsume; that window closes when the last record is both
// acked and consumed), the baseline first in every other pair. The broker's
// CPU in a tail phase is the producer's and the tail consumer's together;
// the baseline next to it, on the same topic from the same client, is what
// the runner takes off.
func kafkaTail(ctx context.Context, c *workload.Case, pool *workload.Pool, adm *kadm.Client) ([]workload.Phase, error) {
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(c.Topic))
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	for i := range warmRecords {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: pool.Value(pool.Len() - 1 - i)}).FirstErr(); err != nil {
			return nil, fmt.Errorf("tail warm-up produce: %w", err)
		}
	}
	alone := func() (workload.Phase, error) {
		w, err := workload.Begin(c.BrokerPID)
		if err != nil {
			return workload.Phase{}, err
		}
		if err := produceAll(ctx, prod, c, pool); err != nil {
			return workload.Phase{}, fmt.Errorf("tail baseline produce: %w", err)
		}
		return w.End(workload.TailAlone, int64(c.Records), int64(c.Records)*int64(c.Size))
	}
	tail := func() (workload.Phase, error) { return tailConsume(ctx, c, pool, adm, prod) }
	var out []workload.Phase
	for i := range workload.TailPairs {
		first, second := alone, tail
		if i%2 == 1 {
			first, second = tail, alone
		}
		for _, run := range []func() (workload.Phase, error){first, second} {
			ph, err := run()
			if err != nil {
				return out, err
			}
			out = append(out, ph)
		}
	}
	return out, nil
}

// produceAll sends the case's records from prod and waits for every ack.
func produceAll(ctx context.Context, prod *kgo.Client, c *workload.Case, pool *workload.Pool) error {
	return produceRange(ctx, prod, pool, 0, c.Records, false)
}

// produceRange sends the pool's values from to to (not included) and
// returns once every one is acked, with the first error; flush sends the
// last batches at once instead of after the producer's linger (10 ms by
// default), as a transaction about to commit must.
func produceRange(ctx context.Context, prod *kgo.Client, pool *workload.Pool, from, to int, flush bool) error {
	return workload.Produce(ctx, prod, pool, from, to, 1, flush, nil)
}

func tailConsume(ctx context.Context, c *workload.Case, pool *workload.Pool, adm *kadm.Client, prod *kgo.Client) (workload.Phase, error) {
	cons, err := workload.TailConsumer(ctx, c.Addr, c.Topic, c.Partitions, adm, 30*time.Second)
	if err != nil {
		return workload.Phase{}, err
	}
	defer cons.Close()

	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return workload.Phase{}, err
	}
	want := int64(c.Records)
	var got, bytes int64
	var consErr error
	var reader sync.WaitGroup
	reader.Go(func() { got, bytes, consErr = poll(ctx, cons, want) })
	prodErr := produceAll(ctx, prod, c, pool)
	reader.Wait()
	ph, err := w.End(workload.TailConsume, got, bytes)
	switch {
	case prodErr != nil:
		return ph, fmt.Errorf("tail produce: %w", prodErr)
	case consErr != nil:
		return ph, fmt.Errorf("tail consume: %w", consErr)
	case err != nil:
		return ph, err
	case got != want || bytes != want*int64(c.Size):
		return ph, fmt.Errorf("tail consumer read %d records of %d bytes, want %d of %d", got, bytes, want, want*int64(c.Size))
	}
	return ph, nil
}
