//go:build ignore

// Command sdkclient is the benchmark client for the official Apache Iggy Go
// SDK: the same case as benchclient -system iggy (one goroutine and one SDK
// client per partition, batches of BatchCount messages, polls from offset
// 0), sent through the SDK's own API, as an application would use it.
//
// It imports the SDK, which this module cannot require (no proxy serves
// it), so the build constraint above keeps it out of this module's builds;
// the runner builds it in a throwaway module that points at an apache/iggy
// checkout with a replace directive.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

func main() {
	var c workload.Case
	fs := flag.NewFlagSet("sdkclient", flag.ExitOnError)
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	c.Register(fs)
	_ = fs.Parse(os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rep, err := run(ctx, &c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sdkclient:", err)
		os.Exit(1)
	}
	if err := rep.Write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdkclient:", err)
		os.Exit(1)
	}
}

func connect(ctx context.Context, addr string) (iggcon.Client, error) {
	cl, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(addr)))
	if err != nil {
		return nil, err
	}
	if err := cl.Connect(ctx); err != nil {
		return nil, err
	}
	if _, err := cl.LoginUser(ctx, "iggy", "iggy"); err != nil {
		_ = cl.Close()
		return nil, err
	}
	return cl, nil
}

func run(ctx context.Context, c *workload.Case) (workload.Report, error) {
	rep := workload.Report{Client: "apache/iggy foreign/go"}
	pool, err := c.Pool()
	if err != nil {
		return rep, err
	}
	clients := make([]iggcon.Client, c.Partitions)
	for p := range clients {
		if clients[p], err = connect(ctx, c.Addr); err != nil {
			return rep, fmt.Errorf("connect: %w", err)
		}
		defer clients[p].Close()
	}
	admin := clients[0]
	st, err := admin.CreateStream(ctx, c.Topic)
	if err != nil {
		return rep, fmt.Errorf("create stream %s: %w", c.Topic, err)
	}
	stream, _ := iggcon.NewIdentifier(st.Id)
	defer func() { _ = admin.DeleteStream(context.WithoutCancel(ctx), stream) }()
	tp, err := admin.CreateTopic(ctx, stream, c.Topic, uint32(c.Partitions), iggcon.CompressionAlgorithmNone, iggcon.Duration(0), 0)
	if err != nil {
		return rep, fmt.Errorf("create topic %s: %w", c.Topic, err)
	}
	topic, _ := iggcon.NewIdentifier(tp.Id)
	batch := c.BatchCount()

	w, err := workload.Begin(c.BrokerPID)
	if err != nil {
		return rep, err
	}
	err = perPartition(c, func(p int) error {
		n := c.PartitionRecords(p)
		msgs := make([]iggcon.IggyMessage, 0, batch)
		for sent := 0; sent < n; {
			msgs = msgs[:0]
			k := min(batch, n-sent)
			for j := range k {
				m, err := iggcon.NewIggyMessage(pool.Value((sent+j)*c.Partitions + p))
				if err != nil {
					return err
				}
				msgs = append(msgs, m)
			}
			if _, err := clients[p].SendMessages(ctx, stream, topic, iggcon.PartitionId(uint32(p)), msgs); err != nil {
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
		part := uint32(p)
		var next uint64
		for next < n {
			res, err := clients[p].PollMessages(ctx, stream, topic, iggcon.DefaultConsumer(),
				iggcon.OffsetPollingStrategy(next), uint32(batch), false, &part)
			if err != nil {
				return fmt.Errorf("poll partition %d at %d: %w", p, next, err)
			}
			if len(res.Messages) == 0 {
				return fmt.Errorf("poll partition %d at %d: no messages, want %d", p, next, n)
			}
			var pb int64
			for _, m := range res.Messages {
				pb += int64(len(m.Payload))
			}
			next += uint64(len(res.Messages))
			got.Add(int64(len(res.Messages)))
			bytes.Add(pb)
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
		w, err := workload.Begin(c.BrokerPID)
		if err != nil {
			return rep, err
		}
		lat, err := c.Pace(func(i int) error {
			m, err := iggcon.NewIggyMessage(pool.Value(i))
			if err == nil {
				_, err = admin.SendMessages(ctx, stream, topic, iggcon.PartitionId(uint32(i%c.Partitions)), []iggcon.IggyMessage{m})
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

func perPartition(c *workload.Case, fn func(p int) error) error {
	errs := make([]error, c.Partitions)
	var wg sync.WaitGroup
	for p := range c.Partitions {
		wg.Go(func() { errs[p] = fn(p) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
