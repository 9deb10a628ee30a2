package replay_test

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func BenchmarkReplay(b *testing.B) {
	n := testlog.BenchRecords(b)
	e := logtest.Start(b)
	e.Fill(b, n)
	b.ResetTimer()
	var rate float64
	for range b.N {
		r, err := replay.Run(e.Ctx, e.Log, 0, replay.Options{FromStart: true})
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
