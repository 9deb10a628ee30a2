package inspect_test

import (
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// benchRecords is the size of the benchmark log: IGGY_INSPECT_BENCH_RECORDS, default 100,000
// (docs/performance.md's figures use 1,000,000).
func benchRecords(b *testing.B) int {
	if s := os.Getenv("IGGY_INSPECT_BENCH_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	return 100_000
}

// fillLog fills partition 0 with a claim then offset commits of varied groups, topics,
// partitions and offsets (not one record repeated), in batches of 1,000 messages.
func fillLog(tb testing.TB, e *logEnv, n int) {
	e.Put(0, claim(1, 1, e.at(0)))
	msgs := make([]iggy.Message, 0, 1000)
	for i := 1; i < n; i++ {
		r := commit(1, "group-"+strconv.Itoa(i%997), "topic-"+strconv.Itoa(i%13), int32(i%64), int64(i*7+i%31), e.base.Add(time.Duration(i)*time.Millisecond))
		p, err := record.Encode(r)
		if err != nil {
			tb.Fatal(err)
		}
		msgs = append(msgs, iggy.Message{Payload: p})
		if len(msgs) == cap(msgs) || i == n-1 {
			e.PutRaw(0, msgs...)
			msgs = msgs[:0]
		}
	}
}

func BenchmarkInspectJSON(b *testing.B) {
	n := benchRecords(b)
	e := newLogEnv(b)
	fillLog(b, e, n)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		s := output.NewStream[inspect.RecordRow](io.Discard, output.JSON, "inspect.records", false).WithJSON(inspect.RecordRow.AppendJSON)
		if err := inspect.Inspect(e.ctx, e.log, inspect.Query{Partitions: []int{0}}, s.Add, nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "records/s")
}

func BenchmarkReplay(b *testing.B) {
	n := benchRecords(b)
	e := newLogEnv(b)
	fillLog(b, e, n)
	b.ResetTimer()
	var rate float64
	for range b.N {
		r, err := replay.Run(e.ctx, e.log, 0, replay.Options{FromStart: true})
		if err != nil {
			b.Fatal(err)
		}
		if r.Records != uint64(n) {
			b.Fatalf("replayed %d records of %d", r.Records, n)
		}
		rate = r.Rate
	}
	b.ReportMetric(rate, "records/s")
}
