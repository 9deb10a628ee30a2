package bridge

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// maxPollCount bounds the messages asked of Iggy for one fetch.
const maxPollCount = 100_000

func noRelease() {}

// fetch returns record batches from offset on, about maxBytes of them (at
// least one whole batch even when larger, as Kafka does), plus watermarks.
// Fetch versions 0-3 get magic 0/1 message sets (v0-v1 magic 0, v2-v3 magic
// 1); later versions get uncompressed magic-2 batches, one per Iggy batch.
func (b *Bridge) fetch(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64, maxBytes int32, version int16) (kafka.FetchResult, error) {
	res := kafka.FetchResult{HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, Release: noRelease}
	if partition < 0 {
		return res, fmt.Errorf("%w: partition %d", kerr.UnknownTopicOrPartition, partition)
	}
	if offset < 0 {
		return res, fmt.Errorf("%w: offset %d", kerr.OffsetOutOfRange, offset)
	}
	st := b.part(topic, partition)
	count := int64(maxBytes) / max(st.avgBytes.Load(), 1)
	count = min(max(count, 1)+1, maxPollCount)
	p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(offset), uint32(count))
	if err != nil {
		return res, kafkaErr(err)
	}
	defer func() {
		if p.Release != nil {
			p.Release()
		}
	}()

	var hw int64
	if p.Count > 0 {
		hw = int64(p.CurrentOffset) + 1
	} else {
		// Nothing at offset: either the consumer is at the end, or the
		// offset is outside the log. Iggy's current offset alone cannot tell
		// an empty partition from one holding only offset 0.
		switch cur := int64(p.CurrentOffset); {
		case offset == 0 && cur == 0:
			hw = 0
		case offset == cur+1 && cur > 0:
			hw = offset
		default:
			_, hw, err = b.offsets(ctx, as, topic, partition)
			if err != nil {
				return res, err
			}
		}
		if offset > hw {
			return res, fmt.Errorf("%w: offset %d, high watermark %d", kerr.OffsetOutOfRange, offset, hw)
		}
	}
	st.sawHW(hw)
	res.HighWatermark, res.LastStableOffset, res.LogStartOffset = hw, hw, 0
	if p.Count == 0 {
		return res, nil
	}

	buf := getBuffer()
	c := getConverter()
	defer putConverter(c)
	c.out = b.fetchC
	out := buf.b
	recs := p.Records
	n, total := 0, 0
	for len(recs) > 0 && (n == 0 || len(out) < int(maxBytes)) {
		rec, rest, ok := splitRecord(recs)
		if !ok {
			putBuffer(buf)
			return res, fmt.Errorf("bridge: malformed poll reply from Iggy for %s/%d", topic, partition)
		}
		recs = rest
		var k int
		switch {
		case version <= 1:
			out, k, _, err = c.appendLegacy(out, rec, offset, 0)
		case version <= 3:
			out, k, _, err = c.appendLegacy(out, rec, offset, 1)
		default:
			out, k, _, err = c.appendKafka(out, rec, offset)
		}
		if err != nil {
			putBuffer(buf)
			return res, fmt.Errorf("bridge: stored batch in %s/%d: %w", topic, partition, err)
		}
		n += k
		total += len(rec)
	}
	if n > 0 {
		st.avgBytes.Store((st.avgBytes.Load() + int64(total/n)) / 2)
	}
	buf.b = out
	res.Records = out
	res.Release = func() { putBuffer(buf) }
	return res, nil
}

// splitRecord cuts the first Iggy batch record off a poll reply's records.
func splitRecord(b []byte) (rec, rest []byte, ok bool) {
	h, err := message.ParseBatchHeader(b)
	if err != nil || h.BatchLength < message.BatchHeaderSize || h.BatchLength > uint64(len(b)) {
		return nil, nil, false
	}
	return b[:h.BatchLength], b[h.BatchLength:], true
}

func firstFrame(rec []byte) (message.Frame, bool) {
	it := message.Frames(rec)
	return it.Next()
}

func batchBase(rec []byte) uint64 {
	h, _ := message.ParseBatchHeader(rec)
	return h.BaseOffset
}

// offsets returns the log start offset and the high watermark of a
// partition without reading data.
func (b *Bridge) offsets(ctx context.Context, as iggyAPI, topic string, partition int32) (int64, int64, error) {
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return -1, -1, kafkaErr(err)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, -1, fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, len(t.Partitions))
	}
	hw := t.Partitions[partition].highWatermark()
	b.part(topic, partition).sawHW(hw)
	return 0, hw, nil
}

// listOffset answers ListOffsets for one partition: timestamp -1 is the high
// watermark, -2 the log start, -3 the record with the largest timestamp
// (taken as the last one), and any other value the first offset whose record
// timestamp is at or after it (-1, -1 when there is none). Timestamps are
// assumed to grow with offsets for the search, as Kafka's index assumes.
func (b *Bridge) listOffset(ctx context.Context, as iggyAPI, topic string, partition int32, timestamp int64) (int64, int64, error) {
	start, hw, err := b.offsets(ctx, as, topic, partition)
	if err != nil {
		return -1, -1, err
	}
	switch timestamp {
	case -1:
		return hw, -1, nil
	case -2:
		first, _, ok, err := b.recordAt(ctx, as, topic, partition, start)
		if err != nil || !ok {
			return hw, -1, err
		}
		return first, -1, nil
	case -3:
		if hw == 0 {
			return -1, -1, nil
		}
		off, ts, ok, err := b.recordAt(ctx, as, topic, partition, hw-1)
		if err != nil || !ok {
			return -1, -1, err
		}
		return off, ts, nil
	}
	if timestamp < 0 {
		return -1, -1, fmt.Errorf("%w: timestamp %d", kerr.InvalidRequest, timestamp)
	}
	// Binary search for the first record with a timestamp >= the target.
	lo, hi := start, hw
	var foundOff, foundTS int64 = -1, -1
	for lo < hi {
		mid := lo + (hi-lo)/2
		off, ts, ok, err := b.recordAt(ctx, as, topic, partition, mid)
		if err != nil {
			return -1, -1, err
		}
		if !ok {
			break
		}
		if ts >= timestamp {
			foundOff, foundTS = off, ts
			hi = mid
		} else {
			lo = off + 1
		}
	}
	return foundOff, foundTS, nil
}

// recordAt reads the first record at or after offset: its offset and
// timestamp. ok is false when there is none.
func (b *Bridge) recordAt(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64) (int64, int64, bool, error) {
	p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(offset), 1)
	if err != nil {
		return -1, -1, false, kafkaErr(err)
	}
	defer func() {
		if p.Release != nil {
			p.Release()
		}
	}()
	rec, _, ok := splitRecord(p.Records)
	if !ok {
		return -1, -1, false, nil
	}
	h, _ := message.ParseBatchHeader(rec)
	f, ok := firstFrame(rec)
	if !ok {
		return -1, -1, false, nil
	}
	c := getConverter()
	defer putConverter(c)
	var out fetchOut
	c.decodeFrame(h.BaseOffset, h.OriginTimestamp, &f, &out)
	return out.offset, out.ts, true, nil
}

// initProducerID allocates a producer id through Iggy, so ids are unique
// across every gateway sharing the store: it appends one message to
// "<stream>.meta"/producer_ids (partition 0) and the id is that message's
// offset plus one. The epoch starts at 0. The append is made with the
// gateway's own client, since a Kafka user needs no rights on the meta
// stream to produce idempotently.
func (b *Bridge) initProducerID(ctx context.Context, as iggyAPI) (int64, int16, error) {
	var mb message.Builder
	mb.Reset()
	mb.Add(message.MakeID(b.ids.ctr.Add(1), b.ids.hi), uint64(time.Now().UnixMicro()), []byte("producer id"), nil)
	batch, err := mb.Finish()
	if err != nil {
		return -1, -1, err
	}
	off, err := b.admin.send(ctx, b.meta, producerIDsTopic, 0, batch)
	if err != nil {
		return -1, -1, fmt.Errorf("bridge: allocate producer id: %w", err)
	}
	if off >= math.MaxInt64 {
		return -1, -1, fmt.Errorf("bridge: producer id space exhausted")
	}
	return int64(off) + 1, 0, nil
}
