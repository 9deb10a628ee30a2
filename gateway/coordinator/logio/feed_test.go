package logio_test

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// A feed reads each message once, in log order, with its offset, from where its previous read
// ended; the owners feed starts at the newest RecentAnnouncements; a topic no gateway created
// yet has no messages.
func TestFeeds(t *testing.T) {
	ctx, c := dial(t)
	drains := logio.DrainsFeed("kafka")
	if err := drains.Read(ctx, c, func(uint64, []byte) { t.Fatal("a message of a missing topic") }); err != nil {
		t.Fatalf("missing topic: %v", err)
	}
	if err := logio.EnsureShape(ctx, c, "kafka"); err != nil {
		t.Fatal(err)
	}
	meta := wire.NamedID(fleet.MetaStream("kafka"))
	send := func(topic string, n int) {
		t.Helper()
		msgs := make([]iggy.Message, n)
		for i := range msgs {
			msgs[i].Payload = []byte{byte(i)}
		}
		if _, err := c.SendMessages(ctx, meta, wire.NamedID(topic), 0, msgs); err != nil {
			t.Fatal(err)
		}
	}
	var got []uint64
	collect := func(off uint64, b []byte) {
		if b[0] != byte(off%3) {
			t.Fatalf("offset %d holds %d", off, b[0])
		}
		got = append(got, off)
	}
	send(fleet.DrainsTopic, 3)
	if err := drains.Read(ctx, c, collect); err != nil || len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("first read %v %v", got, err)
	}
	send(fleet.DrainsTopic, 3)
	if err := drains.Read(ctx, c, collect); err != nil || len(got) != 6 || got[3] != 3 || got[5] != 5 || drains.Next() != 6 {
		t.Fatalf("second read %v %v next %d", got, err, drains.Next())
	}

	for range logio.RecentAnnouncements/3 + 2 {
		send(fleet.OwnersTopic, 3)
	}
	total := uint64(3 * (logio.RecentAnnouncements/3 + 2))
	got = nil
	owners := logio.OwnersFeed("kafka")
	if err := owners.Read(ctx, c, collect); err != nil || len(got) != logio.RecentAnnouncements || got[0] != total-logio.RecentAnnouncements || owners.Next() != total {
		t.Fatalf("owners: %d messages from %v, next %d, err %v", len(got), got[:min(1, len(got))], owners.Next(), err)
	}
}
