package store

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// BenchmarkSendMessages measures one connection sending batches of 1 KiB
// messages over loopback with fsync never; bytes are message payload bytes.
// The request frame is built once and resent, so the client side allocates
// nothing and the allocation figure is the server's.
func BenchmarkSendMessages(b *testing.B) {
	for _, perBatch := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", perBatch), func(b *testing.B) {
			s := startServer(b, b.TempDir(), nil)
			c := loggedIn(b, s)
			mustCreateStream(b, c, "bench")
			mustCreateTopic(b, c, sid0, "t", 1)
			payload := make([]byte, 1024)
			var bld message.Builder
			bld.Reset()
			for i := range perBatch {
				bld.Add(message.MakeID(uint64(i+1), 1), 1_000_000, payload, nil)
			}
			batch, err := bld.Finish()
			if err != nil {
				b.Fatal(err)
			}
			h := wire.RequestHeader{Operation: wire.OpSendMessages, Request: c.counter, Session: c.session, Client: c.client}
			frame := requestFrame(h, sendBody(sid0, tid0, wire.PartitionIDPartitioning(0), batch))
			buf := make([]byte, 0, 4096)
			b.SetBytes(int64(perBatch * len(payload)))
			_ = c.nc.SetDeadline(time.Time{})
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.nc.Write(frame); err != nil {
					b.Fatal(err)
				}
				reply, err := wire.ReadFrame(c.nc, buf)
				if err != nil {
					b.Fatal(err)
				}
				if wire.FrameCommand(reply) != wire.CommandReply || reply[216] != 0 {
					b.Fatalf("send failed: command %d status %d", wire.FrameCommand(reply), reply[216])
				}
				buf = reply[:0]
			}
		})
	}
}

// BenchmarkPollMessages measures polling 1000 stored 1 KiB messages per
// request from one partition.
func BenchmarkPollMessages(b *testing.B) {
	s := startServer(b, b.TempDir(), nil)
	c := loggedIn(b, s)
	mustCreateStream(b, c, "bench")
	mustCreateTopic(b, c, sid0, "t", 1)
	payload := make([]byte, 1024)
	var bld message.Builder
	for range 10 {
		bld.Reset()
		for i := range 1000 {
			bld.Add(message.MakeID(uint64(i+1), 1), 1_000_000, payload, nil)
		}
		batch, err := bld.Finish()
		if err != nil {
			b.Fatal(err)
		}
		ok(b, c.do(wire.CmdSendMessages, sendBody(sid0, tid0, wire.PartitionIDPartitioning(0), batch)))
	}
	q := wire.PollMessages{Consumer: single, Stream: sid0, Topic: tid0, Partition: wire.SomePartition(0),
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: 0}, Count: 1000}
	h := wire.RequestHeader{Operation: wire.OpNonReplicated, Code: wire.CmdPollMessages, Request: c.counter, Session: c.session, Client: c.client}
	frame := requestFrame(h, q.AppendTo(nil))
	buf := make([]byte, 0, 2<<20)
	b.SetBytes(1000 * 1024)
	_ = c.nc.SetDeadline(time.Time{})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		reply, err := wire.ReadFrame(c.nc, buf)
		if err != nil {
			b.Fatal(err)
		}
		if len(reply) < wire.HeaderSize+wire.PollPrefixSize+1000*1024 {
			b.Fatalf("short poll reply: %d bytes", len(reply))
		}
		buf = reply[:0]
	}
}

// BenchmarkSendMessagesParallel runs four connections, each sending batches
// of 1000 x 1 KiB messages to its own partition.
func BenchmarkSendMessagesParallel(b *testing.B) {
	const conns = 4
	s := startServer(b, b.TempDir(), nil)
	admin := loggedIn(b, s)
	mustCreateStream(b, admin, "bench")
	mustCreateTopic(b, admin, sid0, "t", conns)
	payload := make([]byte, 1024)
	var bld message.Builder
	bld.Reset()
	for i := range 1000 {
		bld.Add(message.MakeID(uint64(i+1), 1), 1_000_000, payload, nil)
	}
	batch, err := bld.Finish()
	if err != nil {
		b.Fatal(err)
	}
	clients := make(chan *rawClient, conns)
	frames := map[*rawClient][]byte{}
	for p := range uint32(conns) {
		c := loggedIn(b, s)
		_ = c.nc.SetDeadline(time.Time{})
		h := wire.RequestHeader{Operation: wire.OpSendMessages, Request: c.counter, Session: c.session, Client: c.client}
		frames[c] = requestFrame(h, sendBody(sid0, tid0, wire.PartitionIDPartitioning(p), batch))
		clients <- c
	}
	b.SetBytes(int64(1000 * len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range conns {
		n := b.N / conns
		if w < b.N%conns {
			n++
		}
		c := <-clients
		wg.Go(func() {
			frame := frames[c]
			buf := make([]byte, 0, 4096)
			for range n {
				if _, err := c.nc.Write(frame); err != nil {
					b.Error(err)
					return
				}
				reply, err := wire.ReadFrame(c.nc, buf)
				if err != nil || reply[216] != 0 {
					b.Errorf("send failed: %v", err)
					return
				}
				buf = reply[:0]
			}
		})
	}
	wg.Wait()
}
