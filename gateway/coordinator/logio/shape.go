package logio

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// ShapeError is the refusal to use a `<stream>.meta` of another shape.
type ShapeError struct {
	Stream, Topic string
	Have, Want    int
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("coordinator: topic %s/%s has %d partitions, the coordinator log needs %d; "+
		"delete the topic or point the gateway at another --stream", e.Stream, e.Topic, e.Have, e.Want)
}

// Shaper is what EnsureShape needs; *iggy.Client has it.
type Shaper interface {
	GetStream(ctx context.Context, id wire.Identifier) (*wire.StreamDetails, error)
	CreateStream(ctx context.Context, name string) (*wire.StreamDetails, error)
	GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error)
	CreateTopic(ctx context.Context, stream wire.Identifier, name string, partitions uint32, opts iggy.TopicOptions) (*wire.TopicDetails, error)
}

// EnsureShape creates the meta stream of the gateways serving stream, with its three topics
// (fleet.LogTopic of record.Partitions partitions, fleet.OwnersTopic and fleet.DrainsTopic of
// one), when missing, and refuses another shape with a *ShapeError. It is the only creator of
// them: gateways call it at start, and tests that stand in for a gateway.
func EnsureShape(ctx context.Context, c Shaper, stream string) error {
	meta := fleet.MetaStream(stream)
	sid := wire.NamedID(meta)
	if _, err := c.GetStream(ctx, sid); err != nil {
		if !errors.Is(err, wire.StreamIDNotFound) {
			return fmt.Errorf("coordinator: reading stream %s: %w", meta, err)
		}
		if _, err := c.CreateStream(ctx, meta); err != nil && !errors.Is(err, wire.StreamNameAlreadyExists) {
			return fmt.Errorf("coordinator: creating stream %s: %w", meta, err)
		}
	}
	for _, t := range []struct {
		name  string
		parts int
	}{{fleet.LogTopic, record.Partitions}, {fleet.OwnersTopic, 1}, {fleet.DrainsTopic, 1}} {
		td, err := c.GetTopic(ctx, sid, wire.NamedID(t.name))
		if err != nil {
			if !errors.Is(err, wire.TopicIDNotFound) {
				return fmt.Errorf("coordinator: reading topic %s/%s: %w", meta, t.name, err)
			}
			td, err = c.CreateTopic(ctx, sid, t.name, uint32(t.parts), iggy.TopicOptions{})
			if errors.Is(err, wire.TopicNameAlreadyExists) {
				td, err = c.GetTopic(ctx, sid, wire.NamedID(t.name))
			}
			if err != nil {
				return fmt.Errorf("coordinator: creating topic %s/%s: %w", meta, t.name, err)
			}
		}
		if n := int(td.PartitionsCount); n != t.parts {
			return &ShapeError{Stream: meta, Topic: t.name, Have: n, Want: t.parts}
		}
	}
	return nil
}
