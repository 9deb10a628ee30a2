package coordinator

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// benchCommit is the n-th offset commit of a log holding 1,000 groups of 10 partitions.
func benchCommit(n int) record.Record {
	return record.Record{Type: record.TypeOffsetCommit, Claim: 1, Time: time.Unix(1700000000, 0),
		OffsetCommit: &record.OffsetCommit{Group: fmt.Sprintf("group-%04d", n%1000), Topic: "orders",
			Partition: int32(n / 1000 % 10), Offset: int64(n), LeaderEpoch: 0, Metadata: ""}}
}

// BenchmarkReplay replays one log partition of 1,000,000 records from the embedded store over
// its in-memory connection, as a gaining owner does (poll, decode, fold).
func BenchmarkReplay(b *testing.B) {
	const records = 1_000_000
	srv, err := store.New(store.Config{Listen: "127.0.0.1:0", DataDir: b.TempDir(), Logger: slog.New(slog.DiscardHandler), PasswordIterations: teststore.PasswordIterations})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(context.Background()) }()
	defer srv.Close()
	ctx := context.Background()
	cl, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{"memory"},
		Dial: func(ctx context.Context, _ string) (net.Conn, error) { return srv.Dial(ctx) }})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if err := logio.EnsureShape(ctx, cl, "kafka"); err != nil {
		b.Fatal(err)
	}
	meta, topic := wire.NamedID("kafka.meta"), wire.NamedID(fleet.LogTopic)
	claim, _ := record.Encode(record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1, Addr: "h:1"}})
	msgs := []iggy.Message{{Payload: claim}}
	for n := 1; n < records; n++ {
		p, _ := record.Encode(benchCommit(n))
		msgs = append(msgs, iggy.Message{Payload: p})
		if len(msgs) == 5000 || n == records-1 {
			if _, err := cl.SendMessages(ctx, meta, topic, 0, msgs); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
	src := logio.Poll{C: cl, P: logio.Partition{Stream: meta, Topic: topic, ID: 0}}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		st := record.NewState()
		next, err := logio.Replay(ctx, src, st, 0, -1, nil, nil)
		if err != nil || next != records || st.Counts().Offsets != 10000 {
			b.Fatalf("replayed to %d: %v, %+v", next, err, st.Counts())
		}
	}
	b.ReportMetric(float64(records*b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkFold is the replay without the store: decode and fold 1,000,000 records in memory.
func BenchmarkFold(b *testing.B) {
	const records = 1_000_000
	payloads := make([][]byte, records)
	payloads[0], _ = record.Encode(record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1}})
	for n := 1; n < records; n++ {
		payloads[n], _ = record.Encode(benchCommit(n))
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		st := record.NewState()
		for i, p := range payloads {
			r, err := record.Decode(p)
			if err != nil {
				b.Fatal(err)
			}
			st.Apply(uint64(i), r)
		}
	}
	b.ReportMetric(float64(records*b.N)/time.Since(start).Seconds(), "records/s")
}

// bigState is 10,000 groups of two members, each with offsets on 10 partitions.
func bigState() *record.State {
	st := record.NewState()
	st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1}})
	off := uint64(1)
	for g := range 10000 {
		name := fmt.Sprintf("group-%05d", g)
		rg := stableGroup(name, 3)
		st.Apply(off, record.Record{Type: record.TypeGroup, Claim: 1, Group: &rg})
		off++
		for p := range 10 {
			r := commit(name, "orders", int32(p), int64(1000*p))
			r.Claim = 1
			st.Apply(off, r)
			off++
		}
	}
	return st
}

// BenchmarkCheckpoint takes, encodes and reads back a checkpoint of 10,000 groups x 10
// partitions, and reports its size and the memory one group takes in a State.
func BenchmarkCheckpoint(b *testing.B) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st := bigState()
	runtime.GC()
	runtime.ReadMemStats(&after)
	perGroup := float64(after.HeapAlloc-before.HeapAlloc) / 10000
	runtime.KeepAlive(st)
	var size int
	var encode, decode time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		cp := st.Snapshot(110001)
		raw, err := record.Encode(record.Record{Type: record.TypeCheckpoint, Claim: 1, Checkpoint: &cp})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r, err := record.Decode(raw)
		if err != nil {
			b.Fatal(err)
		}
		fresh := record.NewState()
		fresh.Apply(110002, r)
		if fresh.Counts().Offsets != 100000 {
			b.Fatalf("%+v", fresh.Counts())
		}
		encode += t1.Sub(t0)
		decode += time.Since(t1)
		size = len(raw)
	}
	b.ReportMetric(float64(size), "checkpoint-bytes")
	b.ReportMetric(float64(encode.Milliseconds())/float64(b.N), "snapshot+encode-ms")
	b.ReportMetric(float64(decode.Milliseconds())/float64(b.N), "decode+load-ms")
	b.ReportMetric(perGroup, "state-bytes/group")
}
