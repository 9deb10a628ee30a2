package bridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// produce stores one partition's records (the Records bytes of a
// ProduceRequest partition: one or more magic-2 batches, any codec, or a
// magic 0/1 message set, which becomes one uncompressed magic-2 batch first)
// as one Iggy batch per Kafka batch, and returns the base offset of the
// first. Every batch is checked before any is stored, so a refused partition
// stores nothing. Idempotent batches are deduplicated (doc.go).
func (b *Bridge) produce(ctx context.Context, as iggyAPI, topic string, partition int32, records []byte) (kafka.ProduceResult, error) {
	res := kafka.ProduceResult{BaseOffset: -1, LogAppendTime: -1}
	if partition < 0 {
		return res, fmt.Errorf("%w: partition %d", kerr.UnknownTopicOrPartition, partition)
	}
	if len(records) == 0 {
		return res, fmt.Errorf("%w: no records", kerr.CorruptMessage)
	}
	conf, err := b.topicConf(ctx, topic)
	if err != nil {
		return res, err
	}
	maxRecord := b.cfg.MaxMessageBytes
	if conf.maxMessageBytes > 0 {
		maxRecord = conf.maxMessageBytes
	}
	st, err := b.partOf(ctx, as, topic, partition)
	if err != nil {
		return res, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()

	// A converter holds a batch's decompressed records and its Iggy form until the append
	// returns, two or three times the batch: bound how many produces hold one, or a gateway
	// taking many partitions at once holds that for each.
	select {
	case b.converting <- struct{}{}:
	case <-ctx.Done():
		return res, ctx.Err()
	}
	defer func() { <-b.converting }()
	c := getConverter(b.metrics)
	defer putConverter(c)
	if legacyMessageSet(records) {
		if c.up, err = c.upconvert(c.up[:0], records); err != nil {
			return res, err
		}
		records = c.up
	}
	checked, err := checkBatches(c, &b.ids, records, maxRecord)
	if errors.Is(err, kerr.MessageTooLarge) {
		// Another gateway may have raised max.message.bytes since the cache was read: decide
		// again from what Iggy holds before refusing (the refusal path only).
		if conf, cerr := b.freshTopicConf(ctx, topic); cerr == nil && conf.maxMessageBytes > maxRecord {
			checked, err = checkBatches(c, &b.ids, records, conf.maxMessageBytes)
		}
	}
	if err != nil {
		return res, err
	}
	for i := range checked {
		base, err := b.produceBatch(ctx, as, st, topic, partition, &checked[i])
		if err != nil {
			return res, err
		}
		if i == 0 {
			res.BaseOffset = base
		}
	}
	res.LogStartOffset = -1
	if ls, err := b.cachedLogStart(ctx, as, st, topic, partition); err == nil {
		res.LogStartOffset = ls
	}
	return res, nil
}

// produceBatch stores one Kafka batch with st.mu held and returns its base
// offset (the original one for a duplicate).
func (b *Bridge) produceBatch(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, cb *checkedBatch) (int64, error) {
	kb, batch := &cb.kb, cb.batch
	moves := b.leadersMoved()
	if kb.ProducerID >= 0 {
		if err := b.verifyFresh(ctx, as, st, topic, partition, moves); err != nil {
			return -1, err
		}
		cached := st.producers[kb.ProducerID] != nil
		ps, err := b.producer(ctx, as, st, topic, partition, kb.ProducerID, false)
		if err != nil {
			return -1, err
		}
		dup, err := ps.check(kb)
		if err != nil && cached && (ps.partial || b.appendedElsewhere(ctx, as, st, topic, partition)) {
			// The cache may predate writes by another gateway: decide again
			// from what Iggy holds before refusing the batch. Should that read
			// fail, the producer's next batch is decided from Iggy as well.
			st.forgetProducer(kb.ProducerID)
			if ps, err = b.producer(ctx, as, st, topic, partition, kb.ProducerID, true); err != nil {
				return -1, err
			}
			dup, err = ps.check(kb)
		}
		if err != nil || dup >= 0 {
			return dup, err
		}
	}
	if b.cfg.Fenced != nil && b.cfg.Fenced() {
		return -1, fmt.Errorf("%w: this gateway lost its lease on the store", kerr.NotLeaderForPartition)
	}
	st.appendAt.Store(st.next)
	u, err := as.send(ctx, b.cfg.Stream, topic, uint32(partition), batch)
	if err != nil {
		st.appendAt.Store(-1)
		// The write may or may not have landed (a lost connection), so the
		// cached sequence state can no longer be trusted.
		st.dropProducers()
		st.next = -1
		return -1, kafkaErr(err)
	}
	base := int64(u)
	n := int64(kb.NumRecords)
	if st.next >= 0 && base != st.next {
		// Someone else appended since our last write: another gateway may
		// have taken idempotent batches that this cache does not know.
		b.log.Debug("foreign writer noticed; dropping producer cache", "topic", topic, "partition", partition, "expected", st.next, "got", base)
		st.dropProducers()
	}
	st.confirmed, st.confirmedMoves = b.clock.Now(), moves
	if kb.ProducerID >= 0 {
		ps := st.producers[kb.ProducerID]
		if ps == nil {
			// The cache was just dropped: this state knows only this batch.
			ps = &producerState{epoch: kb.ProducerEpoch, partial: true}
			st.producers[kb.ProducerID] = ps
		}
		ps.add(kb.ProducerEpoch, kb.BaseSequence, kb.NumRecords, base)
		ps.last = st.confirmed
	}
	st.next = base + n
	b.remember(st, cb, base)
	st.sawHW(base + n)
	st.appendAt.Store(-1)
	if n > 0 {
		size := int64(len(batch)) / n
		st.avgBytes.Store((st.avgBytes.Load()*3 + size) / 4)
	}
	st.wake()
	return base, nil
}

// trustWindow is how long after its own last append (on Config.Clock) a
// gateway trusts its producer cache without asking Iggy whether anyone else
// appended since, as long as the fleet's view did not change meanwhile
// (Config.LeadersMoved). A producer goes to another gateway only when its
// metadata names another leader, which takes a change of the fleet's view:
// the other gateway may then store a batch and die before answering, and the
// producer send it again here, next in the sequence this cache expects, so a
// cache confirmed before the change is checked first. Past the window, or
// after a change, the cache is checked against the partition's high
// watermark (one metadata read) before an idempotent batch is accepted.
const trustWindow = time.Second

// leadersMoved is Config.LeadersMoved, 0 without one.
func (b *Bridge) leadersMoved() uint64 {
	if b.cfg.LeadersMoved == nil {
		return 0
	}
	return b.cfg.LeadersMoved()
}

// verifyFresh drops st's producer cache when Iggy's high watermark shows
// appends this gateway did not make. It costs a metadata read only when the
// cache has not been confirmed by an append of ours within trustWindow, or
// was confirmed before the fleet's view last changed (moves, read before the
// check).
func (b *Bridge) verifyFresh(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, moves uint64) error {
	if st.next >= 0 && b.clock.Now().Sub(st.confirmed) < trustWindow && moves == st.confirmedMoves {
		return nil
	}
	if len(st.producers) == 0 && !st.complete && st.boundedAt.IsZero() {
		// Nothing cached that a foreign append could make wrong.
		return nil
	}
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return kafkaErr(err)
	}
	if int(partition) >= len(t.Partitions) {
		return fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, len(t.Partitions))
	}
	hw, err := b.exactEnd(ctx, as, topic, partition, t.Partitions[partition].highWatermark())
	if err != nil {
		return err
	}
	if hw != st.next {
		st.dropProducers()
		st.next = hw
	}
	st.confirmed, st.confirmedMoves = b.clock.Now(), moves
	return nil
}

// maxIggyBatch keeps one Iggy batch, with the request header and send
// metadata around it, inside Iggy's 64 MiB frame limit.
const maxIggyBatch = 64<<20 - 4096

// producerWindow is how many of a producer's latest batches are remembered
// per partition, as Kafka does: a client has at most five in flight.
const producerWindow = 5

type seqBatch struct {
	seq  int32
	n    int32
	base int64
}

type producerState struct {
	epoch   int16
	batches []seqBatch // oldest first, at most producerWindow
	last    time.Time  // this gateway's last append of the producer here (Config.Clock); zero: none yet
	// partial says the state began with an append after the cache was dropped, so older
	// batches of the producer may be missing from it.
	partial bool
}

func (ps *producerState) add(epoch int16, seq, n int32, base int64) {
	if epoch != ps.epoch {
		ps.epoch, ps.batches = epoch, ps.batches[:0]
	}
	if len(ps.batches) == producerWindow {
		copy(ps.batches, ps.batches[1:])
		ps.batches = ps.batches[:producerWindow-1]
	}
	ps.batches = append(ps.batches, seqBatch{seq, n, base})
}

// fence raises the producer's epoch to epoch, as a transaction marker at that epoch does (the
// abort of a timed-out or fenced transaction is written at a bumped epoch): batches of an older
// epoch are INVALID_PRODUCER_EPOCH from then on.
func (ps *producerState) fence(epoch int16) {
	if epoch > ps.epoch {
		ps.epoch, ps.batches = epoch, ps.batches[:0]
	}
}

// nextSeq is the sequence after a batch, wrapping at MaxInt32 as Kafka does.
func nextSeq(seq, n int32) int32 {
	return int32((int64(seq) + int64(n)) % (math.MaxInt32 + 1))
}

// check decides a batch against the producer's recent batches. It returns
// the original base offset of a duplicate, -1 for a batch to append, or an
// error for a fenced epoch or a sequence gap.
func (ps *producerState) check(kb *kbatch) (int64, error) {
	if ps.epoch < 0 && len(ps.batches) == 0 {
		// Nothing known within the scan bound: accept, as Kafka does for a
		// producer whose state expired.
		return -1, nil
	}
	switch {
	case kb.ProducerEpoch < ps.epoch:
		return -1, fmt.Errorf("%w: epoch %d, current %d", kerr.InvalidProducerEpoch, kb.ProducerEpoch, ps.epoch)
	case kb.ProducerEpoch > ps.epoch:
		if kb.BaseSequence != 0 {
			return -1, fmt.Errorf("%w: new epoch %d starts at sequence %d", kerr.OutOfOrderSequenceNumber, kb.ProducerEpoch, kb.BaseSequence)
		}
		return -1, nil
	}
	for _, sb := range ps.batches {
		if sb.seq == kb.BaseSequence && sb.n == kb.NumRecords {
			return sb.base, nil
		}
	}
	if len(ps.batches) == 0 {
		return -1, nil
	}
	last := ps.batches[len(ps.batches)-1]
	if want := nextSeq(last.seq, last.n); kb.BaseSequence != want {
		first := ps.batches[0].seq
		if kb.BaseSequence >= first && kb.BaseSequence < want {
			return -1, fmt.Errorf("%w: sequence %d already written", kerr.DuplicateSequenceNumber, kb.BaseSequence)
		}
		return -1, fmt.Errorf("%w: sequence %d, expected %d", kerr.OutOfOrderSequenceNumber, kb.BaseSequence, want)
	}
	return -1, nil
}

// Bounds of the tail scan that rebuilds a producer's state from Iggy when
// this gateway has none: read backwards in windows of scanWindow messages,
// at most scanMaxMessages messages or scanMaxBytes bytes, stopping early
// once producerWindow batches of the producer are found.
const (
	scanWindow      = 512
	scanMaxMessages = 8192
	scanMaxBytes    = 32 << 20
)

// producer returns the cached state of pid in st, rebuilding it from the
// partition's tail on a miss, unless the cache is complete (then pid has no
// history in the partition) and rescan is false.
func (b *Bridge) producer(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, pid int64, rescan bool) (*producerState, error) {
	if ps := st.producers[pid]; ps != nil {
		if !b.expired(ps) {
			return ps, nil
		}
		// As Kafka does once producer.id.expiration.ms passed: the producer starts afresh.
		b.metrics.producerStatesDropped.Add(1)
		ps = &producerState{epoch: -1}
		st.producers[pid] = ps
		return ps, nil
	}
	if !rescan && (st.complete || b.scannedRecently(st)) {
		if !st.complete {
			b.metrics.producerScansSkipped.Add(1)
		}
		ps := &producerState{epoch: -1}
		st.producers[pid] = ps
		b.pruneProducers(st)
		return ps, nil
	}
	ps, err := b.scanProducer(ctx, as, st, topic, partition, pid)
	if err != nil {
		return nil, err
	}
	st.producers[pid] = ps
	b.pruneProducers(st)
	return ps, nil
}

// scanProducer reads the partition's tail backwards for pid's latest batches (see the bounds
// above). It notes every producer's batches on the way: when the scan reaches offset 0 and
// nothing but this gateway's own appends came after the cache was started, every producer of
// the partition is then known, and a producer the cache does not know needs no scan (a new
// producer spreading over many partitions would otherwise scan each of them).
func (b *Bridge) scanProducer(ctx context.Context, as iggyAPI, st *partState, topic string, partition int32, pid int64) (*producerState, error) {
	select {
	case b.scanning <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-b.scanning }()
	b.metrics.producerScans.Add(1)
	end, err := b.partitionEnd(ctx, as, topic, partition)
	if err != nil {
		return nil, err
	}
	if st.next < 0 {
		st.next = end
	}
	whole := st.next == end // the cache may become complete
	s := producerScan{seen: map[int64]*producerHistory{}, fences: map[int64]int16{}}
	scanned, bytes := int64(0), 0
	for end > 0 && scanned < scanMaxMessages && bytes < scanMaxBytes && !s.found(pid) {
		from := max(0, end-scanWindow)
		p, err := as.poll(ctx, b.cfg.Stream, topic, uint32(partition), uint64(from), uint32(end-from))
		if err != nil {
			return nil, kafkaErr(err)
		}
		bytes += len(p.Records)
		s.read(p.Records)
		if p.Release != nil {
			p.Release()
		}
		scanned += end - from
		end = from
	}
	ps := s.state(pid)
	if whole {
		// Nothing but this gateway's appends came after the cache started, so every producer
		// seen has its newest batches in what was read: note them all.
		for id := range s.seen {
			if id != pid && st.producers[id] == nil {
				st.producers[id] = s.state(id)
			}
		}
		st.complete = end == 0
		if !s.found(pid) {
			// The scan ran to its bound: a producer it did not see has no batch within the
			// bound, which stays true until someone else appends (dropProducers).
			st.boundedAt = b.clock.Now()
		}
	}
	b.log.Debug("rebuilt producer state from Iggy", "topic", topic, "partition", partition, "pid", pid, "batches", len(ps.batches), "scanned", scanned, "complete", st.complete)
	return ps, nil
}

// partitionEnd is the high watermark of a partition, exact (exactEnd), or an
// UNKNOWN_TOPIC_OR_PARTITION error for a partition the topic does not have.
func (b *Bridge) partitionEnd(ctx context.Context, as iggyAPI, topic string, partition int32) (int64, error) {
	t, err := as.topic(ctx, b.cfg.Stream, topic)
	if err != nil {
		return -1, kafkaErr(err)
	}
	if int(partition) >= len(t.Partitions) {
		return -1, fmt.Errorf("%w: %s has %d partitions", kerr.UnknownTopicOrPartition, topic, len(t.Partitions))
	}
	return b.exactEnd(ctx, as, topic, partition, t.Partitions[partition].highWatermark())
}

// producerHistory is what a scan read of one producer's batches, oldest first, with the epoch
// of each.
type producerHistory struct {
	batches []seqBatch
	epochs  []int16
}

// producerScan is what a scan has read of a partition's tail, going backwards a window at a
// time: each producer's batches, and the highest epoch of each producer's transaction markers.
type producerScan struct {
	seen   map[int64]*producerHistory
	fences map[int64]int16
	m      recMeta
}

// found reports whether the scan holds the producerWindow batches a producer's state keeps.
func (s *producerScan) found(pid int64) bool {
	h := s.seen[pid]
	return h != nil && len(h.batches) >= producerWindow
}

// read takes in one window, the records of a poll that comes before every window read so far.
// A batch that started in an earlier window is left for that one.
func (s *producerScan) read(recs []byte) {
	win := map[int64]*producerHistory{}
	for len(recs) > 0 {
		rec, rest, ok := splitRecord(recs)
		if !ok {
			break
		}
		recs = rest
		f, ok := firstFrame(rec)
		if !ok || f.OffsetDelta != 0 {
			continue // the batch started in an earlier window
		}
		m := &s.m
		m.parse(f.UserHeaders)
		switch {
		case !m.hasPID:
		case m.txn == txnCommit || m.txn == txnAbort:
			// A transaction marker carries its producer but is no batch of it: it holds no
			// sequence, only the epoch it fences.
			s.fences[m.pid] = max(s.fences[m.pid], m.epoch)
		default:
			w := win[m.pid]
			if w == nil {
				w = &producerHistory{}
				win[m.pid] = w
			}
			w.batches = append(w.batches, seqBatch{m.seq, m.n, int64(batchBase(rec))})
			w.epochs = append(w.epochs, m.epoch)
		}
	}
	for id, w := range win {
		if h := s.seen[id]; h != nil {
			w.batches, w.epochs = append(w.batches, h.batches...), append(w.epochs, h.epochs...)
		}
		s.seen[id] = w
	}
}

// state is the producer state of id the scan read: its batches, fenced at the highest epoch of
// its markers.
func (s *producerScan) state(id int64) *producerState {
	ps := &producerState{epoch: -1}
	if h := s.seen[id]; h != nil {
		for i, sb := range h.batches {
			ps.add(h.epochs[i], sb.seq, sb.n, sb.base)
		}
	}
	if e, ok := s.fences[id]; ok {
		ps.fence(e)
	}
	return ps
}
