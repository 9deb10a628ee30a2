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

// highWatermark is the high watermark a poll at offset tells, from the messages it returned (n)
// and Iggy's current offset (cur), or an OFFSET_OUT_OF_RANGE error for an offset past the log.
// The poll's current offset comes from the node that holds the partition and is exact; a
// topic's partition counters (messages, current offset) are not: a node of an Iggy cluster
// reports them as it last saw them, a moment behind. So the end is read from polls only: with
// nothing at offset and a current offset c above 0 the end is c+1; with c 0 the partition is
// empty or holds offset 0 alone, and a poll of offset 0 tells which. Only an offset inside the
// log that holds nothing asks the counters.
func (b *Bridge) highWatermark(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64, n uint32, cur uint64) (int64, error) {
	if n > 0 {
		return int64(cur) + 1, nil
	}
	var hw int64
	switch c := int64(cur); {
	case offset == 0 && c == 0:
		hw = 0
	case c > 0 && offset > c:
		hw = c + 1
	case c == 0:
		var err error
		if hw, err = b.exactEnd(ctx, as, topic, partition, 0); err != nil {
			return -1, err
		}
	default:
		var err error
		if _, hw, err = b.offsets(ctx, as, topic, partition); err != nil {
			return -1, err
		}
	}
	if offset > hw {
		return -1, fmt.Errorf("%w: offset %d, high watermark %d", kerr.OffsetOutOfRange, offset, hw)
	}
	return hw, nil
}

// watermarks answers a fetch asked for no records (maxBytes 0): one message is read at offset
// for the high watermark, as a fetch with data would, and an offset outside the log is an error
// as there.
func (b *Bridge) watermarks(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, offset, logStart int64) (kafka.FetchResult, error) {
	res := kafka.FetchResult{HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, Release: noRelease}
	p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(offset), 1)
	if err != nil {
		return res, kafkaErr(err)
	}
	n, cur := p.Count, p.CurrentOffset
	if p.Release != nil {
		p.Release()
	}
	hw, err := b.highWatermark(ctx, as, topic, partition, offset, n, cur)
	if err != nil {
		return res, err
	}
	st.readEnd(hw, b.clock.Now())
	res.HighWatermark, res.LastStableOffset, res.LogStartOffset = hw, hw, logStart
	return res, nil
}

// topicCodec is how the topic's fetched batches go out: the codec of its compression.type, else
// Config.FetchCodec, and its message.timestamp.type. The config log is read as a produce reads
// it, at most once a second, so a change made at another gateway shows within a second.
func (b *Bridge) topicCodec(ctx context.Context, topic string) fetchForm {
	conf, _ := b.topicConf(ctx, topic)
	f := fetchForm{fetchCodec: b.fetchC, logAppendTime: conf.logAppendTime}
	if fc, ok := compressionTypes[conf.compression]; ok {
		f.fetchCodec = fc
	}
	return f
}

// stillThere reads one message from Iggy at base and reports whether it is the one with id, which
// proves the partition is still the one cached batches were read from (a purged or re-created
// partition has other messages, or none, there); the reply carries the high watermark.
func (b *Bridge) stillThere(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, base int64, id [16]byte) (bool, int64, error) {
	p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(base), 1)
	if err != nil {
		return false, -1, kafkaErr(err)
	}
	same := false
	if rec, _, ok := splitRecord(p.Records); ok && p.Count > 0 {
		if f, ok := firstFrame(rec); ok {
			same = f.ID == id && int64(batchBase(rec))+int64(f.OffsetDelta) == base
		}
	}
	cur := p.CurrentOffset
	if p.Release != nil {
		p.Release()
	}
	if !same {
		return false, -1, nil
	}
	hw := int64(cur) + 1
	st.readEnd(hw, b.clock.Now())
	return true, hw, nil
}

// remember notes the batch just appended at base in st's tail, with the producer's own bytes
// when the tail cache takes them.
func (b *Bridge) remember(st *partState, cb *checkedBatch, base int64) {
	tb := &tailBatch{base: base, n: cb.kb.NumRecords, size: len(cb.batch), id: cb.id, codec: cb.kb.codec(), st: st}
	b.cache.admit(tb, cb.raw)
	size := cap(tb.kafka) // read before tb is published
	st.tail.add(tb)
	b.cache.track(tb, size)
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

// exactEnd is the high watermark of a partition as polls tell it, from guess (the topic's
// counters, which a node of an Iggy cluster reports a moment behind) on: a poll of one message
// at guess returns the partition's exact current offset c, and the end is c+1; with c 0 the
// partition is empty or holds offset 0 alone, and a poll of offset 0 tells which.
func (b *Bridge) exactEnd(ctx context.Context, as iggyAPI, topic string, partition int32, guess int64) (int64, error) {
	at := uint64(max(guess, 0))
	for {
		p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), at, 1)
		if err != nil {
			return -1, kafkaErr(err)
		}
		if p.Release != nil {
			p.Release()
		}
		switch {
		case p.Count > 0 || p.CurrentOffset > 0:
			return int64(p.CurrentOffset) + 1, nil
		case at == 0:
			return 0, nil
		}
		at = 0
	}
}

// offsets returns the log start offset (logstart.go, read from Iggy) and the high watermark of a
// partition, exact (exactEnd).
func (b *Bridge) offsets(ctx context.Context, as iggyAPI, topic string, partition int32) (int64, int64, error) {
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return -1, -1, kafkaErr(err)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, -1, fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, len(t.Partitions))
	}
	hw, err := b.exactEnd(ctx, as, topic, partition, t.Partitions[partition].highWatermark())
	if err != nil {
		return -1, -1, err
	}
	st := b.part(topic, partition)
	st.sawHW(hw)
	logStart, err := b.readLogStart(ctx, as, st, topic, partition)
	if err != nil {
		return -1, -1, err
	}
	return min(logStart, hw), hw, nil
}

// listOffset answers ListOffsets for one partition: timestamp -1 is the high
// watermark, -2 the log start, -3 the record with the largest timestamp
// (maxts.go; the producers' timestamps, whatever the topic's
// message.timestamp.type), and any other value the first offset whose record
// timestamp (with LogAppendTime, the time Iggy stored it) is at or after it
// (-1, -1 when there is none). Timestamps are assumed to grow with offsets for
// that search, as Kafka's index assumes.
func (b *Bridge) listOffset(ctx context.Context, as iggyAPI, topic string, partition int32, timestamp int64) (int64, int64, error) {
	start, hw, err := b.offsets(ctx, as, topic, partition)
	if err != nil {
		return -1, -1, err
	}
	switch timestamp {
	case -1:
		return hw, -1, nil
	case -2:
		first, _, ok, err := b.recordAt(ctx, as, topic, partition, start, false)
		if err != nil || !ok {
			return hw, -1, err
		}
		return first, -1, nil
	case -3:
		return b.maxTimestamp(ctx, as, topic, partition, hw)
	}
	if timestamp < 0 {
		return -1, -1, fmt.Errorf("%w: timestamp %d", kerr.InvalidRequest, timestamp)
	}
	// Binary search for the first record with a timestamp >= the target: the time Iggy stored
	// it when the topic's message.timestamp.type is LogAppendTime, as fetches show it.
	conf, err := b.topicConf(ctx, topic)
	if err != nil {
		return -1, -1, err
	}
	lo, hi := start, hw
	var foundOff, foundTS int64 = -1, -1
	for lo < hi {
		mid := lo + (hi-lo)/2
		off, ts, ok, err := b.recordAt(ctx, as, topic, partition, mid, conf.logAppendTime)
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
// timestamp, or with logAppendTime the time Iggy stored its batch. ok is false
// when there is none.
func (b *Bridge) recordAt(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64, logAppendTime bool) (int64, int64, bool, error) {
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
	c := getConverter(b.metrics)
	defer putConverter(c)
	var out fetchOut
	c.decodeFrame(h.BaseOffset, h.OriginTimestamp, &f, &out)
	if logAppendTime {
		out.ts = int64(h.BaseTimestamp / 1000)
	}
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
		// COORDINATOR_NOT_AVAILABLE is Kafka's retriable answer while no coordinator can
		// hand out ids.
		return -1, -1, fmt.Errorf("bridge: allocate producer id: %w", kafkaErrOr(err, kerr.CoordinatorNotAvailable))
	}
	if off >= math.MaxInt64 {
		return -1, -1, fmt.Errorf("bridge: producer id space exhausted")
	}
	return int64(off) + 1, 0, nil
}
