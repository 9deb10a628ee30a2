package bridge

import (
	"context"
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
		err := b.scan(ctx, as, topic, partition, m.off, m.off+1, func(off, ts int64, id [16]byte) {
			same = off == m.off && ts == m.ts && id == m.id
		})
		if err != nil {
			return -1, -1, err
		}
		if !same {
			m.through, m.off, m.ts = 0, -1, -1
		}
	}
	err := b.scan(ctx, as, topic, partition, m.through, hw, func(off, ts int64, id [16]byte) {
		if m.off < 0 || ts > m.ts {
			m.off, m.ts, m.id = off, ts, id
		}
		m.through = off + 1
	})
	if err != nil {
		return -1, -1, err
	}
	return m.off, m.ts, nil
}

// scan calls fn with the offset, Kafka timestamp and Iggy id of every record from offset from
// up to end, in order, reading about maxScanBytes per poll. It stops early where Iggy has
// nothing more.
func (b *Bridge) scan(ctx context.Context, as iggyAPI, topic string, partition int32, from, end int64, fn func(off, ts int64, id [16]byte)) error {
	st := b.part(topic, partition)
	c := getConverter(b.metrics)
	defer putConverter(c)
	var out fetchOut
	for from < end {
		count := min(max(maxScanBytes/max(st.avgBytes.Load(), 1), 1), end-from, maxPollCount)
		p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(from), uint32(count))
		if err != nil {
			return kafkaErr(err)
		}
		next := from
		recs := p.Records
		for len(recs) > 0 {
			rec, rest, ok := splitRecord(recs)
			if !ok {
				if p.Release != nil {
					p.Release()
				}
				return fmt.Errorf("bridge: malformed poll reply from Iggy for %s/%d", topic, partition)
			}
			recs = rest
			h, _ := message.ParseBatchHeader(rec)
			it := message.Frames(rec)
			for f, ok := it.Next(); ok; f, ok = it.Next() {
				c.decodeFrame(h.BaseOffset, h.OriginTimestamp, &f, &out)
				if out.offset >= next && out.offset < end {
					fn(out.offset, out.ts, f.ID)
					next = out.offset + 1
				}
			}
			if err := it.Err(); err != nil {
				if p.Release != nil {
					p.Release()
				}
				return fmt.Errorf("bridge: stored batch in %s/%d: %w", topic, partition, err)
			}
		}
		if p.Release != nil {
			p.Release()
		}
		if next == from {
			return nil // nothing at or after from: the rest is gone or not there yet
		}
		from = next
	}
	return nil
}
