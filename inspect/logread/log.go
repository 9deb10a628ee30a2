package logread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Iggy is what the reader needs of an Iggy client; *iggy.Client has it. Tests may pass a
// client connected to an in-process store.
type Iggy interface {
	Poll(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error)
	GetTopic(ctx context.Context, stream, topic wire.Identifier) (*wire.TopicDetails, error)
	GetConsumerGroup(ctx context.Context, stream, topic, group wire.Identifier) (*wire.ConsumerGroupDetails, error)
}

// Log reads one gateway fleet's coordinator log.
type Log struct {
	c      Iggy
	name   string // the gateways' stream
	stream wire.Identifier
	clock  clock.Clock
	// FollowEvery is the pause between two end-offset checks of a follower that has caught up.
	FollowEvery time.Duration
}

// NewLog reads the coordinator log of the gateways serving Kafka topics from stream.
func NewLog(c Iggy, stream string, clk clock.Clock) *Log {
	return &Log{c: c, name: stream, stream: wire.NamedID(fleet.MetaStream(stream)), clock: clock.Or(clk), FollowEvery: 20 * time.Millisecond}
}

// Entry is one message of a log partition.
type Entry struct {
	Partition int
	Offset    uint64
	// Record is the decoded record when Err is nil.
	Record record.Record
	// Err is why the payload could not be decoded (a *record.DecodeError); the entry is shown
	// and skipped, never fatal.
	Err error
	// Size is the payload's length in bytes.
	Size int
	// Payload is the message as stored; it aliases the poll buffer and is valid only during
	// the callback.
	Payload []byte
}

// Ends returns the next offset of every log partition (0 for an empty one), indexed by
// partition, from one topic request.
func (l *Log) Ends(ctx context.Context) ([]uint64, error) {
	td, err := l.c.GetTopic(ctx, l.stream, wire.NamedID(fleet.LogTopic))
	if err != nil {
		return nil, fmt.Errorf("coordinator log %s/%s: %w", l.stream, fleet.LogTopic, err)
	}
	ends := make([]uint64, record.Partitions)
	if len(td.Partitions) != record.Partitions {
		return nil, fmt.Errorf("coordinator log %s/%s has %d partitions, want %d", l.stream, fleet.LogTopic, len(td.Partitions), record.Partitions)
	}
	for _, p := range td.Partitions {
		if int(p.ID) < record.Partitions && p.MessagesCount > 0 {
			ends[p.ID] = p.CurrentOffset + 1
		}
	}
	return ends, nil
}

// Read calls fn for every message of partition from offset from up to, not including, end, in
// log order. It stops at the first error fn returns, and at a gap (logio.ErrGap): what follows a
// gap is not folded.
func (l *Log) Read(ctx context.Context, partition int, from, end uint64, fn func(*Entry) error) error {
	return l.read(ctx, partition, from, end, fn)
}

// ReadAcross is Read for a reader that shows gaps instead of folding across them (`inspect
// --verify` reports each as a finding): at a gap it reads on from the offset the log gives, and
// fn sees that entry with the offsets before it missing.
func (l *Log) ReadAcross(ctx context.Context, partition int, from, end uint64, fn func(*Entry) error) error {
	for {
		err := l.read(ctx, partition, from, end, func(e *Entry) error {
			from = e.Offset + 1
			return fn(e)
		})
		var ge *logio.GapError
		if !errors.As(err, &ge) || ge.Found <= from {
			return err
		}
		from = ge.Found
	}
}

func (l *Log) read(ctx context.Context, partition int, from, end uint64, fn func(*Entry) error) error {
	var (
		e     Entry
		fnErr error
	)
	p := logio.Partition{Stream: l.stream, Topic: wire.NamedID(fleet.LogTopic), ID: uint32(partition)}
	_, err := logio.Each(ctx, l.c, p, from, end, func(off uint64, payload []byte) error {
		e = Entry{Partition: partition, Offset: off, Size: len(payload), Payload: payload}
		e.Record, e.Err = record.Decode(payload)
		fnErr = fn(&e)
		return fnErr
	})
	if err != nil && err != fnErr {
		return fmt.Errorf("%s/%s: %w", l.stream, fleet.LogTopic, err)
	}
	return err
}

// ErrStop ends a Follow or a Read from inside fn without an error.
var ErrStop = errors.New("stop")

// Follow reads partitions from the offsets in from (indexed by partition; a partition not in
// partitions is skipped) and keeps reading as records arrive until ctx ends or fn returns an
// error. It checks the end offsets of all 16 partitions with one request every FollowEvery
// while idle and polls only the partitions that grew, so a quiet fleet costs one request per
// interval. caughtUp is called each time every partition has been read to its end; an error it
// returns ends the follow (ErrStop without an error).
func (l *Log) Follow(ctx context.Context, partitions []int, from []uint64, fn func(*Entry) error, caughtUp func() error) error {
	next := append([]uint64(nil), from...)
	for {
		ends, err := l.Ends(ctx)
		if ctx.Err() != nil {
			return nil // the caller ended the follow, perhaps in the middle of a request
		}
		if err != nil {
			return err
		}
		for _, p := range partitions {
			if ends[p] > next[p] {
				err := l.Read(ctx, p, next[p], ends[p], func(e *Entry) error {
					next[p] = e.Offset + 1
					return fn(e)
				})
				if errors.Is(err, ErrStop) || ctx.Err() != nil {
					return nil
				}
				if err != nil {
					return err
				}
			}
		}
		if caughtUp != nil {
			if err := caughtUp(); errors.Is(err, ErrStop) || ctx.Err() != nil {
				return nil // the caller ended the follow, perhaps in the middle of a refresh
			} else if err != nil {
				return err
			}
		}
		t := l.clock.NewTimer(l.FollowEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C():
		}
	}
}

// Members lists the Iggy member ids of the lease group (logio.Members); nil when the group does
// not exist yet.
func (l *Log) Members(ctx context.Context) ([]uint32, error) { return logio.Members(ctx, l.c, l.name) }

// Clock is the time source the reader waits on; commands stamp what they write with it too.
func (l *Log) Clock() clock.Clock { return l.clock }

// Client is the Iggy client the reader polls through.
func (l *Log) Client() Iggy { return l.c }

// Stream is the gateways' stream, whose meta stream holds the log.
func (l *Log) Stream() string { return l.name }

// MetaStream is the Iggy identifier of the meta stream (fleet.MetaStream of Stream).
func (l *Log) MetaStream() wire.Identifier { return l.stream }

// LastCheckpoint finds the last valid checkpoint of a log partition before end
// (logio.LastCheckpoint): its offset, and whether there is one.
func (l *Log) LastCheckpoint(ctx context.Context, partition int, end uint64) (uint64, bool, error) {
	return logio.LastCheckpoint(ctx, l.c, logio.Partition{Stream: l.stream, Topic: wire.NamedID(fleet.LogTopic), ID: uint32(partition)}, end)
}
