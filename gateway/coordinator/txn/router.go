package txn

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
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
	// Manager returns the group manager serving the group here, or the code to answer, as for
	// a group request (TxnOffsetCommit checks the member there).
	Manager(group string) (*group.Manager, int16)
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

// maxMetadata is the longest offset metadata taken, as OffsetCommit takes it (Kafka's
// offset.metadata.max.bytes).
const maxMetadata = 4096

// TxnOffsetCommit checks the member against the group here (KIP-447), then stages the offsets in
// the producer's transaction, which this gateway must coordinate too.
func (r *Router) TxnOffsetCommit(ctx context.Context, id kafka.Identity, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitResponse, error) {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	codes := make([][]int16, len(req.Topics))
	for i, t := range req.Topics {
		codes[i] = make([]int16, len(t.Partitions))
	}
	answer := func() *kmsg.TxnOffsetCommitResponse {
		for i, t := range req.Topics {
			rt := kmsg.NewTxnOffsetCommitResponseTopic()
			rt.Topic = t.Topic
			for j, p := range t.Partitions {
				rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, codes[i][j]
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	all := func(code int16) *kmsg.TxnOffsetCommitResponse {
		for i := range codes {
			for j := range codes[i] {
				if codes[i][j] == 0 {
					codes[i][j] = code
				}
			}
		}
		return answer()
	}
	if req.Group == "" {
		return all(kerr.InvalidGroupID.Code), nil
	}
	gm, code := r.d.Manager(req.Group)
	if gm == nil {
		return all(code), nil
	}
	gen := req.Generation
	if req.Version < 3 {
		gen = -1 // v0-2 carry no member: the producer commits as Kafka's pre-KIP-447 clients do
	}
	code, stale := gm.TxnCommitCheck(group.TxnCommit{Group: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID, Generation: gen})
	if code != 0 {
		return all(code), nil
	}
	names := make([]string, len(req.Topics))
	for i, t := range req.Topics {
		names[i] = t.Topic
	}
	tcodes, tparts := group.TxnCommitTopics(ctx, id, names)
	var offsets []record.TxnOffset
	for i, t := range req.Topics {
		for j, p := range t.Partitions {
			switch {
			case tcodes[t.Topic] != 0:
				codes[i][j] = tcodes[t.Topic]
			case tparts != nil && (p.Partition < 0 || p.Partition >= tparts[t.Topic]):
				codes[i][j] = kerr.UnknownTopicOrPartition.Code
			case p.Metadata != nil && len(*p.Metadata) > maxMetadata:
				codes[i][j] = kerr.OffsetMetadataTooLarge.Code
			case stale != nil && stale(t.Topic, p.Partition) != 0:
				codes[i][j] = stale(t.Topic, p.Partition)
			default:
				o := record.TxnOffset{Group: req.Group, Topic: t.Topic, Partition: p.Partition, Offset: p.Offset, LeaderEpoch: -1}
				if req.Version >= 2 {
					o.LeaderEpoch = p.LeaderEpoch
				}
				if p.Metadata != nil {
					o.Metadata = *p.Metadata
				}
				offsets = append(offsets, o)
			}
		}
	}
	if len(offsets) == 0 {
		return answer(), nil
	}
	if len(req.TransactionalID) == 0 || len(req.TransactionalID) > MaxIDLength {
		return all(kerr.InvalidRequest.Code), nil
	}
	m, code := r.d.Txns(req.TransactionalID)
	if m == nil {
		// The group is here and the transaction elsewhere (or loading): the client asks again.
		if code == kerr.NotCoordinator.Code {
			code = kerr.CoordinatorNotAvailable.Code
		}
		return all(code), nil
	}
	return all(codeFor(m.StageOffsets(req.TransactionalID, req.ProducerID, req.ProducerEpoch, offsets), req.Version, 3)), nil
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
