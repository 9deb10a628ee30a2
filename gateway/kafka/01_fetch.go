package kafka

import (
	"context"
	"math"
	"sync"
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
//   - Long poll: while the answer holds fewer than MinBytes and MaxWaitMillis (capped at 30 s) has
//     not passed, the handler waits for new data in the partitions that returned none and reads
//     again. An error in any partition answers at once.
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
	deadline := time.Now().Add(wait)

	for {
		total, failed, empty := c.fetchOnce(req, freq, resp, maxBytes)
		if total >= int64(freq.MinBytes) || failed || len(empty) == 0 || !time.Now().Before(deadline) {
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
		sem := make(chan struct{}, maxParallelReads)
		var wg sync.WaitGroup
		for i := range reads {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				do(&reads[i])
			})
		}
		wg.Wait()
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
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = r.partition
			// librdkafka refuses a null record set (size -1), which is what a nil slice encodes
			// to before the flexible versions; an empty answer must be zero bytes.
			sp.RecordBatches = noRecords
			if r.err != nil {
				sp.ErrorCode = errCode(r.err)
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
				failed = true
				st.Partitions = append(st.Partitions, sp)
				continue
			}
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

var noRecords = []byte{}

// maxParallelReads bounds the Storage reads one fetch runs at once.
const maxParallelReads = 8

func (c *conn) releaseAll(req *request) {
	for _, f := range req.release {
		f()
	}
	req.release = req.release[:0]
}

// waitAny blocks until one of the points may have new data (true) or the deadline or ctx ends
// (false).
func (c *conn) waitAny(ctx context.Context, b Storage, points []waitPoint, deadline time.Time) bool {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	go func() {
		select {
		case <-c.s.draining:
			cancel()
		case <-wctx.Done():
		}
	}()
	woke := make(chan struct{}, len(points))
	var wg sync.WaitGroup
	for _, p := range points {
		wg.Go(func() {
			b.Wait(wctx, p.topic, p.partition, p.offset)
			woke <- struct{}{}
		})
	}
	<-woke
	ok := wctx.Err() == nil
	cancel()
	wg.Wait()
	return ok
}
