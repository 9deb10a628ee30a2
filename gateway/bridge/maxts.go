package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// maxTSScan is what a gateway learnt of one partition's largest timestamp: Iggy keeps no index
// of it, so the partition is read once and then only from where the last read stopped.
type maxTSScan struct {
	mu      sync.Mutex // held across a scan, so one query reads and the others wait for it
	through int64      // offsets below it were read; 0: nothing
	off, ts int64      // the first record with the largest timestamp below through; off -1: none
	id      [16]byte   // its Iggy message id, to tell it is still the same message
}

// maxScanBytes is about what one poll of the scan asks Iggy for.
const maxScanBytes = 4 << 20

// maxTimestamp answers ListOffsets -3 (MAX_TIMESTAMP) for a partition whose high watermark is
// hw: the offset and timestamp of the record with the largest timestamp, the first of them when
// several share it, as Kafka answers; -1, -1 for an empty partition. The first query of a
// partition reads it whole; later ones read only what was appended since, after one message
// read proves the record found before is still there (a partition deleted and re-created holds
// other messages, and is then read afresh).
func (b *Bridge) maxTimestamp(ctx context.Context, as iggyAPI, topic string, partition int32, hw int64) (int64, int64, error) {
	st := b.part(topic, partition)
	m := &st.maxTS
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.through == 0 || m.through > hw {
		m.through, m.off, m.ts = 0, -1, -1
	} else if m.off >= 0 {
		same := false
		err := b.scan(ctx, as, topic, partition, m.off, m.off+1, func(r *scanned) {
			same = r.off == m.off && r.ts == m.ts && r.id == m.id
		})
		if err != nil {
			return -1, -1, err
		}
		if !same {
			m.through, m.off, m.ts = 0, -1, -1
		}
	}
	err := b.scan(ctx, as, topic, partition, m.through, hw, func(r *scanned) {
		if m.off < 0 || r.ts > m.ts {
			m.off, m.ts, m.id = r.off, r.ts, r.id
		}
		m.through = r.off + 1
	})
	if err != nil {
		return -1, -1, err
	}
	return m.off, m.ts, nil
}

// scanned is one stored record as scan hands it over, valid during the call only.
type scanned struct {
	off, ts int64
	id      [16]byte
	// first is set on the first record of its Iggy batch (one Kafka batch or marker), and meta
	// then describes the batch: its producer, epoch, sequence, record count and transaction.
	first bool
	meta  *recMeta
}

// scan calls fn with every record from offset from up to end, in order, reading about
// maxScanBytes per poll. It stops early where Iggy has nothing more. It is the one reader of a
// partition's records in offset order for what the gateway works out from them (the largest
// timestamp, DescribeProducers' producer states).
func (b *Bridge) scan(ctx context.Context, as iggyAPI, topic string, partition int32, from, end int64, fn func(r *scanned)) error {
	st := b.part(topic, partition)
	c := getConverter(b.metrics)
	defer putConverter(c)
	var out fetchOut
	var f message.Frame
	r := scanned{meta: &c.meta}
	for from < end {
		count := min(max(maxScanBytes/max(st.avgBytes.Load(), 1), 1), end-from, maxPollCount)
		p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(from), uint32(count))
		if err != nil {
			return kafkaErr(err)
		}
		next, err := scanPoll(c, &out, &f, &r, p.Records, from, end, fn)
		if p.Release != nil {
			p.Release()
		}
		if err != nil {
			return fmt.Errorf("bridge: %s/%d: %w", topic, partition, err)
		}
		if next == from {
			return nil // nothing at or after from: the rest is gone or not there yet
		}
		from = next
	}
	return nil
}

// scanPoll hands fn the records of one poll's reply at or after next and below end, and returns
// the offset after the last one handed.
func scanPoll(c *converter, out *fetchOut, f *message.Frame, r *scanned, recs []byte, next, end int64, fn func(r *scanned)) (int64, error) {
	for len(recs) > 0 {
		rec, rest, ok := splitRecord(recs)
		if !ok {
			return next, errors.New("malformed poll reply from Iggy")
		}
		recs = rest
		h, _ := message.ParseBatchHeader(rec)
		it := message.Frames(rec)
		for it.NextInto(f) {
			c.decodeFrame(h.BaseOffset, h.OriginTimestamp, f, out)
			if out.offset < next || out.offset >= end {
				continue
			}
			r.off, r.ts, r.id, r.first = out.offset, out.ts, f.ID, f.OffsetDelta == 0
			fn(r)
			next = out.offset + 1
		}
		if err := it.Err(); err != nil {
			return next, fmt.Errorf("stored batch: %w", err)
		}
	}
	return next, nil
}
