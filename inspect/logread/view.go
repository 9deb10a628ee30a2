package logread

import (
	"context"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
)

// FleetView reads the lease group's membership, the announcements and the drain requests into a
// view, without the coordinator log's partitions: what a command needs to find the gateways.
func (l *Log) FleetView(ctx context.Context) (*fleet.View, error) {
	v, _, err := l.View(ctx, fleet.DefaultLive)
	return v, err
}

// View reads the lease group's membership, the announcements and the drain requests into a new
// fleet.View whose announcements count as live for live; the membership is nil when the lease
// group does not exist yet.
func (l *Log) View(ctx context.Context, live time.Duration) (*fleet.View, []uint32, error) {
	members, err := l.Members(ctx)
	if err != nil {
		return nil, nil, err
	}
	v := fleet.NewView(live)
	if err := l.readOwners(ctx, v); err != nil {
		return nil, nil, err
	}
	if err := l.readDrains(ctx, v); err != nil {
		return nil, nil, err
	}
	if members != nil {
		v.SetMembers(members)
	}
	return v, members, nil
}

// readOwners feeds the newest announcements of coordinator_owners to v in log order
// (logio.OwnersFeed). fleet.View skips undecodable messages.
func (l *Log) readOwners(ctx context.Context, v *fleet.View) error {
	return logio.OwnersFeed(l.name).Read(ctx, l.c, func(_ uint64, b []byte) { _ = v.ApplyOwners(b) })
}

// readDrains feeds every message of coordinator_drains to v in log order, with its offset.
func (l *Log) readDrains(ctx context.Context, v *fleet.View) error {
	return logio.DrainsFeed(l.name).Read(ctx, l.c, func(off uint64, b []byte) { _ = v.ApplyDrains(off, b) })
}
