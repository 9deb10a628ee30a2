package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

// warmRecords go out before the produce window so that metadata, the
// producer id and the connection are in place; the consumer reads them too.
const warmRecords = 10

func runKafka(ctx context.Context, c *workload.Case, pool *workload.Pool) (workload.Report, error) {
	if c.TxnBatch > 0 {
		return runKafkaTxn(ctx, c, pool)
	}
	rep := workload.Report{Client: "franz-go"}
	adm, drop, err := createTopic(ctx, c)
	if err != nil {
		return rep, err
	}
	defer drop()

	idle, err := openIdleKafka(ctx, c.Addr, c.IdleConns)
	if err != nil {
		return rep, err
	}
	defer idle.close()

	// Every producer is a client of its own, warmed up before the window
	// opens; producer k sends records k, k+n, k+2n, ...
	n := max(1, c.Producers)
	prods := make([]*kgo.Client, n)
	defer func() {
		for _, p := range prods {
			if p != nil {
				p.Close()
			}
		}
	}()
	for k := range prods {
		if prods[k], err = kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(c.Topic)); err != nil {
			return rep, err
		}
		for i := range warmRecords {
			if err := prods[k].ProduceSync(ctx, &kgo.Record{Value: pool.Value(pool.Len() - 1 - i)}).FirstErr(); err != nil {
				return rep, fmt.Errorf("warm-up produce: %w", err)
			}
		}
	}
	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	errs := make([]error, n)
	var all sync.WaitGroup
	for k, prod := range prods {
		all.Go(func() { errs[k] = workload.Produce(ctx, prod, pool, k, c.Records, n, false, nil) })
	}
	all.Wait()
	firstErr := errors.Join(errs...)
	ph, err := w.End("produce", int64(c.Records), int64(c.Records)*int64(c.Size))
	for k, p := range prods {
		p.Close()
		prods[k] = nil
	}
	if firstErr != nil {
		return rep, fmt.Errorf("produce: %w", firstErr)
	}
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, ph)

	want := int64(c.Records + n*warmRecords)
	w, err = workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return rep, err
	}
	defer func() {
		if cons != nil {
			cons.Close()
		}
	}()
	got, bytes, err := poll(ctx, cons, want)
	if err != nil {
		return rep, err
	}
	ph, err = w.End("consume", got, bytes)
	if err != nil {
		return rep, err
	}
	if got != want || bytes != want*int64(c.Size) {
		return rep, fmt.Errorf("consumed %d records of %d bytes, want %d records of %d bytes", got, bytes, want, want*int64(c.Size))
	}
	rep.Phases = append(rep.Phases, ph)
	// A group-less consumer left polling at the tail would be charged to
	// the fan-out phases.
	cons.Close()
	cons = nil
	if c.Groups > 0 {
		phs, err := kafkaFanOut(ctx, c, pool, adm)
		if err != nil {
			return rep, err
		}
		rep.Phases = append(rep.Phases, phs...)
	}
	if c.LatencyRecords > 0 {
		ph, err := kafkaLatency(ctx, c, pool)
		if err != nil {
			return rep, err
		}
		rep.Phases = append(rep.Phases, ph)
	}
	// The idle connections must have lasted the phases: a broker that shed
	// them would have measured something else.
	if err := idle.check(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// createTopic creates the case's topic; drop deletes it and closes the
// admin client.
func createTopic(ctx context.Context, c *workload.Case) (adm *kadm.Client, drop func(), err error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr))
	if err != nil {
		return nil, nil, err
	}
	adm = kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, int32(c.Partitions), 1, nil, c.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("create topic %s: %w", c.Topic, err)
	}
	return adm, func() {
		_, _ = adm.DeleteTopics(context.WithoutCancel(ctx), c.Topic)
		cl.Close()
	}, nil
}

// kafkaLatency sends single records with linger 0, so that each goes out
// in a request of its own as soon as it is produced, and waits for each
// ack before the next.
func kafkaLatency(ctx context.Context, c *workload.Case, pool *workload.Pool) (workload.Phase, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr), kgo.DefaultProduceTopic(c.Topic), kgo.ProducerLinger(0))
	if err != nil {
		return workload.Phase{}, err
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: pool.Value(0)}).FirstErr(); err != nil {
		return workload.Phase{}, fmt.Errorf("latency warm-up: %w", err)
	}
	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return workload.Phase{}, err
	}
	lat, err := c.Pace(func(i int) error {
		return cl.ProduceSync(ctx, &kgo.Record{Value: pool.Value(i)}).FirstErr()
	})
	if err != nil {
		return workload.Phase{}, fmt.Errorf("latency produce: %w", err)
	}
	return w.LatencyPhase(lat, c.Size)
}
