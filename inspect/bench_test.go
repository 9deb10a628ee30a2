package inspect_test

import (
	"io"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread/logtest"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

func BenchmarkInspectJSON(b *testing.B) {
	n := testlog.BenchRecords(b)
	e := logtest.Start(b)
	e.Fill(b, n)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		s := output.NewStream[inspect.RecordRow](io.Discard, output.JSON, "inspect.records", false).WithJSON(inspect.RecordRow.AppendJSON)
		if err := inspect.Inspect(e.Ctx, e.Log, inspect.Query{Partitions: []int{0}}, s.Add, nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "records/s")
}
