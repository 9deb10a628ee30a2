package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce: v0-12
//
// Behavior:
//   - acks 0, 1 and -1 are the same write: the store acknowledges once, there are no replicas to
//     wait for. acks=0 gets no response.
//   - TimeoutMillis bounds the write, as it bounds Kafka's wait for replicas: a write that has no
//     answer from Iggy by then is REQUEST_TIMED_OUT, and its Iggy connection is reset (package
//     iggy), so the write cannot reach Iggy later, after the client gave the request up and
//     sent it again through another gateway (a network partition that heals).
//   - Every partition goes to the Storage as the client's bytes; the Storage checks CRCs, sizes
//     and idempotent sequences. v3+ carry magic-2 batches (anything else is INVALID_RECORD, as
//     in Kafka); v0-2 carry magic 0/1 message sets, which the Storage turns into one magic-2
//     batch per partition as Kafka converts them for a magic-2 log.
//   - v0-2 are served, not only listed. Kafka 4.0 dropped them but still lists Produce from v0
//     (KAFKA-18659), because librdkafka before 2.11.1 compresses with gzip or snappy only when
//     the broker lists Produce v0, and otherwise sends those batches uncompressed without a
//     word; a client that chooses v0-2 from that list (sarama at protocol 0.10, franz-go pinned
//     to 0.10.2) would then hang or fail. Serving what is listed keeps both working.
//   - Partitions of one request are written in parallel; writes to the same partition from one
//     connection stay in the order the requests arrived, which pipelined idempotent producers need.
//   - Any gateway accepts any partition: there is no NOT_LEADER_OR_FOLLOWER.
//   - A partition holding a transactional batch is checked against the producer's open
//     transaction first, at the gateway coordinating its transactional id (KIP-890 part 1: an
//     AddPartitionsToTxn v4 verify-only batch when that is another gateway, once per request):
//     a partition not added to it is INVALID_TXN_STATE, a fenced epoch INVALID_PRODUCER_EPOCH,
//     another producer id INVALID_PRODUCER_ID_MAPPING, a coordinator moving or unreachable
//     NOT_ENOUGH_REPLICAS (retried); nothing of such a partition is stored.
//   - From v12 (transactions v2, KIP-890 part 2) the partitions are added to the producer's
//     transaction instead of checked (an AddPartitionsToTxn v4 batch that is not verify-only
//     when another gateway coordinates the id), beginning one when none is open; while the
//     transaction's previous end is being written the answer is NOT_ENOUGH_REPLICAS, which the
//     producer retries. As at Kafka's brokers this follows the request version, not the
//     transaction.version feature (clients send v12 in a transaction only under v2).
//
// Not implemented:
//   - v13 (topic IDs).
//   - Transactions without a Config.Txns: a produce with a transactional id, or holding a
//     transactional batch, is TRANSACTIONAL_ID_AUTHORIZATION_FAILED. With one, transactional
//     batches are stored (the Storage keeps their producer and marks them) and the coordinator
//     writes their markers.
func init() { regKey(produceKey, 0, 12) }

func (c *conn) handleProduce(req *request) (kmsg.Response, error) {
	preq := req.kreq.(*kmsg.ProduceRequest)
	resp := preq.ResponseKind().(*kmsg.ProduceResponse)

	var jobs []produceJob
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(preq.Topics))
	for i := range preq.Topics {
		rt := &preq.Topics[i]
		st := &resp.Topics[i]
		*st = kmsg.NewProduceResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(rt.Partitions))
		for j := range rt.Partitions {
			sp := &st.Partitions[j]
			*sp = kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rt.Partitions[j].Partition
			// Kafka's answer for a partition not written carries no offset (-1); a client that
			// takes an error as success (franz-go does for DUPLICATE_SEQUENCE_NUMBER) must not
			// read offset 0 from it. produceOne sets the offset of a write.
			sp.BaseOffset = -1
			tp := topicPartition{rt.Topic, sp.Partition}
			ticket, first := req.order[tp]
			// A partition listed twice in one request is written once; the other copy is an
			// invalid request, as in Kafka.
			delete(req.order, tp)
			jobs = append(jobs, produceJob{tp: tp, records: rt.Partitions[j].Records, out: sp, ticket: ticket, duplicate: !first})
		}
	}

	if c.s.cfg.Txns != nil {
		c.verifyTransactional(req.ctx, preq, jobs)
	}
	ctx := req.ctx
	if preq.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(preq.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	var records atomic.Int64
	if len(jobs) == 1 {
		records.Add(int64(c.produceOne(ctx, req, preq, jobs[0])))
	} else {
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() { records.Add(int64(c.produceOne(ctx, req, preq, j))) })
		}
		wg.Wait()
	}

	for i := range resp.Topics {
		for j := range resp.Topics[i].Partitions {
			req.setErr(resp.Topics[i].Partitions[j].ErrorCode)
		}
	}
	if o := c.s.cfg.Observer; o != nil && records.Load() > 0 {
		o.RecordsProduced(int(records.Load()))
	}
	if preq.Acks == 0 {
		if req.errCode != 0 {
			// No answer goes to an acks=0 producer: closing is the only way it learns.
			return nil, fmt.Errorf("acks=0 produce refused: %w", kerr.ErrorForCode(req.errCode))
		}
		return nil, nil
	}
	return resp, nil
}

type produceJob struct {
	tp        topicPartition
	records   []byte
	out       *kmsg.ProduceResponseTopicPartition
	ticket    orderTicket
	duplicate bool
	// refuse is the code of a transactional write its transaction does not hold (0: none).
	refuse int16
}

// verifyTransactional checks the partitions of preq that hold a transactional batch against the
// producer's open transaction (KIP-890 part 1, TxnCoordinator.VerifyProduce) and marks those it
// does not hold to be refused, nothing stored: a batch for a partition the producer did not add
// (AddPartitionsToTxn) is INVALID_TXN_STATE, as in Kafka, instead of a transaction left open on
// the partition that no marker ends.
func (c *conn) verifyTransactional(ctx context.Context, preq *kmsg.ProduceRequest, jobs []produceJob) {
	parts := map[string][]int32{}
	var pid int64
	var epoch int16
	found := false
	for _, j := range jobs {
		if j.duplicate || reservedTopic(j.tp.topic) {
			// Refused anyway (produceOne): nothing of it is added to a transaction.
			continue
		}
		if p, e, ok := transactionalProducer(j.records); ok {
			parts[j.tp.topic] = append(parts[j.tp.topic], j.tp.partition)
			pid, epoch, found = p, e, true
		}
	}
	if !found {
		return
	}
	var txnID string
	if preq.TransactionID != nil {
		txnID = *preq.TransactionID
	}
	// From v12 (transactions v2) the produce adds its partitions to the transaction, as
	// Kafka's does whatever the transaction.version feature: the client sends no
	// AddPartitionsToTxn.
	codes := c.s.cfg.Txns.VerifyProduce(ctx, txnID, pid, epoch, parts, preq.Version >= 12)
	for i := range jobs {
		j := &jobs[i]
		if code, ok := codes[j.tp.topic][j.tp.partition]; ok && code != 0 {
			if _, _, txnl := transactionalProducer(j.records); txnl {
				j.refuse = code
			}
		}
	}
}

// transactionalProducer is the producer id and epoch of the first transactional magic-2 batch in
// records; false when it holds none.
func transactionalProducer(records []byte) (int64, int16, bool) {
	const headerLen, attrAt, pidAt, epochAt, attrTransactional = 61, 21, 43, 51, 0x10
	for b := records; len(b) >= headerLen && b[magicAt] == 2; {
		if binary.BigEndian.Uint16(b[attrAt:])&attrTransactional != 0 {
			return int64(binary.BigEndian.Uint64(b[pidAt:])), int16(binary.BigEndian.Uint16(b[epochAt:])), true
		}
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < headerLen-12 || length+12 > int64(len(b)) {
			break
		}
		b = b[12+length:]
	}
	return 0, 0, false
}

// produceOne writes one partition once the same connection's earlier writes to it are done, and
// returns the number of records written.
func (c *conn) produceOne(ctx context.Context, req *request, preq *kmsg.ProduceRequest, j produceJob) int {
	if j.duplicate {
		j.out.ErrorCode = kerr.InvalidRequest.Code
		return 0
	}
	defer c.produceDone(j.tp, j.ticket)
	if j.ticket.before != nil {
		select {
		case <-j.ticket.before:
		case <-ctx.Done():
			j.out.ErrorCode = kerr.RequestTimedOut.Code
			return 0
		}
	}
	switch {
	case c.s.cfg.Txns == nil && (preq.TransactionID != nil || hasTransactionalBatch(j.records)):
		j.out.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return 0
	case j.refuse != 0:
		j.out.ErrorCode = j.refuse
		return 0
	case reservedTopic(j.tp.topic):
		j.out.ErrorCode = kerr.InvalidTopicException.Code
		return 0
	case len(j.records) == 0:
		j.out.ErrorCode = kerr.CorruptMessage.Code
		return 0
	case preq.Version >= 3 && (len(j.records) <= magicAt || j.records[magicAt] != 2):
		j.out.ErrorCode = kerr.InvalidRecord.Code
		return 0
	}
	res, err := req.storage.Produce(ctx, j.tp.topic, j.tp.partition, j.records)
	if err != nil {
		j.out.ErrorCode = errCode(err)
		j.out.ErrorMessage = errMessage(err)
		return 0
	}
	j.out.BaseOffset = res.BaseOffset
	j.out.LogAppendTime = res.LogAppendTime
	j.out.LogStartOffset = res.LogStartOffset
	return countRecords(j.records)
}

// magicAt is where a record batch, and a magic 0/1 message, has its magic byte.
const magicAt = 16

// countRecords sums the record counts of the magic-2 batches in b, for metrics; it stops at
// anything that does not look like one.
func countRecords(b []byte) int {
	const headerLen = 61
	n := 0
	for len(b) >= headerLen {
		length := int64(int32(binary.BigEndian.Uint32(b[8:])))
		if length < headerLen-12 || length+12 > int64(len(b)) || b[magicAt] != 2 {
			break
		}
		n += int(int32(binary.BigEndian.Uint32(b[57:])))
		b = b[12+length:]
	}
	return n
}

// hasTransactionalBatch reports whether records (magic-2 batches) hold a batch with the
// transactional bit; what does not parse is left to the Storage to refuse.
func hasTransactionalBatch(records []byte) bool {
	const attrAt, attrTransactional = 21, 0x10
	for len(records) >= attrAt+2 {
		if records[magicAt] == 2 && binary.BigEndian.Uint16(records[attrAt:])&attrTransactional != 0 {
			return true
		}
		n := int(binary.BigEndian.Uint32(records[8:])) + 12
		if n <= 12 || n > len(records) {
			return false
		}
		records = records[n:]
	}
	return false
}
