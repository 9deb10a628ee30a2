package txn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
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
	// LogPartition returns the group manager serving coordinator log partition p here, or the
	// code to answer (WriteTxnMarkers for GroupsTopic).
	LogPartition(p int) (*group.Manager, int16)
	// Peer sends req to the gateway that serves coordinator log partition p, at the address
	// it announced; an error when none is known or it cannot be reached.
	Peer(ctx context.Context, p int, req kmsg.Request) (kmsg.Response, error)
	// Mark writes a transaction's marker on a data partition (WriteTxnMarkers).
	Mark(ctx context.Context, topic string, partition int32, producerID int64, epoch int16, commit bool) error
}

// Router is a gateway's kafka.TxnCoordinator over a Directory: it turns the Kafka requests into
// Manager calls and the Manager's errors into the codes each request version knows.
type Router struct {
	d   Directory
	clk clock.Clock
}

var _ kafka.TxnCoordinator = (*Router)(nil)

// NewRouter returns the transaction coordinator that routes every id to its Manager; clk (nil:
// the wall clock) paces the retries of an implicit add.
func NewRouter(d Directory, clk clock.Clock) *Router { return &Router{d: d, clk: clock.Or(clk)} }

// The implicit add of transactions v2 (a Produce v12, a TxnOffsetCommit v5) waits while the
// transaction's previous end is being written (CONCURRENT_TRANSACTIONS), as Kafka's brokers retry
// it (add.partitions.to.txn.retry.backoff.ms, .max.ms 100 ms): the client produces for its next
// transaction as soon as EndTxn v5 answers, and a partition refused while a later request of the
// same producer gets through would make that one's sequence out of order. Past addWait the
// refusal is answered, which the client retries. The first retry comes after 2 ms, not Kafka's
// 20: an end's markers and Complete record are written within a few milliseconds here, and the
// wait is the Produce's (a quarter of the benchmark's transactional wall time went to 20 ms
// waits, docs/transactions.md "Performance"); it doubles up to addBackoffMax.
const (
	addBackoff    = 2 * time.Millisecond
	addBackoffMax = 100 * time.Millisecond
	addWait       = 5 * time.Second
)

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

// AddPartitionsToTxn adds partitions to a producer's transaction: v0-3 one transaction (a
// client's), v4 batches of them (gateways', authorized as CLUSTER_ACTION by the handler), whose
// VerifyOnly ones only ask whether the partitions are in the open transaction (Manager.Check).
func (r *Router) AddPartitionsToTxn(ctx context.Context, id kafka.Identity, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	if req.Version < 4 {
		topics := make([]record.TxnTopic, len(req.Topics))
		for i, t := range req.Topics {
			topics[i] = record.TxnTopic{Topic: t.Topic, Partitions: t.Partitions}
		}
		codeOf := r.add(ctx, id, req.TransactionalID, req.ProducerID, req.ProducerEpoch, topics, req.Version)
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
		return resp, nil
	}
	for _, tx := range req.Transactions {
		topics := make([]record.TxnTopic, len(tx.Topics))
		for i, t := range tx.Topics {
			topics[i] = record.TxnTopic{Topic: t.Topic, Partitions: t.Partitions}
		}
		var codeOf func(topic string, p int32) int16
		if tx.VerifyOnly {
			m, code := r.d.Txns(tx.TransactionalID)
			codeOf = func(topic string, p int32) int16 {
				if m == nil {
					return code
				}
				return codeFor(m.Check(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, topic, p), req.Version, 0)
			}
		} else {
			codeOf = r.add(ctx, id, tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, topics, req.Version)
		}
		rtx := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rtx.TransactionalID = tx.TransactionalID
		for _, t := range tx.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition, rp.ErrorCode = p, codeOf(t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			rtx.Topics = append(rtx.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp, nil
}

// add adds topics to the producer's transaction and returns the code of each partition.
func (r *Router) add(ctx context.Context, id kafka.Identity, transactionalID string, producerID int64, epoch int16, topics []record.TxnTopic, version int16) func(topic string, p int32) int16 {
	all := func(code int16) func(string, int32) int16 { return func(string, int32) int16 { return code } }
	m, code := r.d.Txns(transactionalID)
	if m == nil {
		return all(code)
	}
	// A partition that does not exist fails the request, and Kafka answers the others
	// OPERATION_NOT_ATTEMPTED: nothing is added.
	missing := map[string]map[int32]bool{}
	for _, t := range topics {
		var count int32 = -1
		if t.Topic == GroupsTopic {
			// The coordinator log's partitions: a TxnOffsetCommit v5 adds its group's
			// (transactions v2), as Kafka's adds a __consumer_offsets partition.
			for _, p := range t.Partitions {
				if p < 0 || p >= record.Partitions {
					if missing[t.Topic] == nil {
						missing[t.Topic] = map[int32]bool{}
					}
					missing[t.Topic][p] = true
				}
			}
			continue
		}
		if id.Storage != nil {
			if ti, err := id.Storage.Topic(ctx, t.Topic, false); err == nil {
				count = ti.Partitions
			}
		}
		for _, p := range t.Partitions {
			if id.Storage != nil && (p < 0 || p >= count) {
				if missing[t.Topic] == nil {
					missing[t.Topic] = map[int32]bool{}
				}
				missing[t.Topic][p] = true
			}
		}
	}
	if len(missing) > 0 {
		return func(topic string, p int32) int16 {
			if missing[topic][p] {
				return kerr.UnknownTopicOrPartition.Code
			}
			return kerr.OperationNotAttempted.Code
		}
	}
	return all(codeFor(m.AddPartitions(transactionalID, producerID, epoch, topics), version, 2))
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
	resp.ProducerID, resp.ProducerEpoch = NoProducer, NoProducer
	if req.Version >= 5 {
		// Transactions v2: the end bumps the epoch, and the answer says what to go on with.
		pid, epoch, err := m.EndTxnV2(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit)
		resp.ErrorCode = codeFor(err, req.Version, 2)
		if err == nil {
			resp.ProducerID, resp.ProducerEpoch = pid, epoch
		}
		return resp, nil
	}
	resp.ErrorCode = codeFor(m.EndTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit), req.Version, 2)
	return resp, nil
}

// maxMetadata is the longest offset metadata taken, as OffsetCommit takes it (Kafka's
// offset.metadata.max.bytes).
const maxMetadata = 4096

// TxnOffsetCommit checks the member against the group here (KIP-447) and the producer's open
// transaction at its coordinator (Verify), then keeps the offsets in the group's log partition
// until the transaction's marker ends them (group.Manager.StageTxnOffsets).
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
	// The transaction coordinator, wherever it is, must hold the group's log partition in the
	// producer's open transaction (AddOffsetsToTxn added it; from v5, transactions v2, this
	// request adds it, as Kafka's group coordinator has the transaction coordinator add its
	// __consumer_offsets partition); then the offsets are kept here, in the group's log
	// partition, until its marker ends them.
	lp := int32(record.Partition(req.Group))
	guard := gm.TxnGuard(req.ProducerID)
	vcodes, err := r.verify(ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []record.TxnTopic{{Topic: GroupsTopic, Partitions: []int32{lp}}}, req.Version >= 5)
	if err != nil {
		// The transaction coordinator is moving or unreachable: the client asks again.
		return all(kerr.CoordinatorNotAvailable.Code), nil
	}
	if code := vcodes[GroupsTopic][lp]; code != 0 {
		switch {
		case code == kerr.ProducerFenced.Code && req.Version < 3:
			code = kerr.InvalidProducerEpoch.Code
		case code == kerr.ConcurrentTransactions.Code && req.Version >= 5:
			// The transaction's previous end is being written: the client asks again.
			code = kerr.CoordinatorNotAvailable.Code
		case code == kerr.NotCoordinator.Code || code == kerr.CoordinatorLoadInProgress.Code:
			// The transaction's coordinator is moving; this gateway still coordinates the
			// group, so the client must not look for another: it asks again.
			code = kerr.CoordinatorNotAvailable.Code
		}
		return all(code), nil
	}
	return all(codeFor(gm.StageTxnOffsets(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group, offsets, guard), req.Version, 3)), nil
}

// Verify asks the transaction coordinator of the id, here or at the gateway that serves its
// log partition (an AddPartitionsToTxn v4 verify-only batch, as Kafka's brokers ask each
// other, KIP-890), whether the producer's open transaction holds each of parts: the code of
// each partition, 0 when it does (Manager.Check's codes, or the coordinator's NOT_COORDINATOR
// or COORDINATOR_LOAD_IN_PROGRESS for all). An error means the coordinator could not be asked.
func (r *Router) Verify(ctx context.Context, transactionalID string, producerID int64, epoch int16, parts []record.TxnTopic) (map[string]map[int32]int16, error) {
	return r.verify(ctx, transactionalID, producerID, epoch, parts, false)
}

// verify is Verify, or with add (transactions v2: a Produce v12, a TxnOffsetCommit v5) the add
// of parts to the producer's transaction, which begins one when none is open (Manager.AddPartitions,
// or an AddPartitionsToTxn v4 batch that is not verify-only at another gateway, as Kafka's
// brokers send one): the codes of AddPartitionsToTxn.
func (r *Router) verify(ctx context.Context, transactionalID string, producerID int64, epoch int16, parts []record.TxnTopic, add bool) (map[string]map[int32]int16, error) {
	backoff, waited := addBackoff, time.Duration(0)
	for {
		out, err := r.verifyOnce(ctx, transactionalID, producerID, epoch, parts, add)
		if err != nil || !add || waited >= addWait || !anyCode(out, kerr.ConcurrentTransactions.Code) {
			return out, err
		}
		t := r.clk.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, nil
		case <-t.C():
		}
		waited += backoff
		backoff = min(2*backoff, addBackoffMax)
	}
}

// anyCode reports whether some partition of codes has code.
func anyCode(codes map[string]map[int32]int16, code int16) bool {
	for _, byP := range codes {
		for _, c := range byP {
			if c == code {
				return true
			}
		}
	}
	return false
}

func (r *Router) verifyOnce(ctx context.Context, transactionalID string, producerID int64, epoch int16, parts []record.TxnTopic, add bool) (map[string]map[int32]int16, error) {
	out := make(map[string]map[int32]int16, len(parts))
	set := func(code func(topic string, p int32) int16) {
		for _, tp := range parts {
			if out[tp.Topic] == nil {
				out[tp.Topic] = make(map[int32]int16, len(tp.Partitions))
			}
			for _, p := range tp.Partitions {
				out[tp.Topic][p] = code(tp.Topic, p)
			}
		}
	}
	m, code := r.d.Txns(transactionalID)
	if m != nil && add {
		code := codeFor(m.AddPartitions(transactionalID, producerID, epoch, parts), 4, 0)
		set(func(string, int32) int16 { return code })
		return out, nil
	}
	if m != nil {
		set(func(topic string, p int32) int16 {
			return codeFor(m.Check(transactionalID, producerID, epoch, topic, p), 4, 0)
		})
		return out, nil
	}
	if code != kerr.NotCoordinator.Code {
		set(func(string, int32) int16 { return code })
		return out, nil
	}
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = transactionalID, producerID, epoch, !add
	for _, tp := range parts {
		rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		rt.Topic, rt.Partitions = tp.Topic, tp.Partitions
		tx.Topics = append(tx.Topics, rt)
	}
	req.Transactions = append(req.Transactions, tx)
	raw, err := r.d.Peer(ctx, record.Partition(transactionalID), req)
	if err != nil {
		return nil, err
	}
	resp, ok := raw.(*kmsg.AddPartitionsToTxnResponse)
	if !ok {
		return nil, fmt.Errorf("txn: verify: answer of type %T", raw)
	}
	if resp.ErrorCode != 0 {
		top := resp.ErrorCode
		set(func(string, int32) int16 { return top })
		return out, nil
	}
	// A partition the answer leaves out was not verified.
	set(func(string, int32) int16 { return kerr.UnknownServerError.Code })
	for _, t := range resp.Transactions {
		if t.TransactionalID != transactionalID {
			continue
		}
		for _, rt := range t.Topics {
			for _, rp := range rt.Partitions {
				if _, asked := out[rt.Topic][rp.Partition]; asked {
					out[rt.Topic][rp.Partition] = rp.ErrorCode
				}
			}
		}
	}
	return out, nil
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

// VerifyProduce checks the partitions of a transactional produce against the producer's open
// transaction at its coordinator (Verify), or with add (Produce v12, transactions v2) adds them
// to it. A coordinator that cannot be asked now, or is writing the transaction's previous end,
// is NOT_ENOUGH_REPLICAS for every partition, the retriable code Kafka's brokers answer then.
func (r *Router) VerifyProduce(ctx context.Context, transactionalID string, producerID int64, epoch int16, parts map[string][]int32, add bool) map[string]map[int32]int16 {
	topics := make([]record.TxnTopic, 0, len(parts))
	for t, ps := range parts {
		topics = append(topics, record.TxnTopic{Topic: t, Partitions: ps})
	}
	all := func(code int16) map[string]map[int32]int16 {
		out := make(map[string]map[int32]int16, len(parts))
		for t, ps := range parts {
			out[t] = make(map[int32]int16, len(ps))
			for _, p := range ps {
				out[t][p] = code
			}
		}
		return out
	}
	if len(transactionalID) == 0 || len(transactionalID) > MaxIDLength {
		return all(kerr.InvalidRequest.Code)
	}
	codes, err := r.verify(ctx, transactionalID, producerID, epoch, topics, add)
	if err != nil {
		return all(kerr.NotEnoughReplicas.Code)
	}
	for _, byP := range codes {
		for p, code := range byP {
			switch code {
			case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code, kerr.ConcurrentTransactions.Code:
				// The coordinator is moving: the producer retries.
				byP[p] = kerr.NotEnoughReplicas.Code
			case kerr.ProducerFenced.Code:
				// A produce learns of a fence as INVALID_PRODUCER_EPOCH.
				byP[p] = kerr.InvalidProducerEpoch.Code
			}
		}
	}
	return codes
}

// WriteTxnMarkers ends transactions on the partitions the request names, once the handler
// authorized it: on partition N of GroupsTopic what the producer committed to the groups of
// coordinator log partition N (group.Manager.EndTxnOffsets), on a data partition a marker
// (Directory.Mark).
func (r *Router) WriteTxnMarkers(ctx context.Context, _ kafka.Identity, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	return kafka.WriteTxnMarkersAnswer(req, func(mk kmsg.WriteTxnMarkersRequestMarker, topic string, p int32) int16 {
		return r.mark(ctx, mk, topic, p)
	}), nil
}

func (r *Router) mark(ctx context.Context, mk kmsg.WriteTxnMarkersRequestMarker, topic string, p int32) int16 {
	switch {
	case mk.ProducerID < 0:
		return kerr.InvalidProducerIDMapping.Code
	case mk.ProducerEpoch < 0:
		return kerr.InvalidProducerEpoch.Code
	case topic == GroupsTopic:
		if p < 0 || p >= record.Partitions {
			return kerr.UnknownTopicOrPartition.Code
		}
		gm, code := r.d.LogPartition(int(p))
		if gm == nil {
			if code == kerr.NotCoordinator.Code {
				code = kerr.NotLeaderForPartition.Code
			}
			return code
		}
		code = codeFor(gm.EndTxnOffsets(mk.ProducerID, mk.ProducerEpoch, mk.Committed), 0, 0)
		if code == kerr.NotCoordinator.Code {
			code = kerr.NotLeaderForPartition.Code
		}
		return code
	}
	return markCode(r.d.Mark(ctx, topic, p, mk.ProducerID, mk.ProducerEpoch, mk.Committed))
}

// markCode is the code of a data partition's marker error: the Kafka error it wraps, else
// UNKNOWN_SERVER_ERROR.
func markCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
