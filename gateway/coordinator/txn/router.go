package txn

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// Directory tells a Router which Manager serves a transactional id here.
type Directory interface {
	// Txns returns the manager serving the id's log partition here, or the code to answer
	// (NOT_COORDINATOR when another gateway owns it, COORDINATOR_LOAD_IN_PROGRESS while it loads).
	Txns(transactionalID string) (*Manager, int16)
	// AllTxns lists every manager serving here (ListTransactions asks each).
	AllTxns() []*Manager
}

// Router is a gateway's kafka.TxnCoordinator over a Directory: it turns the Kafka requests into
// Manager calls and the Manager's errors into the codes each request version knows.
type Router struct{ d Directory }

var _ kafka.TxnCoordinator = (*Router)(nil)

// NewRouter returns the transaction coordinator that routes every id to its Manager.
func NewRouter(d Directory) *Router { return &Router{d: d} }

// codeFor is err's Kafka code; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for versions before
// fencedFrom, which predate the code (KIP-588).
func codeFor(err error, version, fencedFrom int16) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.UnknownServerError.Code
	}
	if ke == kerr.ProducerFenced && version < fencedFrom {
		return kerr.InvalidProducerEpoch.Code
	}
	return ke.Code
}

func (r *Router) InitProducerID(_ context.Context, _ kafka.Identity, req *kmsg.InitProducerIDRequest) (*kmsg.InitProducerIDResponse, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = NoProducer, NoProducer
	id := *req.TransactionalID
	if len(id) == 0 || len(id) > MaxIDLength {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	m, code := r.d.Txns(id)
	if m == nil {
		resp.ErrorCode = code
		return resp, nil
	}
	pid, epoch, err := m.InitProducerID(id, time.Duration(req.TransactionTimeoutMillis)*time.Millisecond, req.ProducerID, req.ProducerEpoch)
	resp.ErrorCode = codeFor(err, req.Version, 4)
	if err == nil {
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	return resp, nil
}

func (r *Router) AddPartitionsToTxn(ctx context.Context, id kafka.Identity, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	answer := func(codeOf func(topic string, p int32) int16) *kmsg.AddPartitionsToTxnResponse {
		for _, t := range req.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, codeOf(t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	all := func(code int16) *kmsg.AddPartitionsToTxnResponse {
		return answer(func(string, int32) int16 { return code })
	}
	m, code := r.d.Txns(req.TransactionalID)
	if m == nil {
		return all(code), nil
	}
	// A partition that does not exist fails the request, and Kafka answers the others
	// OPERATION_NOT_ATTEMPTED: nothing is added.
	missing := map[string]map[int32]bool{}
	var parts []record.TxnTopic
	for _, t := range req.Topics {
		var count int32 = -1
		if id.Storage != nil {
			if ti, err := id.Storage.Topic(ctx, t.Topic, false); err == nil {
				count = ti.Partitions
			}
		}
		tp := record.TxnTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			if id.Storage != nil && (p < 0 || p >= count) {
				if missing[t.Topic] == nil {
					missing[t.Topic] = map[int32]bool{}
				}
				missing[t.Topic][p] = true
			}
			tp.Partitions = append(tp.Partitions, p)
		}
		parts = append(parts, tp)
	}
	if len(missing) > 0 {
		return answer(func(topic string, p int32) int16 {
			if missing[topic][p] {
				return kerr.UnknownTopicOrPartition.Code
			}
			return kerr.OperationNotAttempted.Code
		}), nil
	}
	err := m.AddPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, parts)
	return all(codeFor(err, req.Version, 2)), nil
}

func (r *Router) AddOffsetsToTxn(_ context.Context, _ kafka.Identity, req *kmsg.AddOffsetsToTxnRequest) (*kmsg.AddOffsetsToTxnResponse, error) {
	resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
	m, code := r.d.Txns(req.TransactionalID)
	if m == nil {
		resp.ErrorCode = code
		return resp, nil
	}
	resp.ErrorCode = codeFor(m.AddGroup(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group), req.Version, 2)
	return resp, nil
}

func (r *Router) EndTxn(_ context.Context, _ kafka.Identity, req *kmsg.EndTxnRequest) (*kmsg.EndTxnResponse, error) {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	m, code := r.d.Txns(req.TransactionalID)
	if m == nil {
		resp.ErrorCode = code
		return resp, nil
	}
	resp.ErrorCode = codeFor(m.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit), req.Version, 2)
	return resp, nil
}

func (r *Router) DescribeTransactions(_ context.Context, _ kafka.Identity, req *kmsg.DescribeTransactionsRequest) (*kmsg.DescribeTransactionsResponse, error) {
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	for _, id := range req.TransactionalIDs {
		st := kmsg.NewDescribeTransactionsResponseTransactionState()
		st.TransactionalID, st.ProducerID, st.ProducerEpoch, st.StartTimestamp = id, NoProducer, NoProducer, -1
		m, code := r.d.Txns(id)
		switch {
		case m == nil:
			st.ErrorCode = code
		default:
			t, ok := m.Describe(id)
			if !ok {
				st.ErrorCode = kerr.TransactionalIDNotFound.Code
				break
			}
			st.State, st.TimeoutMillis = t.State.String(), int32(t.Timeout.Milliseconds())
			st.ProducerID, st.ProducerEpoch = t.ProducerID, t.Epoch
			if !t.Started.IsZero() {
				st.StartTimestamp = t.Started.UnixMilli()
			}
			for _, tp := range t.Partitions {
				rt := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
				rt.Topic, rt.Partitions = tp.Topic, tp.Partitions
				st.Topics = append(st.Topics, rt)
			}
		}
		resp.TransactionStates = append(resp.TransactionStates, st)
	}
	return resp, nil
}

// knownStates are the state names ListTransactions filters by, as Kafka spells them.
var knownStates = map[string]bool{"Empty": true, "Ongoing": true, "PrepareCommit": true, "PrepareAbort": true,
	"CompleteCommit": true, "CompleteAbort": true, "Dead": true, "PrepareEpochFence": true}

func (r *Router) ListTransactions(_ context.Context, _ kafka.Identity, req *kmsg.ListTransactionsRequest) (*kmsg.ListTransactionsResponse, error) {
	resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
	states := map[string]bool{}
	for _, s := range req.StateFilters {
		if !knownStates[s] {
			resp.UnknownStateFilters = append(resp.UnknownStateFilters, s)
		}
		states[s] = true
	}
	pids := map[int64]bool{}
	for _, p := range req.ProducerIDFilters {
		pids[p] = true
	}
	for _, m := range r.d.AllTxns() {
		now := m.clk.Now()
		for _, t := range m.List() {
			if len(states) > 0 && !states[t.State.String()] || len(pids) > 0 && !pids[t.ProducerID] {
				continue
			}
			// v1: only transactions open longer than the duration (-1 or 0: every one).
			if d := req.DurationFilterMillis; d > 0 && (t.State != record.TxnOngoing || now.Sub(t.Started) < time.Duration(d)*time.Millisecond) {
				continue
			}
			st := kmsg.NewListTransactionsResponseTransactionState()
			st.TransactionalID, st.ProducerID, st.TransactionState = t.ID, t.ProducerID, t.State.String()
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
	}
	return resp, nil
}
