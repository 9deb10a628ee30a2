package bridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// The fetch path is a chain of sources behind one interface, fetchSource, asked in turn for
// one partition read (a fetchRead): the tail cache (the producers' own batches, tail.go), the
// producers' batches the tail cache let go, kept in a share of the fetch cache's memory
// (tailCache.spill), the fetch cache (batches earlier fetches rebuilt, rebuilt.go), then Iggy. Each source adds what
// it holds from where the one before stopped and says whether the answer is complete; Iggy
// always completes it.
//
// Memory behind an answer has one owner at a time, and one rule:
//
//   - A fetchRead owns everything its answer is made of: a buffer from the pool, and at most one
//     span of the fetch cache (rebuiltSpan), whose chunks stay pinned (neither emptied nor given
//     back) while it is held.
//   - A source that gets a span either copies it into the read's buffer and releases it at once,
//     or, when the span is the whole answer and lies in one run of a chunk, gives it to the read,
//     which hands its bytes out as they lie.
//   - On an error the read releases everything before fetch returns: an error result holds
//     nothing. On success ownership passes to the FetchResult: whoever takes it (the kafka Fetch
//     handler) calls Release exactly once, when it no longer reads Records.
//
// A second Release of one answer, or a release of a chunk that is not pinned, is refused and
// counted (Metrics.ReleaseFaults): it would let the cache overwrite bytes another answer still
// points into. Metrics.PinnedChunks is how many chunks answers pin now.
type fetchSource interface {
	// read adds to r what the source holds from r.offset on, moving r.offset past it, and
	// reports whether the answer is complete. A source that holds nothing there leaves r as it
	// was. On an error r is left for fetch to release.
	read(ctx context.Context, r *fetchRead) (done bool, err error)
}

// maxPollCount bounds the messages asked of Iggy for one fetch.
const maxPollCount = 100_000

func noRelease() {}

// fetchRead is one partition read on its way along the fetch path: what was asked, and the
// answer so far.
type fetchRead struct {
	b         *Bridge
	as        iggyAPI
	st        *partState
	topic     string
	partition int32
	version   int16
	maxBytes  int
	codec     fetchForm
	gen       uint32 // st.rebuiltGen when the read started
	logStart  int64

	offset int64 // where the next source reads from
	hw     int64 // the high watermark the last source read
	buf    *buffer
	n      int // records in buf
	// span, when it holds records, is the whole answer, as it lies in the fetch cache (view).
	span rebuiltSpan
	view []byte
	// lent, when set, is the tail batch view is (tailSource.lent), pinned until release.
	lent *tailBatch
	// rebuilding ends this read's turn as the one rebuilding from offset (rebuilds.join).
	rebuilding func()
	released   bool
}

// fetch returns record batches from offset on, about maxBytes of them (at
// least one whole batch even when larger, as Kafka does), plus watermarks.
// Fetch versions 0-3 get magic 0/1 message sets (v0-v1 magic 0, v2-v3 magic
// 1); later versions get magic-2 batches, one per Iggy batch, starting with
// the whole batch that holds offset when this gateway knows where it starts
// (the client skips what it did not ask for, as with Kafka). Batches still in
// the tail cache go out as their producer sent them.
func (b *Bridge) fetch(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64, maxBytes int32, version int16) (kafka.FetchResult, error) {
	r, res, err := b.startRead(ctx, as, topic, partition, offset, maxBytes, version)
	if r == nil || err != nil {
		return res, err
	}
	defer r.endRebuild()
	sources := b.sources[:]
	if version < 4 {
		sources = sources[len(sources)-1:] // message sets are rebuilt from Iggy
	}
	again := true
	for i := 0; i < len(sources); i++ {
		if i > 0 && version >= 4 {
			if r.st.appendingAt(r.offset) {
				// The tail answered up to where this gateway's append under way lands: the
				// rest comes from the tail once it is done (startRead), not rebuilt from Iggy
				// now.
				r.hw = r.offset
				break
			}
			if again && r.st.tail.holds(r.offset) {
				// That append ended after the tail was asked: the tail has the rest now.
				again, i = false, 0
			}
		}
		src := sources[i]
		done, err := src.read(ctx, r)
		if err != nil {
			r.release()
			return res, err
		}
		if done {
			break
		}
	}
	return r.answer(), nil
}

// startRead checks a read and answers those that need no records (an offset outside the log, a
// consumer at the end, maxBytes 0); otherwise it returns the read to go along the chain.
func (b *Bridge) startRead(ctx context.Context, as iggyAPI, topic string, partition int32, offset int64, maxBytes int32, version int16) (*fetchRead, kafka.FetchResult, error) {
	res := kafka.FetchResult{HighWatermark: -1, LastStableOffset: -1, LogStartOffset: -1, Release: noRelease}
	if partition < 0 {
		return nil, res, fmt.Errorf("%w: partition %d", kerr.UnknownTopicOrPartition, partition)
	}
	if offset < 0 {
		return nil, res, fmt.Errorf("%w: offset %d", kerr.OffsetOutOfRange, offset)
	}
	st, err := b.partOf(ctx, as, topic, partition)
	if err != nil {
		return nil, res, err
	}
	logStart, err := b.cachedLogStart(ctx, as, st, topic, partition)
	if err != nil {
		return nil, res, err
	}
	if offset < logStart {
		return nil, res, fmt.Errorf("%w: offset %d, log start %d", kerr.OffsetOutOfRange, offset, logStart)
	}
	if end, ok := st.knownEnd(b.clock.Now()); ok && (offset == end || maxBytes == 0 && offset < end) {
		// A consumer at the end, which Iggy told a moment ago: nothing to read. Nor for a read
		// of the watermarks only (a fetch over many partitions asks for them once its answer is
		// full), which that end answers as a poll would.
		res.HighWatermark, res.LastStableOffset, res.LogStartOffset = end, end, logStart
		b.metrics.endAnswers.Add(1)
		return nil, res, nil
	}
	if maxBytes > 0 && st.appendingAt(offset) {
		// A consumer where this gateway's append under way lands: the batch may be in Iggy
		// already, but not yet in the tail. Nothing to read for now, and the end as far as it
		// goes; the append wakes the consumer's wait (Wait) once the tail holds the producer's
		// bytes, which saves rebuilding them from Iggy.
		res.HighWatermark, res.LastStableOffset, res.LogStartOffset = offset, offset, logStart
		b.metrics.endAnswers.Add(1)
		return nil, res, nil
	}
	if maxBytes == 0 {
		res, err = b.watermarks(ctx, as, st, topic, partition, offset, logStart)
		return nil, res, err
	}
	return &fetchRead{
		b: b, as: as, st: st, topic: topic, partition: partition, version: version,
		maxBytes: int(maxBytes), codec: b.topicCodec(ctx, topic), gen: st.rebuiltGen.Load(),
		logStart: logStart, offset: offset, hw: -1, buf: getBuffer(),
	}, res, nil
}

// room is how many bytes the answer may still take.
func (r *fetchRead) room() int { return r.maxBytes - len(r.buf.b) }

// takeSpan adds a span of the fetch cache to the answer and reports whether the answer is
// complete: the span ends because the next cached batch would not fit, or at the high
// watermark, or fills maxBytes. A complete answer of one run of a chunk keeps the span pinned
// and answers with the cache's memory as it lies; otherwise the span is copied and released.
func (r *fetchRead) takeSpan(sp cachedSpan) bool {
	whole := sp.full || sp.next >= sp.hw || len(r.buf.b)+sp.size >= r.maxBytes
	if whole && r.n == 0 {
		if view, ok := sp.view(); ok {
			sp.counted(r.b.metrics)
			r.hw = sp.hw
			r.span, r.view = sp.rebuiltSpan, view
			return true
		}
	}
	out, ok := sp.appendTo(slices.Grow(r.buf.b, sp.size))
	r.buf.b = out
	sp.release()
	if !ok {
		return false // read back from disk, it did not check: the next source answers
	}
	sp.counted(r.b.metrics)
	r.hw = sp.hw
	r.n += sp.n
	r.offset = sp.next
	return whole
}

// counted counts a read answered from the span's cache.
func (sp *cachedSpan) counted(m *Metrics) {
	if sp.c.kept {
		m.keptFetches.Add(1)
	} else {
		m.rebuiltFetches.Add(1)
	}
}

// answer hands the read's memory over to the result (see fetchSource for the rule).
func (r *fetchRead) answer() kafka.FetchResult {
	res := kafka.FetchResult{HighWatermark: r.hw, LastStableOffset: r.hw, LogStartOffset: r.logStart, Release: r.release}
	switch {
	case r.view != nil:
		putBuffer(r.buf)
		r.buf = nil
		res.Records = r.view
	case len(r.buf.b) > 0:
		res.Records = r.buf.b
	}
	return res
}

// release gives back what the read holds: its buffer to the pool, its span's pins to the
// cache. It is the answer's Release; a second call is a fault, refused and counted.
func (r *fetchRead) release() {
	if r.released {
		r.b.metrics.releaseFaults.Add(1)
		return
	}
	r.released = true
	if r.buf != nil {
		putBuffer(r.buf)
		r.buf = nil
	}
	r.span.release()
	if r.lent != nil {
		r.lent.owner.unpin(r.lent)
		r.lent = nil
	}
	r.view = nil
}

// endRebuild lets the readers waiting for this read's rebuild go on (rebuilds.join).
func (r *fetchRead) endRebuild() {
	if r.rebuilding != nil {
		r.rebuilding()
		r.rebuilding = nil
	}
}
