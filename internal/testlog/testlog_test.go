package testlog

import (
	"context"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// What Put appends is what a reader of the log polls back: the record, decoded, at the offset
// Put returned, in the partition it was put in.
func TestPutReadsBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	s := teststore.Start(t, nil)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{s.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	l := Create(ctx, t, c, "kafka")
	want := record.Record{Type: record.TypeClaim, Claim: 7, Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		ClaimInfo: &record.Claim{Number: 7, Node: 2, Addr: "localhost:9092"}}
	l.PutRaw(3, iggy.Message{Payload: []byte("first")})
	off := l.Put(3, want)
	if off != 1 {
		t.Fatalf("Put after one message returned offset %d, want 1", off)
	}
	var got []logread.Entry
	err = logread.NewLog(c, "kafka", nil).Read(ctx, 3, 0, off+1, func(e *logread.Entry) error {
		e.Payload = append([]byte(nil), e.Payload...)
		got = append(got, *e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0].Payload) != "first" || got[1].Offset != off || got[1].Err != nil {
		t.Fatalf("read back %+v", got)
	}
	if r := got[1].Record; r.Type != want.Type || r.Claim != want.Claim || !r.Time.Equal(want.Time) || r.ClaimInfo == nil || *r.ClaimInfo != *want.ClaimInfo {
		t.Fatalf("read back %+v, want %+v", r, want)
	}
}
