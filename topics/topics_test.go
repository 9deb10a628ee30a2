package topics_test

import (
	"slices"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/topics"
)

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func commit(g, topic string, p int32, off int64) claims.GroupOffset {
	return claims.GroupOffset{Group: g, Topic: topic, Partition: p, Offset: off}
}

// Rates come from two readings 2 s apart: records in from the end offsets, bytes in from the
// sizes, records out from each group's commits summed, bytes out at the mean record size.
func TestMeasureRates(t *testing.T) {
	var m topics.Meter
	first := m.Add(topics.Reading{At: t0,
		Partitions: []topics.Partition{{Topic: "orders", Partition: 1, End: 50, Bytes: 5000, Records: 50}, {Topic: "orders", Partition: 0, End: 100, Bytes: 10_000, Records: 100}},
		Commits:    []claims.GroupOffset{commit("billing", "orders", 0, 90), commit("audit", "orders", 0, 40)}})
	if len(first.Topics) != 1 || first.Over != 0 {
		t.Fatalf("first snapshot %+v", first)
	}
	if r := first.Topics[0].Partitions[0]; r.RecordsIn != nil || r.BytesOut != nil || r.Partition != 0 {
		t.Fatalf("a first reading has rates or is out of order: %+v", r)
	}
	s := m.Add(topics.Reading{At: t0.Add(2 * time.Second),
		Partitions: []topics.Partition{
			{Topic: "orders", Partition: 0, End: 140, Bytes: 14_000, Records: 140},
			// Retention deleted a segment: the size shrank, so bytes in cannot be told.
			{Topic: "orders", Partition: 1, End: 60, Bytes: 1000, Records: 10},
			{Topic: "audit", Partition: 0, End: 3},
		},
		Commits: []claims.GroupOffset{commit("billing", "orders", 0, 130), commit("audit", "orders", 0, 60), commit("new", "orders", 1, 5)}})
	if s.Over != 2*time.Second {
		t.Fatalf("over %v", s.Over)
	}
	if names := []string{s.Topics[0].Topic, s.Topics[1].Topic}; !slices.Equal(names, []string{"audit", "orders"}) {
		t.Fatalf("topics %v", names)
	}
	p0 := s.Topics[1].Partitions[0]
	want := map[string]float64{"records in": 20, "bytes in": 2000, "records out": 30, "bytes out": 3000}
	got := map[string]*float64{"records in": p0.RecordsIn, "bytes in": p0.BytesIn, "records out": p0.RecordsOut, "bytes out": p0.BytesOut}
	for k, w := range want {
		if got[k] == nil || *got[k] != w {
			t.Errorf("partition 0 %s: %v, want %v", k, got[k], w)
		}
	}
	if !slices.Equal(p0.Groups, []string{"audit", "billing"}) || p0.Lag == nil || *p0.Lag != 80 {
		t.Errorf("partition 0 groups %v lag %v", p0.Groups, p0.Lag)
	}
	p1 := s.Topics[1].Partitions[1]
	if p1.BytesIn != nil || p1.RecordsIn == nil || *p1.RecordsIn != 5 || p1.RecordsOut == nil || *p1.RecordsOut != 0 {
		t.Errorf("partition 1: bytes in %v records in %v out %v", p1.BytesIn, p1.RecordsIn, p1.RecordsOut)
	}
	sum := s.Topics[1].Row
	if sum.End != 200 || sum.RecordsIn == nil || *sum.RecordsIn != 25 || sum.BytesIn != nil || !slices.Equal(sum.Groups, []string{"audit", "billing", "new"}) || *sum.Lag != 80 {
		t.Errorf("topic row %+v", sum)
	}
	if a := s.Topics[0].Partitions[0]; a.RecordsIn != nil || len(a.Groups) != 0 || a.Lag != nil {
		t.Errorf("a new topic has rates or groups: %+v", a)
	}
}

// A reading not after the previous one measures nothing.
func TestMeasureSameInstant(t *testing.T) {
	r := topics.Reading{At: t0, Partitions: []topics.Partition{{Topic: "a", End: 5}}}
	if s := topics.Measure(&r, r); s.Topics[0].Partitions[0].RecordsIn != nil {
		t.Fatalf("rate over no time: %v", *s.Topics[0].Partitions[0].RecordsIn)
	}
}
