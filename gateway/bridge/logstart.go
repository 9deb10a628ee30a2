package bridge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// logStartConsumer is the Iggy consumer whose stored offset on a partition is that partition's
// Kafka log start offset minus one (the last offset DeleteRecords removed); no stored offset
// means the log starts at 0. A consumer offset lives with its partition, so a deleted, re-created
// or purged topic starts again at 0 without anyone resetting it.
const logStartConsumer = "kafka-log-start"

// logStartTTL is how long a gateway trusts the log start it last read before reading it from
// Iggy again on a fetch or produce: a DeleteRecords made through another gateway shows there
// within it. DeleteRecords and ListOffsets always read it.
const logStartTTL = time.Second

// logStartState is what one gateway knows of a partition's log start.
type logStartState struct {
	// del serializes this gateway's DeleteRecords of the partition, so the stored log start
	// only moves forward (only the partition's leader deletes; see kafka.Storage).
	del sync.Mutex

	mu   sync.Mutex
	off  int64
	read time.Time // when off was read or stored; zero: never
}

// cachedLogStart is the partition's log start as read at most logStartTTL ago.
func (b *Bridge) cachedLogStart(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32) (int64, error) {
	st.ls.mu.Lock()
	off, read := st.ls.off, st.ls.read
	st.ls.mu.Unlock()
	if !read.IsZero() && b.clock.Now().Sub(read) < logStartTTL {
		return off, nil
	}
	return b.readLogStart(ctx, as, st, topic, partition)
}

// readLogStart reads the partition's log start from Iggy.
func (b *Bridge) readLogStart(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32) (int64, error) {
	at := b.clock.Now()
	stored, ok, err := as.consumerOffset(ctx, b.cfg.Stream, topic, uint32(partition), logStartConsumer)
	if err != nil {
		return -1, kafkaErr(err)
	}
	off := int64(0)
	if ok {
		off = int64(stored) + 1
	}
	b.noteLogStart(st, off, at)
	return off, nil
}

// noteLogStart caches off as the log start read or stored at at.
func (b *Bridge) noteLogStart(st *partState, off int64, at time.Time) {
	st.ls.mu.Lock()
	defer st.ls.mu.Unlock()
	if at.Before(st.ls.read) {
		return
	}
	st.ls.off, st.ls.read = off, at
}

// deleteRecords moves the log start of topic/partition forward to offset (-1: the high
// watermark) and returns the log start after it. The new log start is stored first; then, when
// it is the high watermark read before, every sealed Iggy segment holds only records below it,
// and Iggy deletes them (delete_segments; the active segment stays). Records below the log start
// in the other segments stay in Iggy, hidden from Kafka readers, until Iggy's own retention or a
// later DeleteRecords up to the high watermark removes their segment. The identity must be
// allowed to manage the topic in Iggy: a delete_segments of no segment asks Iggy first.
func (b *Bridge) deleteRecords(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64) (int64, error) {
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return -1, kafkaErr(err)
	}
	if partition < 0 || int(partition) >= len(t.Partitions) {
		return -1, fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, len(t.Partitions))
	}
	if err := as.deleteSegments(ctx, b.cfg.Stream, topic, uint32(partition), 0); err != nil {
		return -1, kafkaErr(err)
	}
	pm := t.Partitions[partition]
	hw := pm.highWatermark()
	switch {
	case offset == -1:
		offset = hw
	case offset < 0 || offset > hw:
		return -1, fmt.Errorf("%w: offset %d, high watermark %d", kerr.OffsetOutOfRange, offset, hw)
	}
	st := b.part(topic, partition)
	st.ls.del.Lock()
	defer st.ls.del.Unlock()
	cur, err := b.readLogStart(ctx, as, st, topic, partition)
	if err != nil {
		return -1, err
	}
	if offset <= cur {
		return cur, nil
	}
	at := b.clock.Now()
	if err := as.storeConsumerOffset(ctx, b.cfg.Stream, topic, uint32(partition), logStartConsumer, uint64(offset-1)); err != nil {
		return -1, kafkaErr(err)
	}
	b.noteLogStart(st, offset, at)
	if offset == hw && pm.Segments > 1 {
		if err := as.deleteSegments(ctx, b.cfg.Stream, topic, uint32(partition), pm.Segments-1); err != nil {
			b.log.Warn("deleting the segments below a partition's new log start", "topic", topic,
				"partition", partition, "log_start", offset, "segments", pm.Segments-1, "err", err)
		}
	}
	return offset, nil
}
