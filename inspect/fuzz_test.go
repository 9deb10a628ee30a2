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
	// version 1, node 2, "h:1", time, not leaving, partitions 3 and 15 under claims 7 and 9
	f.Add([]byte{1, 4, 3, 'h', ':', '1', 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 3, 7, 15, 9})
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := inspect.DecodeAnnouncement(in)
		if err != nil {
			return
		}
		for p := range a.Claims {
			if inspect.CheckPartition(p) != nil {
				t.Fatalf("decoded partition %d", p)
			}
		}
	})
}
