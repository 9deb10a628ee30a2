package kafka

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch: v0-12
//
// Behavior:
//   - Partitions are read in parallel (up to 8 at once) and answered in request order; the
//     request MaxBytes and each partition's MaxBytes bound the answer, except that the first
//     partition with data returns at least one whole batch even when it is larger (as Kafka
//     does, so a client can always make progress). Data of a later partition that does not fit
//     the request MaxBytes is left out; its watermarks are still reported.
//   - Long poll: while the answer holds fewer than MinBytes and MaxWaitMillis (capped at 30 s, on
//     Config.Clock) has not passed, the handler waits for new data in the partitions that
//     returned none and reads again. An error in any partition answers at once. The wait watches
//     each partition once however often the request names it, and at most maxFetchWaiters of
//     them (the others are read again when the Storage's wait returns, within 100 ms for the
//     bridge); FetchWaitsCapped counts the long polls that watched fewer than they could.
//   - Fetch v0-3 get magic 0/1 message sets (the Storage converts); v4+ get magic-2 batches.
//   - Any gateway serves any partition; there are no preferred read replicas.
//
// Not implemented:
//   - Fetch sessions (KIP-227): the session id is always 0, so clients send full requests; a
//     request naming a session gets FETCH_SESSION_ID_NOT_FOUND.
//   - v13+ (topic IDs), leader epoch fencing (every partition is at epoch 0), read_committed
//     (there are no transactions, so it equals read_uncommitted).
func init() { regKey(fetchKey, 0, 12) }

const maxFetchWait = 30 * time.Second

func (c *conn) handleFetch(req *request) (kmsg.Response, error) {
	freq := req.kreq.(*kmsg.FetchRequest)
	resp := freq.ResponseKind().(*kmsg.FetchResponse)
	if freq.Version >= 7 && freq.SessionID != 0 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	maxBytes := int64(math.MaxInt32)
	if freq.Version >= 3 && freq.MaxBytes > 0 {
		maxBytes = int64(freq.MaxBytes)
	}
	wait := min(time.Duration(max(freq.MaxWaitMillis, 0))*time.Millisecond, maxFetchWait)
	clk := c.s.cfg.Clock
	deadline := clk.Now().Add(wait)

	for {
		total, failed, empty := c.fetchOnce(req, freq, resp, maxBytes)
		if total >= int64(freq.MinBytes) || failed || len(empty) == 0 || !clk.Now().Before(deadline) {
			break
		}
		c.releaseAll(req)
		if !c.waitAny(req.ctx, req.storage, empty, deadline) {
			// Out of time (or closing): answer with one last read so the watermarks are fresh.
			c.fetchOnce(req, freq, resp, maxBytes)
			break
		}
	}

	records := 0
	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			p := &resp.Topics[i].Partitions[j]
			req.setErr(p.ErrorCode)
			if freq.Version >= 4 {
				records += countRecords(p.RecordBatches)
			}
		}
	}
	if o := c.s.cfg.Observer; o != nil && records > 0 {
		o.RecordsFetched(records)
	}
	return resp, nil
}

type waitPoint struct {
	topic     string
	partition int32
	offset    int64
}

// fetchOnce fills resp from the Storage and returns the bytes gathered, whether a partition
// failed, and the partitions that had nothing. The partitions are read in parallel, each up to
// its own limit, then taken in request order while the request limit allows; a partition's data
// that no longer fits is dropped (the client asks again), except that the first data is always
// kept whole.
func (c *conn) fetchOnce(req *request, freq *kmsg.FetchRequest, resp *kmsg.FetchResponse, maxBytes int64) (total int64, failed bool, empty []waitPoint) {
	type read struct {
		topic     string
		partition int32
		offset    int64
		limit     int32
		res       FetchResult
		err       error
	}
	var reads []read
	for _, rt := range freq.Topics {
		for _, rp := range rt.Partitions {
			limit := max(min(int64(rp.PartitionMaxBytes), maxBytes), 1)
			reads = append(reads, read{topic: rt.Topic, partition: rp.Partition, offset: rp.FetchOffset, limit: int32(limit)})
		}
	}
	do := func(r *read) {
		r.res, r.err = req.storage.Fetch(req.ctx, r.topic, r.partition, r.offset, r.limit, freq.Version)
	}
	if len(reads) == 1 {
		do(&reads[0])
	} else {
		// Waves of up to maxParallelReads partitions, in request order; once the records read
		// reach the request's limit, the partitions left are asked for their watermarks only
		// (limit 0), so a fetch of many partitions does not read what it would then drop.
		var got int64
		for at := 0; at < len(reads); at += maxParallelReads {
			wave := reads[at:min(at+maxParallelReads, len(reads))]
			var wg sync.WaitGroup
			for i := range wave {
				if got >= maxBytes {
					wave[i].limit = 0
				}
				wg.Go(func() { do(&wave[i]) })
			}
			wg.Wait()
			for i := range wave {
				got += int64(len(wave[i].res.Records))
			}
		}
	}

	resp.Topics = resp.Topics[:0]
	k := 0
	for _, rt := range freq.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(rt.Partitions))
		for range rt.Partitions {
			r := &reads[k]
			k++
			if r.err != nil {
				failed = true
				st.Partitions = append(st.Partitions, fetchFailed(r.partition, errCode(r.err)))
				continue
			}
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = r.partition
			sp.RecordBatches = noRecords
			if r.res.Release != nil {
				req.release = append(req.release, r.res.Release)
			}
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = r.res.HighWatermark, r.res.LastStableOffset, r.res.LogStartOffset
			records := r.res.Records
			if total > 0 && int64(len(records)) > maxBytes-total {
				records = nil
			}
			if records != nil {
				sp.RecordBatches = records
			}
			total += int64(len(records))
			if len(r.res.Records) == 0 {
				empty = append(empty, waitPoint{r.topic, r.partition, r.offset})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return total, failed, empty
}

// noRecords is the record set of a partition answered without records: librdkafka refuses a
// null set (size -1), which is what a nil slice encodes to, as a malformed answer, and backs the
// partition's fetches off without looking at its error code; an empty answer must be zero bytes.
var noRecords = []byte{}

// fetchFailed is a Fetch answer's partition that failed with code: nothing read, no watermarks.
func fetchFailed(partition int32, code int16) kmsg.FetchResponseTopicPartition {
	sp := kmsg.NewFetchResponseTopicPartition()
	sp.Partition, sp.ErrorCode = partition, code
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
	sp.RecordBatches = noRecords
	return sp
}

// maxParallelReads bounds the Storage reads one fetch runs at once.
const maxParallelReads = 8

func (c *conn) releaseAll(req *request) {
	for _, f := range req.release {
		f()
	}
	req.release = req.release[:0]
}

// maxFetchWaiters bounds the goroutines one long poll starts to watch partitions: a request
// naming thousands of partitions, or one partition thousands of times, costs no more.
const maxFetchWaiters = 16

var fetchWaitsCapped atomic.Int64

// FetchWaitsCapped counts the fetch long polls that watched only maxFetchWaiters of their
// empty partitions (process-wide).
func FetchWaitsCapped() int64 { return fetchWaitsCapped.Load() }

// waitAny blocks until one of the points may have new data (true) or the deadline (on the
// server's clock), ctx or the server's drain ends it (false). It watches each partition once,
// from the lowest offset asked, and at most maxFetchWaiters partitions.
func (c *conn) waitAny(ctx context.Context, b Storage, points []waitPoint, deadline time.Time) bool {
	type tp struct {
		topic     string
		partition int32
	}
	watch := make([]waitPoint, 0, min(len(points), maxFetchWaiters))
	at := make(map[tp]int, min(len(points), maxFetchWaiters))
	capped := false
	for _, p := range points {
		k := tp{p.topic, p.partition}
		if i, ok := at[k]; ok {
			watch[i].offset = min(watch[i].offset, p.offset)
			continue
		}
		if len(watch) == maxFetchWaiters {
			capped = true
			continue
		}
		at[k] = len(watch)
		watch = append(watch, p)
	}
	if capped {
		fetchWaitsCapped.Add(1)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := c.s.cfg.Clock.AfterFunc(deadline.Sub(c.s.cfg.Clock.Now()), cancel)
	defer timer.Stop()
	woke := make(chan struct{}, len(watch)+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.s.draining:
			cancel()
		case <-wctx.Done():
		}
	})
	for _, p := range watch {
		wg.Go(func() {
			b.Wait(wctx, p.topic, p.partition, p.offset)
			woke <- struct{}{}
		})
	}
	select {
	case <-woke:
	case <-wctx.Done():
	}
	ok := wctx.Err() == nil
	cancel()
	wg.Wait()
	return ok
}

// inlineRecords is the size below which a partition's record batches are copied into the
// response's own buffer: an iovec of its own costs more than copying a few kilobytes.
const inlineRecords = 16 << 10

// appendFetchResponse encodes resp after dst (the frame header) the way kmsg does, except that
// record batches of inlineRecords or more are not copied: they are returned in order as bufs,
// to be written after the pieces of dst between them, so a fetch answer reaches the socket
// straight from the buffers the Storage filled. cuts[i] is where bufs[i] goes in dst; both are
// appended to the slices passed in. ok is false when resp carries something this encoder leaves
// to kmsg (tagged fields, v13+).
func appendFetchResponse(dst []byte, cuts []int, bufs [][]byte, resp *kmsg.FetchResponse) (out []byte, _ []int, _ [][]byte, ok bool) {
	v := resp.Version
	if v > 12 || !plainFetchResponse(resp) {
		return dst, nil, nil, false
	}
	flex := v >= 12
	be := binary.BigEndian
	if v >= 1 {
		dst = be.AppendUint32(dst, uint32(resp.ThrottleMillis))
	}
	if v >= 7 {
		dst = be.AppendUint16(dst, uint16(resp.ErrorCode))
		dst = be.AppendUint32(dst, uint32(resp.SessionID))
	}
	dst = appendLen(dst, len(resp.Topics), false, flex)
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if flex {
			dst = binary.AppendUvarint(dst, uint64(len(t.Topic))+1)
		} else {
			dst = be.AppendUint16(dst, uint16(len(t.Topic)))
		}
		dst = append(dst, t.Topic...)
		dst = appendLen(dst, len(t.Partitions), false, flex)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			dst = be.AppendUint32(dst, uint32(p.Partition))
			dst = be.AppendUint16(dst, uint16(p.ErrorCode))
			dst = be.AppendUint64(dst, uint64(p.HighWatermark))
			if v >= 4 {
				dst = be.AppendUint64(dst, uint64(p.LastStableOffset))
			}
			if v >= 5 {
				dst = be.AppendUint64(dst, uint64(p.LogStartOffset))
			}
			if v >= 4 {
				dst = appendLen(dst, len(p.AbortedTransactions), p.AbortedTransactions == nil, flex)
				for _, a := range p.AbortedTransactions {
					dst = be.AppendUint64(dst, uint64(a.ProducerID))
					dst = be.AppendUint64(dst, uint64(a.FirstOffset))
					if flex {
						dst = append(dst, 0)
					}
				}
			}
			if v >= 11 {
				dst = be.AppendUint32(dst, uint32(p.PreferredReadReplica))
			}
			recs := p.RecordBatches
			dst = appendLen(dst, len(recs), recs == nil, flex)
			if len(recs) < inlineRecords {
				dst = append(dst, recs...)
			} else {
				cuts = append(cuts, len(dst))
				bufs = append(bufs, recs)
			}
			if flex {
				dst = append(dst, 0) // partition tags
			}
		}
		if flex {
			dst = append(dst, 0) // topic tags
		}
	}
	if flex {
		dst = append(dst, 0) // response tags
	}
	return dst, cuts, bufs, true
}

// plainFetchResponse reports whether resp holds nothing but what the handler sets: no tagged
// fields, which appendFetchResponse does not write.
func plainFetchResponse(resp *kmsg.FetchResponse) bool {
	if resp.UnknownTags.Len() > 0 || len(resp.Brokers) > 0 {
		return false
	}
	for i := range resp.Topics {
		t := &resp.Topics[i]
		if t.UnknownTags.Len() > 0 {
			return false
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.UnknownTags.Len() > 0 || p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1 ||
				p.DivergingEpoch.UnknownTags.Len() > 0 || p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1 ||
				p.CurrentLeader.UnknownTags.Len() > 0 || p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1 ||
				p.SnapshotID.UnknownTags.Len() > 0 {
				return false
			}
			for _, a := range p.AbortedTransactions {
				if a.UnknownTags.Len() > 0 {
					return false
				}
			}
		}
	}
	return true
}

// appendLen writes an array or bytes length: int32 before the flexible versions, else an
// unsigned varint of length+1; null is -1 or 0.
func appendLen(dst []byte, n int, null, flex bool) []byte {
	switch {
	case flex && null:
		return append(dst, 0)
	case flex:
		return binary.AppendUvarint(dst, uint64(n)+1)
	case null:
		return binary.BigEndian.AppendUint32(dst, math.MaxUint32)
	default:
		return binary.BigEndian.AppendUint32(dst, uint32(n))
	}
}
