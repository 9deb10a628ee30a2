package logio

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// PollCount is how many messages one poll asks for: large enough that reading a million records
// is a few hundred round trips, small enough that a reply stays well under a megabyte or two.
const PollCount = 4096

// NoEnd reads a partition up to its end as of the read.
const NoEnd = math.MaxUint64

// ErrGap is a read that found messages missing in the middle of a partition (the gap rule, in
// the package doc).
var ErrGap = errors.New("coordinator: the log has a gap")

// GapError is ErrGap with where it is: the offset expected and the one the log gave instead. A
// reader that shows the log rather than folds it (`inspect --verify`) may report the gap and
// read on from Found; a fold never does.
type GapError struct{ Expected, Found uint64 }

func (e *GapError) Error() string {
	return fmt.Sprintf("%v: expected offset %d, the log gives %d", ErrGap, e.Expected, e.Found)
}

func (e *GapError) Is(target error) bool { return target == ErrGap }

// Take is the gap rule for the message at off when next is the offset expected: false for a
// message already read (a poll may repeat some), a *GapError for one beyond next.
func Take(next, off uint64) (bool, error) {
	switch {
	case off < next:
		return false, nil
	case off > next:
		return false, &GapError{Expected: next, Found: off}
	}
	return true, nil
}

// Poller reads messages; *iggy.Client has it.
type Poller interface {
	Poll(ctx context.Context, req iggy.PollRequest) (*iggy.Polled, error)
}

// Partition names one partition of a topic of the meta stream.
type Partition struct {
	Stream, Topic wire.Identifier
	ID            uint32
}

// Each calls fn for every message of partition p from offset from up to, not including, end
// (NoEnd: up to the partition's end as of the read), in log order, and returns the next offset
// to read. payload aliases the poll buffer and is valid only during fn. A missing message is
// ErrGap (Take); a read that finds no more messages before end returns where it stopped, and a
// caller that needs end reached compares. fn's error ends the read and is returned as it is.
func Each(ctx context.Context, c Poller, p Partition, from, end uint64, fn func(off uint64, payload []byte) error) (uint64, error) {
	next := from
	for next < end {
		before := next
		stop, short, err := pollOnce(ctx, c, p, &next, end, fn)
		if err != nil || stop || next == before || end == NoEnd && short {
			// No message at or after next (the end), or only offsets already read: polling
			// again would not advance. Read to the end, a short answer is the end as of the
			// read; what comes later is for the next read.
			return next, err
		}
	}
	return next, nil
}

// pollOnce asks for the messages from *next up to end with one poll and walks them; short says
// the answer held fewer messages than asked for.
func pollOnce(ctx context.Context, c Poller, p Partition, next *uint64, end uint64, fn func(uint64, []byte) error) (stop, short bool, err error) {
	count := uint32(min(uint64(PollCount), end-*next))
	polled, err := c.Poll(ctx, iggy.PollRequest{
		Stream: p.Stream, Topic: p.Topic, Partition: p.ID,
		Strategy: wire.PollingStrategy{Kind: wire.PollOffset, Value: *next}, Count: count,
	})
	if err != nil {
		return false, false, fmt.Errorf("partition %d at offset %d: %w", p.ID, *next, err)
	}
	defer polled.Release()
	stop, err = each(polled, next, end, false, fn)
	return stop, polled.Count < count, err
}

// each walks one poll's messages; stop says the read reached end. anchor takes the first
// message's offset as the next one expected (a read from the newest messages back).
func each(polled *iggy.Polled, next *uint64, end uint64, anchor bool, fn func(uint64, []byte) error) (stop bool, err error) {
	recs := message.Records(polled.Batches)
	for {
		rec, ok := recs.Next()
		if !ok {
			break
		}
		h, _ := message.ParseBatchHeader(rec)
		ferr := message.Each(rec, func(f message.Frame) bool {
			off := h.BaseOffset + uint64(f.OffsetDelta)
			if anchor {
				*next, anchor = off, false
			}
			if off >= end {
				stop = true
				return false
			}
			var take bool
			if take, err = Take(*next, off); err != nil || !take {
				return err == nil
			}
			if err = fn(off, f.Payload); err != nil {
				return false
			}
			*next = off + 1
			return true
		})
		if err != nil || stop {
			return stop, err
		}
		if ferr != nil {
			return false, ferr
		}
	}
	return false, recs.Err()
}

// Msg is one message with its offset, its payload owned by the caller.
type Msg struct {
	Offset  uint64
	Payload []byte
}

// Source reads one partition; Poll is the Iggy one, tests may use fakes.
type Source interface {
	// Read returns up to count messages from offset from on, in order; none at the end.
	Read(ctx context.Context, from uint64, count uint32) ([]Msg, error)
}

// Poll is the Source of partition P through C.
type Poll struct {
	C Poller
	P Partition
}

// Read makes one poll: a reader at the end of the partition costs one request.
func (s Poll) Read(ctx context.Context, from uint64, count uint32) ([]Msg, error) {
	var out []Msg
	_, _, err := pollOnce(ctx, s.C, s.P, &from, from+uint64(count), func(off uint64, b []byte) error {
		out = append(out, Msg{Offset: off, Payload: append([]byte(nil), b...)})
		return nil
	})
	return out, err
}

// Replay applies the records of src from offset from onwards into st until the end of the
// partition (until < 0) or through offset until, and returns the next offset to read. A decode
// error is shown through bad and skipped (the record is void for every reader alike); a gap is
// ErrGap, never skipped, and so is an offset at or below until that the partition does not hold
// yet. each, when set, sees every record decoded with the fold's verdict.
func Replay(ctx context.Context, src Source, st *record.State, from uint64, until int64, bad func(uint64, error),
	each func(off uint64, r record.Record, valid bool)) (uint64, error) {
	next := from
	for until < 0 || int64(next) <= until {
		count := uint32(PollCount)
		if until >= 0 {
			count = uint32(min(uint64(PollCount), uint64(until)-next+1))
		}
		msgs, err := src.Read(ctx, next, count)
		if err != nil {
			return next, err
		}
		if len(msgs) == 0 {
			if until >= 0 {
				return next, fmt.Errorf("%w: offset %d is not readable yet", ErrGap, next)
			}
			return next, nil
		}
		for _, m := range msgs {
			take, err := Take(next, m.Offset)
			if err != nil {
				return next, err
			}
			if !take {
				continue
			}
			r, err := record.Decode(m.Payload)
			if err != nil {
				if bad != nil {
					bad(m.Offset, err)
				}
				next++
				continue
			}
			valid := st.Apply(m.Offset, r)
			if each != nil {
				each(m.Offset, r, valid)
			}
			next++
		}
	}
	return next, nil
}

// LastCheckpoint finds the offset of the last valid checkpoint of partition p below end, by
// record.Validity over every record from the start: the rule the fold applies.
func LastCheckpoint(ctx context.Context, c Poller, p Partition, end uint64) (uint64, bool, error) {
	var (
		v     record.Validity
		at    uint64
		found bool
	)
	next, err := Each(ctx, c, p, 0, end, func(off uint64, b []byte) error {
		r, err := record.Decode(b)
		if err != nil {
			return nil // void for every reader
		}
		if v.Apply(&r) && r.Type == record.TypeCheckpoint {
			at, found = off, true
		}
		return nil
	})
	if err == nil && end != NoEnd && next < end {
		err = fmt.Errorf("%w: offset %d is not readable yet", ErrGap, next)
	}
	return at, found, err
}

// Last returns up to count of the newest messages of partition p, in order: where a reader of
// coordinator_owners starts, since each announcement is a whole statement of its node.
func Last(ctx context.Context, c Poller, p Partition, count uint32) ([]Msg, error) {
	polled, err := c.Poll(ctx, iggy.PollRequest{Stream: p.Stream, Topic: p.Topic, Partition: p.ID,
		Strategy: wire.PollingStrategy{Kind: wire.PollLast}, Count: count})
	if err != nil {
		return nil, err
	}
	defer polled.Release()
	var out []Msg
	next := uint64(0)
	_, err = each(polled, &next, NoEnd, true, func(off uint64, b []byte) error {
		out = append(out, Msg{Offset: off, Payload: append([]byte(nil), b...)})
		return nil
	})
	return out, err
}
