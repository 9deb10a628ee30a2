package tail_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
	"github.com/iggy-kafka/iggy-kafka/tail"
)

// tail.Stream on a gateway: it starts Last records before the end, hands out what arrives
// next, and ends on Close.
func TestTailStream(t *testing.T) {
	_, gws := testfleet.Start(t, 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(gws[0].Addr().String())}
	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic("events"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(ctx, 1, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte('a' + i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	s := tail.Open(adm, opts, tail.Options{Topic: "events", Follow: true, Last: 5})
	var got []int64
	for len(got) < 5 {
		b, err := s.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range b {
			got = append(got, r.Offset)
		}
	}
	if got[0] != 15 || got[4] != 19 || len(got) != 5 {
		t.Fatalf("offsets %v, want 15..19", got)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b, err := s.Next(ctx)
	if err != nil || len(b) != 1 || b[0].Offset != 20 || b[0].Value != "late" {
		t.Fatalf("next %+v %v", b, err)
	}
	s.Close()
	if _, err := s.Next(ctx); err != tail.ErrEnded {
		t.Fatalf("after Close: %v", err)
	}
}
