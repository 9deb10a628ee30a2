// Package testlog writes a coordinator log by hand, for tests of what reads one (package
// inspect, the operator commands): it creates the log's stream and topic on a store the way the
// first gateway does, and appends records the way gateways do, one record.Encode per message.
// Writing records directly lets a test set every field (claims, times, nodes) that a gateway
// would choose for itself.
//
// The two things to know are Create, which makes an empty log, and Log.Put, which appends to
// it. Only _test.go files may import this package.
package testlog

import (
	"context"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Log is a coordinator log on a store, written through one client.
type Log struct {
	t      testing.TB
	ctx    context.Context
	c      *iggy.Client
	stream wire.Identifier
}

// Create makes the empty coordinator log of the gateways' stream on c's store as the first
// gateway does (logio.EnsureShape): the meta stream, its log topic of record.Partitions
// partitions, and the owners and drains topics. Failures fail t.
func Create(ctx context.Context, t testing.TB, c *iggy.Client, stream string) *Log {
	t.Helper()
	if err := logio.EnsureShape(ctx, c, stream); err != nil {
		t.Fatal(err)
	}
	return &Log{t: t, ctx: ctx, c: c, stream: wire.NamedID(fleet.MetaStream(stream))}
}

// Put appends records to a partition, one message each, and returns the offset of the first.
func (l *Log) Put(partition int, recs ...record.Record) uint64 {
	l.t.Helper()
	msgs := make([]iggy.Message, len(recs))
	for i, r := range recs {
		b, err := record.Encode(r)
		if err != nil {
			l.t.Fatal(err)
		}
		msgs[i] = iggy.Message{Payload: b}
	}
	return l.PutRaw(partition, msgs...)
}

// PutRaw appends messages as they are, for a test of bytes no gateway writes.
func (l *Log) PutRaw(partition int, msgs ...iggy.Message) uint64 {
	l.t.Helper()
	off, err := l.c.SendMessages(l.ctx, l.stream, wire.NamedID(fleet.LogTopic), uint32(partition), msgs)
	if err != nil {
		l.t.Fatal(err)
	}
	return off
}
