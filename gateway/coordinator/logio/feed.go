package logio

import (
	"context"
	"errors"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// RecentAnnouncements is how many of the newest messages of coordinator_owners a feed starts
// with: every gateway announces each second, so this covers every live node many times over.
const RecentAnnouncements = 1024

// Feed reads one single-partition topic of the meta stream, coordinator_owners or
// coordinator_drains, from where its previous read ended, in log order, with each message's
// offset: the one reader of both for the gateways and the operator commands. Not safe for
// concurrent use.
type Feed struct {
	p Partition
	// recent: the first read starts at the newest recent messages instead of offset 0.
	recent  uint32
	next    uint64
	started bool
}

// OwnersFeed reads the announcements of the gateways serving stream, starting with the newest
// RecentAnnouncements: each announcement is a whole statement of its node, so older ones
// change nothing a reader keeps.
func OwnersFeed(stream string) *Feed {
	return &Feed{p: Partition{Stream: wire.NamedID(fleet.MetaStream(stream)), Topic: wire.NamedID(fleet.OwnersTopic)}, recent: RecentAnnouncements}
}

// DrainsFeed reads every drain request of the gateways serving stream from the first: the
// latest request of each node, in log order, is the one that stands.
func DrainsFeed(stream string) *Feed {
	return &Feed{p: Partition{Stream: wire.NamedID(fleet.MetaStream(stream)), Topic: wire.NamedID(fleet.DrainsTopic)}}
}

// Next is the offset the next read starts at.
func (f *Feed) Next() uint64 { return f.next }

// Read calls fn with every message from Next up to the end as of the read, and moves Next past
// them. A topic that does not exist (no gateway has started on this stream yet) has none. The
// payload aliases the poll buffer and is valid only during fn. The gap rule is Each's.
func (f *Feed) Read(ctx context.Context, c Poller, fn func(off uint64, payload []byte)) error {
	if !f.started && f.recent > 0 {
		msgs, err := Last(ctx, c, f.p, f.recent)
		if missing(err) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, m := range msgs {
			fn(m.Offset, m.Payload)
			f.next = m.Offset + 1
		}
		f.started = true
	}
	next, err := Each(ctx, c, f.p, f.next, NoEnd, func(off uint64, b []byte) error {
		fn(off, b)
		return nil
	})
	if missing(err) {
		return nil
	}
	f.started, f.next = true, next
	return err
}

func missing(err error) bool {
	return errors.Is(err, wire.TopicNameNotFound) || errors.Is(err, wire.TopicIDNotFound) ||
		errors.Is(err, wire.StreamNameNotFound) || errors.Is(err, wire.StreamIDNotFound)
}
