package bridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
)

// tailSource answers from the tail cache: the producers' own batches from the one holding the
// offset on, as long as they are cached, contiguous and within maxBytes (the first one whatever
// its size). Their partition is checked at the last batch's base (stillThere). When the next
// cached batch would not fit, the answer is complete: nothing is rebuilt from Iggy only to go
// past maxBytes.
type tailSource struct{ b *Bridge }

func (s tailSource) read(ctx context.Context, r *fetchRead) (bool, error) {
	b := s.b
	if b.cache == nil {
		return false, nil
	}
	if r.n == 0 && len(r.buf.b) == 0 {
		if tb, kafka, full := r.st.tail.lend(r.offset, r.room(), r.codec.allows); tb != nil {
			return s.lent(ctx, r, tb, kafka, full)
		}
	}
	start := len(r.buf.b)
	out, last, n, full := r.st.tail.cached(r.buf.b, r.offset, r.room(), r.codec.allows)
	r.buf.b = out
	if last == nil {
		return false, nil
	}
	same, hw, err := b.stillThere(ctx, r.as, r.st, r.topic, r.partition, last.base, last.id)
	if err != nil || !same {
		r.buf.b = out[:start]
		if err == nil {
			r.st.tail.reset()
		}
		return false, err
	}
	b.metrics.tailFetches.Add(1)
	r.n += n
	r.offset, r.hw = last.end(), hw
	return full || r.offset >= hw || r.room() <= 0, nil
}

// lent answers r with one batch the tail lent (tail.lend) after the same check: as it lies in
// the cache when the answer is complete with it (the batch ends at the high watermark, or the
// next would not fit), copied into r's buffer otherwise, so that other sources go on from its
// end.
func (s tailSource) lent(ctx context.Context, r *fetchRead, tb *tailBatch, kafka []byte, full bool) (bool, error) {
	b, t := s.b, &r.st.tail
	same, hw, err := b.stillThere(ctx, r.as, r.st, r.topic, r.partition, tb.base, tb.id)
	if err != nil || !same {
		t.unpin(tb)
		if err == nil {
			t.reset()
		}
		return false, err
	}
	b.metrics.tailFetches.Add(1)
	r.n += int(tb.n)
	r.offset, r.hw = tb.end(), hw
	if full || r.offset >= hw {
		r.view, r.lent = kafka, tb
		return true, nil
	}
	r.buf.b = append(r.buf.b, kafka...)
	t.unpin(tb)
	return r.room() <= 0, nil
}

// keptSource answers from the producers' own batches the tail cache let go and the fetch cache's
// memory kept (tailCache.spill): from the one whose first record is at the read's offset (or
// the one holding it, when the tail still knows where it starts) on, while they are kept, in a
// codec the fetch may hand out, and fit. A read that starts elsewhere, or finds a batch gone or
// in another codec, goes on to the batches rebuilt from Iggy.
type keptSource struct{ b *Bridge }

func (s keptSource) read(ctx context.Context, r *fetchRead) (bool, error) {
	if s.b.kept == nil {
		return false, nil
	}
	sp, err := s.b.fetchCached(ctx, r, s.b.kept, r.room(), r.n == 0)
	if err != nil || sp.n == 0 {
		return false, err
	}
	return r.takeSpan(sp), nil
}

// rebuiltSource answers from the fetch cache (rebuilt.go): the batches earlier fetches rebuilt
// from Iggy. Readers at the same offset at the same moment (groups reading together) wait for
// the one that rebuilds those batches and are answered from the cache.
type rebuiltSource struct{ b *Bridge }

func (s rebuiltSource) read(ctx context.Context, r *fetchRead) (bool, error) {
	b := s.b
	if b.rebuilt == nil {
		return false, nil
	}
	sp, err := b.fetchCached(ctx, r, b.rebuilt, r.room(), r.n == 0)
	if err == nil && sp.n == 0 && r.n == 0 {
		sp, err = b.awaitRebuild(ctx, r)
	}
	if err != nil || sp.n == 0 {
		return false, err
	}
	return r.takeSpan(sp), nil
}

// cachedSpan is a span of the fetch cache a fetch found: full reports that it ends because the
// next cached batch would not fit (the answer is then complete, as a fetch from Iggy answers one
// whole batch after another), next is the offset after it, hw the high watermark its check read.
type cachedSpan struct {
	rebuiltSpan
	full     bool
	next, hw int64
}

// fetchCached returns, pinned, the batches of c (the fetch cache, or its kept share) from the
// one whose first record is at r.offset (or, when the tail knows it, the batch holding r.offset)
// on, while each next one is cached and fits in room (the first whatever its size when first is
// set); empty when the cache could not answer. The partition is checked at the first batch's
// base (stillThere): Iggy deletes the oldest records first, so while that message is there
// every later one is too. A check that finds another partition forgets both caches' batches of
// it (a new generation).
func (b *Bridge) fetchCached(ctx context.Context, r *fetchRead, c *rebuiltCache, room int, first bool) (cachedSpan, error) {
	if !first && room <= 0 {
		return cachedSpan{}, nil
	}
	st := r.st
	k := rebuiltKey{st: st, gen: st.rebuiltGen.Load(), base: r.offset, codec: r.codec}
	var allows func(int) bool
	if c.kept {
		k.codec, allows = fetchForm{}, r.codec.allows
	}
	if f, _, ok := st.tail.span(r.offset, 0); ok {
		k.base = f // the batch holding offset, whole, as a fetch from Iggy would answer
	}
	sp, full := c.chain(k, room, first, allows)
	if sp.n == 0 {
		return cachedSpan{}, nil
	}
	same, hw, err := b.stillThere(ctx, r.as, st, r.topic, r.partition, k.base, sp.parts[0].id)
	if err != nil || !same {
		sp.release()
		if err == nil {
			st.rebuiltGen.Add(1)
			st.rebuiltTop.Store(0)
		}
		return cachedSpan{}, err
	}
	return cachedSpan{rebuiltSpan: sp, full: full, next: k.base + int64(sp.n), hw: hw}, nil
}

// awaitRebuild waits, when another read is rebuilding the batches at r.offset, for it to put
// them in the cache and then answers from there; otherwise r becomes the one rebuilding, and
// others wait for it until it ends (fetchRead.endRebuild).
func (b *Bridge) awaitRebuild(ctx context.Context, r *fetchRead) (cachedSpan, error) {
	k := rebuiltKey{st: r.st, gen: r.gen, base: r.offset, codec: r.codec}
	wait, done := b.rebuilds.join(k)
	if done != nil {
		r.rebuilding = done
		return cachedSpan{}, nil
	}
	b.rebuilds.waiting.Add(1)
	select {
	case <-wait:
	case <-ctx.Done():
	}
	b.rebuilds.waiting.Add(-1)
	if err := ctx.Err(); err != nil {
		return cachedSpan{}, err
	}
	return b.fetchCached(ctx, r, b.rebuilt, r.maxBytes, true)
}

// iggySource reads from Iggy and rebuilds Kafka batches (or message sets) from what it stored,
// keeping the whole batches it rebuilt in the fetch cache. It always completes the answer.
type iggySource struct{ b *Bridge }

func (s iggySource) read(ctx context.Context, r *fetchRead) (bool, error) {
	b := s.b
	from, count, aligned := r.pollPlan()
	p, err := r.as.poll(ctx, b.cfg.Stream, r.topic, uint32(r.partition), uint64(from), uint32(count))
	if err != nil {
		return false, kafkaErr(err)
	}
	defer func() {
		if p.Release != nil {
			p.Release()
		}
	}()
	if aligned && p.Count == 0 {
		// The batch this gateway appended is gone: the partition was purged or re-created.
		r.st.tail.reset()
	}
	hw, err := b.highWatermark(ctx, r.as, r.topic, r.partition, r.offset, p.Count, p.CurrentOffset)
	if err != nil {
		return false, err
	}
	r.st.readEnd(hw, b.clock.Now())
	r.hw = hw
	if p.Count == 0 {
		return true, nil
	}
	recs := p.Records
	var head batchTxn
	var headAt uint64
	if r.version >= 4 {
		if !aligned && int64(p.Count) == count {
			recs = leaveLastBatch(recs)
		}
		// A transactional batch goes back with its producer and the transactional bit, which
		// only its first message carries: a READ_COMMITTED reader drops an aborted
		// transaction's records by them.
		if head, headAt, err = b.sliceHead(ctx, r.as, r.topic, r.partition, recs); err != nil {
			return false, err
		}
	}
	return true, b.rebuild(r, recs, from, head, headAt)
}

// leaveLastBatch is the batch records of a poll reply that the count asked for may have cut
// short, without the last one when it holds at most half of the reply's messages: so the
// reader's next fetch starts on that batch's first message, which says its codec and
// transaction, and not one read later inside it (Bridge.sliceHead). Those records are read from
// Iggy again by that fetch. A last batch holding more is kept, or an answer of batches about as
// large as the count would lose half of each.
func leaveLastBatch(recs []byte) []byte {
	end, at, total := 0, 0, uint64(0)
	var last uint64
	for at < len(recs) {
		rec, rest, ok := splitRecord(recs[at:])
		if !ok {
			return recs
		}
		h, _ := message.ParseBatchHeader(rec)
		last = uint64(h.Count)
		total += last
		end, at = at, len(recs)-len(rest)
	}
	if end == 0 || last*2 > total {
		return recs
	}
	return recs[:end]
}

// pollPlan is the poll that goes on from r.offset: whole batches when this gateway knows where
// they lie, from the start of the one holding the offset, so that the next fetch starts on a
// boundary too and a batch goes back whole, in its producer's codec (aligned); otherwise a
// count estimated from the record size.
func (r *fetchRead) pollPlan() (from, count int64, aligned bool) {
	room := max(r.room(), 1)
	count = int64(room) / max(r.st.avgBytes.Load(), 1)
	count = min(max(count, 1)+1, maxPollCount)
	f, c, ok := r.st.tail.span(r.offset, room)
	switch {
	case !ok:
		return r.offset, count, false
	case r.version >= 4:
		return f, min(c, maxPollCount), true
	default:
		return r.offset, min(c, maxPollCount) - (r.offset - f), true // message sets start at offset itself
	}
}

// rebuild appends to r's answer the records of recs, Iggy batch records polled from offset
// from, while the answer has room (at least one batch), and puts the whole Kafka batches it
// rebuilt in the fetch cache. head is the transaction of the Iggy batch at headAt, when recs
// starts past its first message (sliceHead).
func (b *Bridge) rebuild(r *fetchRead, recs []byte, from int64, head batchTxn, headAt uint64) error {
	c := getConverter(b.metrics)
	defer putConverter(c)
	c.head, c.headAt = head, headAt
	c.out = r.codec
	c.plainLeft = int(r.st.plainLeft.Load())
	defer func() { r.st.plainLeft.Store(int32(c.plainLeft)) }()
	got, total := 0, 0
	var runBuf [16]rebuiltBatch
	run := runBuf[:0] // the whole Iggy batches rebuilt, for the fetch cache
	// Room for what will be appended, at once: a buffer from the pool may be new (the pool is
	// emptied by collections, which a gateway near its memory limit runs often), and growing it
	// batch by batch copies the answer over and over. A rebuilt batch is no larger than the Iggy
	// batch it comes from, and the answer takes batches while it has room, the first whole.
	if first, _, ok := splitRecord(recs); ok {
		r.buf.b = slices.Grow(r.buf.b, min(len(recs), max(r.room(), 0)+len(first)))
	}
	for len(recs) > 0 && (r.n == 0 || r.room() > 0) {
		rec, rest, ok := splitRecord(recs)
		if !ok {
			return fmt.Errorf("bridge: malformed poll reply from Iggy for %s/%d", r.topic, r.partition)
		}
		recs = rest
		mark := len(r.buf.b)
		out, k, err := c.appendFetched(r.buf.b, rec, from, r.version)
		r.buf.b = out
		if err != nil {
			return fmt.Errorf("bridge: stored batch in %s/%d: %w", r.topic, r.partition, err)
		}
		if b.rebuilt != nil {
			if rb, ok := rebuiltFrom(r, rec, from, mark, k); ok {
				run = append(run, rb)
			}
		}
		r.n += k
		got += k
		total += len(rec)
	}
	if got > 0 {
		r.st.avgBytes.Store((r.st.avgBytes.Load() + int64(total/got)) / 2)
	}
	if b.rebuilt != nil {
		b.rebuilt.putRun(r.buf.b, run)
	}
	return nil
}

// appendFetched appends rec, an Iggy batch record polled from offset from, in the form fetch
// version asks: magic 0 message sets (v0-v1), magic 1 (v2-v3), magic-2 batches (v4+). It
// returns the records appended.
func (c *converter) appendFetched(dst, rec []byte, from int64, version int16) ([]byte, int, error) {
	var k int
	var err error
	switch {
	case version <= 1:
		dst, k, _, err = c.appendLegacy(dst, rec, from, 0)
	case version <= 3:
		dst, k, _, err = c.appendLegacy(dst, rec, from, 1)
	default:
		dst, k, _, err = c.appendKafka(dst, rec, from)
	}
	return dst, k, err
}

// rebuiltFrom describes for the fetch cache the magic-2 batch just rebuilt from rec at
// r.buf.b[start:] with records records, when it holds the whole Iggy batch (a batch cut at the
// fetch offset is not one the next reader would start from).
func rebuiltFrom(r *fetchRead, rec []byte, from int64, start, records int) (rebuiltBatch, bool) {
	if r.version < 4 || records == 0 {
		return rebuiltBatch{}, false
	}
	f, ok := firstFrame(rec)
	if !ok {
		return rebuiltBatch{}, false
	}
	base := int64(batchBase(rec)) + int64(f.OffsetDelta)
	if base < from {
		return rebuiltBatch{}, false
	}
	k := rebuiltKey{st: r.st, gen: r.gen, base: base, codec: r.codec}
	return rebuiltBatch{k: k, start: start, end: len(r.buf.b), n: int32(records), id: f.ID}, true
}
