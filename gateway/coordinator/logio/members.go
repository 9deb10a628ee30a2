package logio

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// MemberReader reads an Iggy consumer group; *iggy.Client and *iggy.Session have it.
type MemberReader interface {
	GetConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.ConsumerGroupDetails, error)
}

// Members lists the member ids of fleet.LeaseGroup on the log of the gateways serving stream,
// in Iggy's order (MemberIDs); nil when the group does not exist yet. fleet.Lease turns them
// into the partitions each holds.
func Members(ctx context.Context, c MemberReader, stream string) ([]uint32, error) {
	g, err := c.GetConsumerGroup(ctx, wire.NamedID(fleet.MetaStream(stream)), wire.NamedID(fleet.LogTopic), wire.NamedID(fleet.LeaseGroup))
	if errors.Is(err, wire.ConsumerGroupIDNotFound) || errors.Is(err, wire.ConsumerGroupNameNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("iggy consumer group %s: %w", fleet.LeaseGroup, err)
	}
	return MemberIDs(g), nil
}

// MemberIDs are the member ids of a consumer group as Iggy lists them: the order every reader
// of the lease keeps.
func MemberIDs(g *wire.ConsumerGroupDetails) []uint32 {
	out := make([]uint32, 0, len(g.Members))
	for _, m := range g.Members {
		out = append(out, m.ID)
	}
	return out
}
