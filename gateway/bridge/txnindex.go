package bridge

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// txnIndex is what a partition's transactions leave for READ_COMMITTED readers: which
// producers have a transaction open (and from which offset), and which transactions were
// aborted. It is built by reading the partition's messages from its log start (kafka.txn on a
// batch's first message, and the markers), in memory only: a gateway that starts, or reads the
// partition for the first time, reads it from the start once, so the index is rebuilt after a
// restart from what Iggy holds. Writes of every gateway are seen, since it reads Iggy.
type txnIndex struct {
	mu      sync.Mutex
	started bool
	next    int64           // the offset read next
	open    map[int64]int64 // producer id -> first offset of its open transaction
	aborted []abortedTxn    // in marker order
}

type abortedTxn struct {
	pid, first, last int64 // last: the offset of the abort marker
}

// txnScanCount is how many messages one read of the index asks for.
const txnScanCount = 1000

// stable reads the partition up to hw into the index and answers kafka.Storage.Stable.
func (b *Bridge) stable(ctx context.Context, as iggyAPI, topic string, partition int32, from, hw int64) (int64, []kafka.AbortedTxn, error) {
	st, err := b.partOf(ctx, as, topic, partition)
	if err != nil {
		return -1, nil, err
	}
	ix := &st.txns
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.started && hw < ix.next {
		// The partition is shorter than what the index read: it was purged or created
		// again. Read it afresh.
		ix.started, ix.aborted = false, nil
	}
	fresh := false
	if !ix.started {
		logStart, err := b.cachedLogStart(ctx, as, st, topic, partition)
		if err != nil {
			return -1, nil, err
		}
		ix.started, ix.next, ix.open = true, logStart, map[int64]int64{}
		fresh = true
	}
	for ix.next < hw {
		p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(ix.next), uint32(min(hw-ix.next, txnScanCount)))
		if err != nil {
			return -1, nil, kafkaErr(err)
		}
		if fresh {
			// A log start inside a batch (DeleteRecords to an offset in it): the batch's
			// first message, below the log start, says whether a transaction is open from
			// there.
			fresh = false
			var head batchTxn
			if head, _, err = b.sliceHead(ctx, as, topic, partition, p.Records); err != nil {
				if p.Release != nil {
					p.Release()
				}
				return -1, nil, err
			}
			if head.txn == txnData {
				ix.open[head.pid] = ix.next
			}
		}
		before := ix.next
		err = ix.add(p.Records)
		if p.Release != nil {
			p.Release()
		}
		if err != nil {
			return -1, nil, fmt.Errorf("bridge: reading the transactions of %s/%d: %w", topic, partition, err)
		}
		if ix.next == before {
			break // nothing more to read now (the partition was purged below hw)
		}
	}
	lso := min(hw, ix.next)
	for _, first := range ix.open {
		lso = min(lso, first)
	}
	var out []kafka.AbortedTxn
	for _, a := range ix.aborted {
		if a.last >= from && a.first < lso {
			out = append(out, kafka.AbortedTxn{ProducerID: a.pid, FirstOffset: a.first})
		}
	}
	slices.SortFunc(out, func(x, y kafka.AbortedTxn) int { return int(x.FirstOffset - y.FirstOffset) })
	return lso, out, nil
}

// add folds polled batch records into the index.
func (ix *txnIndex) add(recs []byte) error {
	var meta recMeta
	var f message.Frame
	for len(recs) > 0 {
		rec, rest, ok := splitRecord(recs)
		if !ok {
			return fmt.Errorf("malformed poll reply")
		}
		recs = rest
		h, err := message.ParseBatchHeader(rec)
		if err != nil {
			return err
		}
		it := message.Frames(rec)
		for it.NextInto(&f) {
			off := int64(h.BaseOffset + uint64(f.OffsetDelta))
			if off < ix.next {
				continue
			}
			ix.next = off + 1
			bt, ok := headTxn(&meta, &f)
			if !ok || bt.txn == 0 {
				continue
			}
			first, open := ix.open[bt.pid]
			switch bt.txn {
			case txnData:
				if !open {
					ix.open[bt.pid] = off
				}
			case txnCommit:
				delete(ix.open, bt.pid)
			case txnAbort:
				if open {
					delete(ix.open, bt.pid)
					ix.aborted = append(ix.aborted, abortedTxn{pid: bt.pid, first: first, last: off})
				}
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	return nil
}

// batchTxn is the transaction a stored Iggy batch belongs to, as its first message tells
// (kafka.txn, kafka.pid, kafka.epoch): txn is txnData for a transactional producer's batch,
// txnCommit or txnAbort for a marker, 0 for any other. Only the first message of a batch
// carries it.
type batchTxn struct {
	txn   uint8
	pid   int64
	epoch int16
}

// headTxn is what frame f tells of its Iggy batch's transaction, parsed with meta; ok is false
// when f is not the batch's first message, which alone tells it.
func headTxn(meta *recMeta, f *message.Frame) (batchTxn, bool) {
	if f.OffsetDelta != 0 {
		return batchTxn{}, false
	}
	if len(f.UserHeaders) == 0 {
		return batchTxn{}, true
	}
	meta.parse(f.UserHeaders)
	if meta.txn == 0 || !meta.hasPID {
		return batchTxn{}, true
	}
	return batchTxn{txn: meta.txn, pid: meta.pid, epoch: meta.epoch}, true
}

// sliceHead answers, for a poll reply recs that starts past the first message of its first Iggy
// batch (a read from an offset inside a batch whose start this gateway does not know), the
// transaction of that batch, read from its first message with one more poll, and the batch's
// base offset. A reply that starts on a batch's first message, or is empty, needs no read (the
// zero batchTxn). The first message may be gone (Iggy's retention deletes whole segments, and
// the batch with it, so only a partition purged meanwhile): the batch then reads as no
// transaction's.
func (b *Bridge) sliceHead(ctx context.Context, as iggyAPI, topic string, partition int32, recs []byte) (head batchTxn, at uint64, err error) {
	rec, _, ok := splitRecord(recs)
	if !ok {
		return batchTxn{}, 0, nil
	}
	f, ok := firstFrame(rec)
	if !ok || f.OffsetDelta == 0 {
		return batchTxn{}, 0, nil
	}
	base := batchBase(rec)
	p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), base, 1)
	if err != nil {
		return batchTxn{}, 0, kafkaErr(err)
	}
	defer func() {
		if p.Release != nil {
			p.Release()
		}
	}()
	if hrec, _, ok := splitRecord(p.Records); ok && p.Count > 0 && batchBase(hrec) == base {
		if hf, ok := firstFrame(hrec); ok {
			var meta recMeta
			if h, ok := headTxn(&meta, &hf); ok {
				head = h
			}
		}
	}
	b.metrics.sliceHeads.Add(1)
	return head, base, nil
}
