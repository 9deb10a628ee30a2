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

// runIggy sends the records with one goroutine per partition, each dealt
// every Partitions-th record and sending batches of BatchCount messages,
// then polls every partition back the same way, from offset 0.
func runIggy(ctx context.Context, c *workload.Case, pool *workload.Pool) (workload.Report, error) {
	rep := workload.Report{Client: "iggy-kafka/gateway/iggy"}
	cl, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{c.Addr}, PoolSize: c.Partitions})
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
	for range c.Partitions {
		if err := cl.Ping(ctx); err != nil {
			return rep, err
		}
	}
	batch := c.BatchCount()

	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	err = perPartition(c, func(p int) error {
		var b message.Builder
		n := c.PartitionRecords(p)
		for sent := 0; sent < n; {
			b.Reset()
			now := uint64(time.Now().UnixMicro())
			k := min(batch, n-sent)
			for j := range k {
				i := (sent+j)*c.Partitions + p
				b.Add(message.MakeID(uint64(i)+1, 0), now, pool.Value(i), nil)
			}
			buf, err := b.Finish()
			if err != nil {
				return err
			}
			if _, err := cl.SendBatch(ctx, stream, topic, uint32(p), buf); err != nil {
				return fmt.Errorf("send to partition %d: %w", p, err)
			}
			sent += k
		}
		return nil
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
	err = perPartition(c, func(p int) error {
		n := uint64(c.PartitionRecords(p))
		var next uint64
		for next < n {
			res, err := cl.Poll(ctx, iggy.PollRequest{Stream: stream, Topic: topic, Partition: uint32(p),
				Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: next}, Count: uint32(batch)})
			if err != nil {
				return fmt.Errorf("poll partition %d at %d: %w", p, next, err)
			}
			if res.Count == 0 {
				res.Release()
				return fmt.Errorf("poll partition %d at %d: no messages, want %d", p, next, n)
			}
			var pb int64
			recs := message.Records(res.Batches)
			for rec, ok := recs.Next(); ok; rec, ok = recs.Next() {
				err := message.Each(rec, func(f message.Frame) bool {
					pb += int64(len(f.Payload))
					return true
				})
				if err != nil {
					res.Release()
					return err
				}
			}
			next += uint64(res.Count)
			got.Add(int64(res.Count))
			bytes.Add(pb)
			res.Release()
		}
		return nil
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
	return rep, nil
}

// perPartition runs fn for every partition at once and returns the errors.
func perPartition(c *workload.Case, fn func(p int) error) error {
	errs := make([]error, c.Partitions)
	var wg sync.WaitGroup
	for p := range c.Partitions {
		wg.Go(func() { errs[p] = fn(p) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
