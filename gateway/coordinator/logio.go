package coordinator

import (
	"context"
	"errors"
	"fmt"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

const (
	// pollCount is how many messages one replay poll asks for: large enough that a replay of a
	// million records is a few hundred round trips.
	pollCount = 4096
)

// checkpointConsumer is the Iggy consumer whose stored offset on log partition p is the log
// offset of p's last checkpoint (see the package doc).
var checkpointConsumer = wire.Consumer{Kind: wire.ConsumerKindSingle, ID: wire.NamedID(fleet.CheckpointConsumer)}

// errGap is a replay that found messages missing in the middle of the log: applying what comes
// after would silently lose what is missing (a deletion, a claim), so the reader resyncs or fails.
var errGap = errors.New("coordinator: the log has a gap")

// shapeError is the refusal to start on a `<stream>.meta` of another shape.
type shapeError struct {
	stream, topic string
	have, want    int
}

func (e *shapeError) Error() string {
	return fmt.Sprintf("coordinator: topic %s/%s has %d partitions, the coordinator log needs %d; "+
		"delete the topic or point the gateway at another --stream", e.stream, e.topic, e.have, e.want)
}

// ensureShape creates `<stream>.meta` with its three topics when missing and refuses another
// shape.
func ensureShape(ctx context.Context, c *iggy.Client, meta string) error {
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
			return &shapeError{stream: meta, topic: t.name, have: n, want: t.parts}
		}
	}
	return nil
}

// logMsg is one message of a log partition.
type logMsg struct {
	offset  uint64
	payload []byte // owned by the caller after poll returns
}

// source reads a partition of the log; the Iggy implementation is pollSource, tests use fakes.
type source interface {
	// read returns up to count messages from offset on, in order; none at the end.
	read(ctx context.Context, from uint64, count uint32) ([]logMsg, error)
}

type pollSource struct {
	c             *iggy.Client
	stream, topic wire.Identifier
	partition     uint32
}

func (s pollSource) read(ctx context.Context, from uint64, count uint32) ([]logMsg, error) {
	return pollMsgs(ctx, s.c, iggy.PollRequest{
		Stream: s.stream, Topic: s.topic, Partition: s.partition,
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: from}, Count: count,
	})
}

// pollMsgs polls and copies out the messages with their offsets.
func pollMsgs(ctx context.Context, c *iggy.Client, req iggy.PollRequest) ([]logMsg, error) {
	p, err := c.Poll(ctx, req)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	out := make([]logMsg, 0, p.Count)
	recs := message.Records(p.Batches)
	for {
		rec, ok := recs.Next()
		if !ok {
			break
		}
		h, _ := message.ParseBatchHeader(rec)
		it := message.Frames(rec)
		for {
			f, ok := it.Next()
			if !ok {
				break
			}
			out = append(out, logMsg{offset: h.BaseOffset + uint64(f.OffsetDelta), payload: append([]byte(nil), f.Payload...)})
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
	}
	return out, recs.Err()
}

// replay applies the records of src from offset from onwards into st until the end of the
// partition (until < 0) or through offset until, and returns the next offset to read. A decode
// error is shown through bad and skipped (the record is void for every reader alike); a gap is
// errGap, never skipped.
func replay(ctx context.Context, src source, st *record.State, from uint64, until int64, bad func(uint64, error),
	each func(off uint64, r record.Record, valid bool)) (uint64, error) {
	next := from
	for until < 0 || int64(next) <= until {
		count := uint32(pollCount)
		if until >= 0 {
			count = uint32(min(uint64(pollCount), uint64(until)-next+1))
		}
		msgs, err := src.read(ctx, next, count)
		if err != nil {
			return next, err
		}
		if len(msgs) == 0 {
			if until >= 0 {
				return next, fmt.Errorf("%w: offset %d is not readable yet", errGap, next)
			}
			return next, nil
		}
		for _, m := range msgs {
			if m.offset < next {
				continue
			}
			if m.offset != next {
				return next, fmt.Errorf("%w: expected offset %d, the log gives %d", errGap, next, m.offset)
			}
			r, err := record.Decode(m.payload)
			if err != nil {
				if bad != nil {
					bad(m.offset, err)
				}
				next++
				continue
			}
			valid := st.Apply(m.offset, r)
			if each != nil {
				each(m.offset, r, valid)
			}
			next++
		}
	}
	return next, nil
}
