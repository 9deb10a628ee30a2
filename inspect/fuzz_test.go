package inspect_test

import (
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
)

// Announcements come from another process's bytes: any input decodes or fails, never panics.
func FuzzDecodeAnnouncement(f *testing.F) {
	b, _ := record.Encode(claim(3, 2, time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)))
	f.Add(b)
	f.Add([]byte(`{"node":2,"addr":"h:9093","client_id":7,"applied":{"3":10},"draining":true,"time":"2026-12-01T09:00:00Z"}`))
	f.Add([]byte{record.Version})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := inspect.DecodeAnnouncement(in)
		if err != nil && (a.Node != 0 || a.Addr != "") {
			t.Fatalf("error %v with a value %+v", err, a)
		}
	})
}
