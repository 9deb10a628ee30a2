package kafka

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
)

// Fetch: v0-12
//
// Behavior:
//   - Partitions are read in parallel (up to 8 at once, and together for no more than the room
//     the reads before them left in the request MaxBytes) and answered in request order; the
//     request MaxBytes and each partition's MaxBytes bound the answer, except that the first
//     partition with data returns at least one whole batch even when it is larger (as Kafka
//     does, so a client can always make progress). Data of a later partition that does not fit
//     the request MaxBytes is left out; its watermarks are still reported.
//   - Long poll: while the answer holds fewer than MinBytes and MaxWaitMillis (capped at 30 s, on
//     Config.Clock) has not passed, the handler keeps what it read, waits for data past it in
//     every partition that may take more, and reads only what came; it answers once MinBytes (or
//     the request MaxBytes) are held, or at the deadline, after a last read for fresh
//     watermarks. As in Kafka, a partition counts at most its own MaxBytes towards MinBytes, so
//     a fetch whose partitions are all at their limit below MinBytes waits out MaxWait. An error
//     in any partition answers at once. The wait watches each partition once however often the
//     request names it, and at most maxFetchWaiters of them (the others are read again when the
//     Storage's wait returns, within 100 ms for the bridge); FetchWaitsCapped counts the long
//     polls that watched fewer than they could.
//   - The request MaxBytes is capped at Config.FetchMaxBytes (Kafka's broker fetch.max.bytes;
//     default 4 MiB, where Kafka's is 55 MiB): a consumer asking for 50 MB over many partitions
//     gets a few MiB per answer and asks again, which keeps the gateway's memory low and lets
//     the client decode one answer while the next is read (with 96 partitions, answers of 50 MB
//     made a consumer 2 to 4 times slower than answers of 4 MiB: docs/performance.md).
//   - Fetch v0-3 get magic 0/1 message sets (the Storage converts); v4+ get magic-2 batches.
//   - Under a consumer_byte_rate quota, the request MaxBytes is capped at half of what the
//     quota allows over quota.window.num-1 windows. Kafka caps it at the whole, but Kafka cuts
//     an answer at MaxBytes in the middle of a batch (the client drops the part), where the
//     gateway answers whole batches and so up to one batch more: at the whole cap, that batch
//     would make every answer of a new client go over the quota, be throttled and answer no
//     records, again and again. An answer over the quota holds no records (throttle.go).
//   - Any gateway serves any partition; there are no preferred read replicas.
//   - READ_COMMITTED (v4+): each read is cut at the partition's last stable offset (the first
//     offset of its oldest open transaction, Storage.Stable), which is the LastStableOffset
//     answered, and the aborted transactions in the records read are listed, so the client
//     drops their records.
//
// Not implemented:
//   - Fetch sessions (KIP-227): no session is created. A full fetch (session epoch 0 or -1, with
//     any session id) is served and answered with session id 0, which tells the client that the
//     broker made no session, so it goes on sending full fetches; an incremental fetch (any
//     other epoch) names a session the gateway does not hold and gets FETCH_SESSION_ID_NOT_FOUND
//     with no topics, as Kafka answers an unknown session. A session would pin per-client state
//     to one gateway for a saving of request bytes only: the answer is the same either way.
//   - v13+ (topic IDs), leader epoch fencing (every partition is at epoch 0).
func init() { regKey(fetchKey, 0, 12) }

const maxFetchWait = 30 * time.Second

func (c *conn) handleFetch(req *request) (kmsg.Response, error) {
	freq := req.kreq.(*kmsg.FetchRequest)
	resp := freq.ResponseKind().(*kmsg.FetchResponse)
	if freq.Version >= 7 && freq.SessionEpoch != 0 && freq.SessionEpoch != -1 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		req.setErr(resp.ErrorCode)
		return resp, nil
	}
	maxBytes := int64(math.MaxInt32)
	if freq.Version >= 3 && freq.MaxBytes > 0 {
		maxBytes = int64(freq.MaxBytes)
	}
	maxBytes = min(maxBytes, c.s.cfg.FetchMaxBytes)
	if q := c.s.cfg.Quotas; q != nil {
		user, cid := quotaNames(req)
		if most, ok := q.MaxInWindow(quota.ConsumerByteRate, user, cid); ok {
			maxBytes = max(min(maxBytes, int64(most/2)), 1)
		}
	}
	clk := c.s.clock
	wait := min(time.Duration(max(freq.MaxWaitMillis, 0))*time.Millisecond, maxFetchWait)
	deadline := clk.Now().Add(wait)

	var parts []fetchPart
	for _, rt := range freq.Topics {
		for _, rp := range rt.Partitions {
			limit := max(min(int64(rp.PartitionMaxBytes), maxBytes), 1)
			parts = append(parts, fetchPart{topic: rt.Topic, partition: rp.Partition, next: rp.FetchOffset, limit: limit,
				committed: freq.Version >= 4 && freq.IsolationLevel == 1})
		}
	}
	req.release = append(req.release, func() {
		for i := range parts {
			parts[i].drop()
		}
	})
	total := c.readParts(req, freq.Version, parts, maxBytes, 0)
	for !failed(parts) && total < int64(freq.MinBytes) && total < maxBytes && clk.Now().Before(deadline) {
		waitStart := clk.Now()
		woke := c.waitAny(req.ctx, req.storage, waitPoints(parts), deadline)
		req.waited += clk.Now().Sub(waitStart)
		// Read again: after a wake for the data that came, after the deadline (or on shutdown)
		// so that the watermarks are fresh.
		total = c.readParts(req, freq.Version, parts, maxBytes, total)
		if !woke {
			break
		}
	}

	records := 0
	k := 0
	resp.Topics = make([]kmsg.FetchResponseTopic, 0, len(freq.Topics))
	for _, rt := range freq.Topics {
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(rt.Partitions))
		for range rt.Partitions {
			fp := &parts[k]
			k++
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = fp.partition
			// librdkafka refuses a null record set (size -1), which is what a nil slice encodes
			// to before the flexible versions; an empty answer must be zero bytes.
			sp.RecordBatches = noRecords
			if fp.err != nil {
				sp.ErrorCode = errCode(fp.err)
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			} else {
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = fp.hw, fp.lso, fp.logStart
				if len(fp.records) > 0 {
					sp.RecordBatches = fp.records
				}
				if fp.committed {
					sp.AbortedTransactions = make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, 0, len(fp.aborted))
					for _, a := range fp.aborted {
						at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
						at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
						sp.AbortedTransactions = append(sp.AbortedTransactions, at)
					}
				}
			}
			req.setErr(sp.ErrorCode)
			if freq.Version >= 4 {
				records += countRecords(sp.RecordBatches)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if o := c.s.cfg.Observer; o != nil && records > 0 {
		o.RecordsFetched(records)
	}
	return resp, nil
}

// fetchPart is what one fetch holds of one partition while it waits for MinBytes: the records
// read so far, where the next read starts (after them), and the partition's last watermarks.
type fetchPart struct {
	topic     string
	partition int32
	next      int64 // the fetch offset, then the offset after the records held
	limit     int64 // the partition's limit, within the request's
	records   []byte
	release   func() // hands records' buffer back; nil once records is the handler's own copy
	// full says no more records may be added: the partition's limit is reached, or data it
	// returned did not fit the request's.
	full                bool
	hw, lso, logStart   int64
	err                 error
	readOffset, readLim int64 // this round's read
	res                 FetchResult
	readErr             error
	// committed: a READ_COMMITTED read, cut at the last stable offset; aborted are the aborted
	// transactions of what it holds.
	committed bool
	aborted   []AbortedTxn
}

// stable cuts this round's read at the partition's last stable offset and adds the aborted
// transactions it holds.
func (p *fetchPart) stable(req *request) error {
	res := &p.res
	lso, aborted, err := req.storage.Stable(req.ctx, p.topic, p.partition, p.readOffset, res.HighWatermark)
	if err != nil {
		if res.Release != nil {
			res.Release()
		}
		*res = FetchResult{}
		return err
	}
	res.LastStableOffset = lso
	res.Records = batchesBelow(res.Records, lso)
	for _, a := range aborted {
		if !slices.Contains(p.aborted, a) {
			p.aborted = append(p.aborted, a)
		}
	}
	return nil
}

// batchesBelow is the leading magic-2 batches of records whose base offset is below end.
func batchesBelow(records []byte, end int64) []byte {
	at := 0
	for len(records)-at >= 12 {
		base := int64(binary.BigEndian.Uint64(records[at:]))
		n := int(binary.BigEndian.Uint32(records[at+8:])) + 12
		if base >= end || n <= 12 || n > len(records)-at {
			break
		}
		at += n
	}
	return records[:at]
}

func (p *fetchPart) drop() {
	if p.release != nil {
		p.release()
		p.release = nil
	}
	p.records = nil
}

func failed(parts []fetchPart) bool {
	for i := range parts {
		if parts[i].err != nil {
			return true
		}
	}
	return false
}

type waitPoint struct {
	topic     string
	partition int32
	offset    int64
}

// waitPoints are the places new data would add to the answer: the offset after what each
// partition holds, for the partitions that may take more.
func waitPoints(parts []fetchPart) []waitPoint {
	var points []waitPoint
	for i := range parts {
		if p := &parts[i]; p.err == nil && !p.full {
			points = append(points, waitPoint{p.topic, p.partition, p.next})
		}
	}
	return points
}

// readParts reads every partition from where it stands and adds what came to what it holds,
// returning the bytes held in all. total is what was held before. The partitions are read in
// parallel, each up to what is left of its own limit, then taken in request order while the
// request limit allows; data that no longer fits is dropped (the client asks again) and its
// partition takes no more, except that the first data is always kept whole. A partition that
// is full is asked for its watermarks only, and so is every partition once the records read
// reach the request's limit.
func (c *conn) readParts(req *request, version int16, parts []fetchPart, maxBytes, total int64) int64 {
	do := func(p *fetchPart) {
		p.res, p.readErr = req.storage.Fetch(req.ctx, p.topic, p.partition, p.readOffset, int32(p.readLim), version)
		if p.readErr == nil && p.committed {
			p.readErr = p.stable(req)
		}
	}
	// plan sets p's read: up to what is left of its own limit and of room, the bytes the
	// request may still take as far as the reads before it go; none (watermarks only) when it
	// is full or nothing is left.
	plan := func(p *fetchPart, room int64) {
		p.readOffset, p.readLim = p.next, 0
		if !p.full && room > 0 {
			p.readLim = min(p.limit-int64(len(p.records)), room)
		}
	}
	var live []*fetchPart
	for i := range parts {
		if parts[i].err == nil {
			live = append(live, &parts[i])
		}
	}
	if len(live) == 1 {
		plan(live[0], maxBytes-total)
		do(live[0])
	} else {
		// Waves of up to maxParallelReads partitions, in request order. A wave's reads together
		// ask for no more than the room the records read before it left, as Kafka reads one
		// partition after another with what is left of the request's limit: a fetch of many
		// partitions full of data reads about what it answers, not up to maxParallelReads
		// partition limits of which it would drop all but the first few. Once the room is
		// spent, the partitions left are asked for their watermarks only (limit 0), still in
		// waves. A read may come back over its share by one batch (the first is whole); what
		// does not fit is dropped below, and the records read count against the room all the
		// same.
		got := total
		for at := 0; at < len(live); {
			wave := live[at:at]
			planned := got
			for at < len(live) && len(wave) < maxParallelReads {
				p := live[at]
				plan(p, maxBytes-planned)
				wave = live[at-len(wave) : at+1]
				at++
				planned += p.readLim
				if p.readLim > 0 && planned >= maxBytes {
					break
				}
			}
			var wg sync.WaitGroup
			for i, p := range wave {
				if i < len(wave)-1 {
					wg.Go(func() { do(p) })
				}
			}
			// The last one on this goroutine, whose stack has grown already: a goroutine
			// fewer to start, and to grow, per wave.
			do(wave[len(wave)-1])
			wg.Wait()
			for _, p := range wave {
				got += int64(len(p.res.Records))
			}
		}
	}
	for _, p := range live {
		res := p.res
		p.res = FetchResult{}
		if p.readErr != nil {
			p.drop()
			p.err = p.readErr
			p.full = true
			continue
		}
		p.hw, p.lso, p.logStart = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
		if len(res.Records) == 0 {
			if res.Release != nil {
				res.Release()
			}
			if p.readLim > 0 && p.hw > p.next {
				// Nothing came although there is more: this partition cannot make progress.
				p.full = true
			}
			continue
		}
		fits := total == 0 || int64(len(res.Records)) <= maxBytes-total
		if len(p.records) > 0 && int64(len(p.records)+len(res.Records)) > p.limit {
			fits = false
		}
		if !fits {
			if res.Release != nil {
				res.Release()
			}
			p.full = true
			continue
		}
		if len(p.records) == 0 {
			p.records, p.release = res.Records, res.Release
		} else {
			merged := make([]byte, 0, len(p.records)+len(res.Records))
			merged = append(append(merged, p.records...), res.Records...)
			p.drop()
			if res.Release != nil {
				res.Release()
			}
			p.records = merged
		}
		total += int64(len(res.Records))
		if end, ok := recordsEnd(res.Records); ok {
			p.next = end
		} else {
			p.full = true // records that do not tell where they end cannot be read on from
		}
		if int64(len(p.records)) >= p.limit {
			p.full = true
		}
	}
	return total
}

// recordsEnd is the offset after the last record of fetched records: magic-2 batches, or magic
// 0/1 message sets, whose entries both start with their offset and size (a magic 0/1 entry,
// compressed or not, carries the offset of its last record). ok is false for bytes that do not
// parse that way.
func recordsEnd(b []byte) (end int64, ok bool) {
	be := binary.BigEndian
	for len(b) > 0 {
		if len(b) <= magicAt {
			return 0, false
		}
		size := int64(int32(be.Uint32(b[8:])))
		if size < 5 || size > int64(len(b)-12) {
			return 0, false
		}
		end = int64(be.Uint64(b)) + 1
		if b[magicAt] == 2 {
			if size < 15 {
				return 0, false
			}
			end += int64(int32(be.Uint32(b[23:])))
		}
		b = b[12+size:]
	}
	return end, true
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

// maxFetchWaiters bounds the goroutines one long poll starts to watch partitions: a request
// naming thousands of partitions, or one partition thousands of times, costs no more.
const maxFetchWaiters = 16

// waitAny blocks until one of the points may have new data (true), or until the deadline
// passes on the server's clock, the server starts shutting down or ctx ends (false). Without
// points it waits for the deadline. It watches each partition once, from the lowest offset
// asked, and at most maxFetchWaiters partitions.
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
	if o := c.s.cfg.Observer; capped && o != nil {
		o.FetchWaitCapped()
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := c.s.clock.AfterFunc(deadline.Sub(c.s.clock.Now()), cancel)
	defer timer.Stop()
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.s.draining:
			cancel()
		case <-wctx.Done():
		}
	})
	if len(watch) == 0 {
		<-wctx.Done()
		cancel()
		wg.Wait()
		return false
	}
	woke := make(chan struct{}, len(watch))
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
