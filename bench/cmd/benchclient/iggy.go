package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// runIggy sends the records with one goroutine and connection per worker
// (c.Workers), partition p dealt every Partitions-th record and sent in
// batches of BatchCount messages, a worker going round its partitions one
// batch at a time; then it polls every partition back the same way, from
// offset 0.
func runIggy(ctx context.Context, c *workload.Case, pool *workload.Pool) (workload.Report, error) {
	rep := workload.Report{Client: "iggy-kafka/gateway/iggy"}
	workers := c.Workers()
	cl, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{c.Addr}, PoolSize: workers})
	if err != nil {
		return rep, err
	}
	defer cl.Close()
	st, err := cl.CreateStream(ctx, c.Topic)
	if err != nil {
		return rep, fmt.Errorf("create stream %s: %w", c.Topic, err)
	}
	stream := wire.NumericID(st.ID)
	defer func() { _ = cl.DeleteStream(context.WithoutCancel(ctx), stream) }()
	tp, err := cl.CreateTopic(ctx, stream, c.Topic, uint32(c.Partitions), iggy.TopicOptions{})
	if err != nil {
		return rep, fmt.Errorf("create topic %s: %w", c.Topic, err)
	}
	topic := wire.NumericID(tp.ID)
	// Every pooled connection logs in before the window opens.
	err = perWorker(workers, func(int) error { return cl.Ping(ctx) })
	if err != nil {
		return rep, err
	}
	idle, err := openIdleIggy(ctx, cl, c.Addr, c.Topic, c.IdleConns)
	if err != nil {
		return rep, err
	}
	defer idle.close()
	batch := c.BatchCount()

	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	err = perWorker(workers, func(wk int) error {
		var b message.Builder
		sent := make([]int, c.Partitions)
		return roundRobin(c, wk, workers, func(p int) (bool, error) {
			n := c.PartitionRecords(p)
			b.Reset()
			now := uint64(time.Now().UnixMicro())
			k := min(batch, n-sent[p])
			for j := range k {
				i := (sent[p]+j)*c.Partitions + p
				b.Add(message.MakeID(uint64(i)+1, 0), now, pool.Value(i), nil)
			}
			buf, err := b.Finish()
			if err != nil {
				return false, err
			}
			if _, err := cl.SendBatch(ctx, stream, topic, uint32(p), buf); err != nil {
				return false, fmt.Errorf("send to partition %d: %w", p, err)
			}
			sent[p] += k
			return sent[p] < n, nil
		})
	})
	if err != nil {
		return rep, err
	}
	ph, err := w.End("produce", int64(c.Records), int64(c.Records)*int64(c.Size))
	if err != nil {
		return rep, err
	}
	rep.Phases = append(rep.Phases, ph)

	var got, bytes atomic.Int64
	w, err = workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	err = perWorker(workers, func(wk int) error {
		next := make([]uint64, c.Partitions)
		return roundRobin(c, wk, workers, func(p int) (bool, error) {
			n := uint64(c.PartitionRecords(p))
			res, err := cl.Poll(ctx, iggy.PollRequest{Stream: stream, Topic: topic, Partition: uint32(p),
				Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: next[p]}, Count: uint32(batch)})
			if err != nil {
				return false, fmt.Errorf("poll partition %d at %d: %w", p, next[p], err)
			}
			defer res.Release()
			if res.Count == 0 {
				return false, fmt.Errorf("poll partition %d at %d: no messages, want %d", p, next[p], n)
			}
			var pb int64
			recs := message.Records(res.Batches)
			for rec, ok := recs.Next(); ok; rec, ok = recs.Next() {
				err := message.Each(rec, func(f message.Frame) bool {
					pb += int64(len(f.Payload))
					return true
				})
				if err != nil {
					return false, err
				}
			}
			next[p] += uint64(res.Count)
			got.Add(int64(res.Count))
			bytes.Add(pb)
			return next[p] < n, nil
		})
	})
	if err != nil {
		return rep, err
	}
	ph, err = w.End("consume", got.Load(), bytes.Load())
	if err != nil {
		return rep, err
	}
	if ph.Records != int64(c.Records) || ph.Bytes != int64(c.Records)*int64(c.Size) {
		return rep, fmt.Errorf("polled %d messages of %d bytes, want %d of %d", ph.Records, ph.Bytes, c.Records, c.Records*c.Size)
	}
	rep.Phases = append(rep.Phases, ph)
	if c.LatencyRecords > 0 {
		var b message.Builder
		w, err := workload.Begin(c.BrokerPID)
		if err != nil {
			return rep, err
		}
		lat, err := c.Pace(func(i int) error {
			b.Reset()
			b.Add(message.MakeID(uint64(c.Records+i)+1, 0), uint64(time.Now().UnixMicro()), pool.Value(i), nil)
			buf, err := b.Finish()
			if err == nil {
				_, err = cl.SendBatch(ctx, stream, topic, uint32(i%c.Partitions), buf)
			}
			return err
		})
		if err != nil {
			return rep, fmt.Errorf("latency send: %w", err)
		}
		ph, err := w.LatencyPhase(lat, c.Size)
		if err != nil {
			return rep, err
		}
		rep.Phases = append(rep.Phases, ph)
	}
	if err := idle.check(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// perWorker runs fn for every worker at once and returns the errors.
func perWorker(workers int, fn func(w int) error) error {
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs[w] = fn(w) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// roundRobin calls step for the partitions of worker w (w, w+workers, ...)
// in turn, one call per partition per turn, until every partition's step
// has said it is done; a partition with no records is done at once.
func roundRobin(c *workload.Case, w, workers int, step func(p int) (more bool, err error)) error {
	var live []int
	for p := w; p < c.Partitions; p += workers {
		if c.PartitionRecords(p) > 0 {
			live = append(live, p)
		}
	}
	for len(live) > 0 {
		keep := live[:0]
		for _, p := range live {
			more, err := step(p)
			if err != nil {
				return err
			}
			if more {
				keep = append(keep, p)
			}
		}
		live = keep
	}
	return nil
}
