package topics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
	"github.com/iggy-kafka/iggy-kafka/topics"
)

// Against a gateway and its store: the sampler's end offsets are those the gateway answers
// ListOffsets with, the sizes grow with what was written, and records in per second are the
// records produced over the fake clock's two seconds.
func TestSamplerOnAFleet(t *testing.T) {
	srv, gws := testfleet.Start(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String()), kgo.DefaultProduceTopic("events"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	produce := func(n int) {
		t.Helper()
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(strings.Repeat("v", 100))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(10)
	ic, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer ic.Close()
	clk := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	commits := []claims.GroupOffset{{Group: "g", Topic: "events", Partition: 0, Offset: 4}}
	s := &topics.Sampler{Iggy: ic, Stream: "kafka", Clock: clk, Commits: func(context.Context) ([]claims.GroupOffset, error) { return commits, nil }}
	first, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Topics) != 1 || first.Topics[0].Topic != "events" || len(first.Topics[0].Partitions) != 2 {
		t.Fatalf("topics %+v", first.Topics)
	}
	p0 := first.Topics[0].Partitions[0]
	if p0.End != 10 || p0.Bytes < 1000 || *p0.Lag != 6 || first.Topics[0].Partitions[1].End != 0 {
		t.Fatalf("partition 0 %+v, partition 1 %+v", p0, first.Topics[0].Partitions[1])
	}
	produce(6)
	commits = []claims.GroupOffset{{Group: "g", Topic: "events", Partition: 0, Offset: 10}}
	clk.Advance(2 * time.Second)
	second, err := s.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, "events")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("events", 0)
	q0 := second.Topics[0].Partitions[0]
	if q0.End != end.Offset || q0.End != 16 {
		t.Fatalf("end %d, the gateway answers %d", q0.End, end.Offset)
	}
	if q0.RecordsIn == nil || *q0.RecordsIn != 3 || q0.RecordsOut == nil || *q0.RecordsOut != 3 || q0.BytesIn == nil || *q0.BytesIn < 300 || q0.Bytes <= p0.Bytes {
		t.Fatalf("rates %+v over %v", q0, second.Over)
	}
}
