// Package txnadmin is the library of `iggy-kafka transactions abort`: it ends a hanging
// transaction the way a Kafka application ends one when it restarts, by initializing its
// transactional id again. The gateway coordinating the id then fences the producer that holds
// it (its epoch is bumped, its next request answers PRODUCER_FENCED), aborts the open
// transaction (abort markers on every partition it added, its staged group offsets dropped, all
// on the coordinator log first) and leaves the id Empty, free for the next producer that starts
// with it.
//
// Plan asks the gateways what the transaction is (DescribeTransactions, the Admin API that
// Kafka's kafka-transactions tool reads) and refuses what there is nothing to abort in: an
// unknown id, an id with no open transaction, one already ending (its coordinator is writing its
// markers). Abort sends the InitProducerId with the id to its coordinator, as a producer does,
// and waits, as a producer does, while the coordinator answers CONCURRENT_TRANSACTIONS until the
// abort is written; then it reads the id back and reports its state. Nothing here writes Iggy.
package txnadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// Plan is one transaction to abort, as its coordinator describes it. JSON field names are an
// interface.
type Plan struct {
	TransactionalID string `json:"transactional_id"`
	Coordinator     int32  `json:"coordinator"`
	State           string `json:"state"`
	ProducerID      int64  `json:"producer_id"`
	Epoch           int16  `json:"epoch"`
	TimeoutMs       int32  `json:"timeout_ms"`
	// AgeSeconds is how long the transaction has been open; nil when the coordinator did not say.
	AgeSeconds *float64 `json:"age_seconds"`
	// Partitions are the data partitions the transaction added, "topic[0,1] other[2]".
	Partitions string `json:"partitions"`
	// started is the coordinator's start of the transaction (Unix ms), which tells two
	// transactions of one producer apart.
	started int64
}

func (Plan) Columns() []string {
	return []string{"TRANSACTIONAL-ID", "COORDINATOR", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT", "AGE", "PARTITIONS"}
}

func (p Plan) Cells() []string {
	age, parts := "-", p.Partitions
	if p.AgeSeconds != nil {
		age = seconds(*p.AgeSeconds)
	}
	if parts == "" {
		parts = "-"
	}
	return []string{p.TransactionalID, strconv.Itoa(int(p.Coordinator)), p.State, strconv.FormatInt(p.ProducerID, 10),
		strconv.Itoa(int(p.Epoch)), seconds(float64(p.TimeoutMs) / 1000), age, parts}
}

func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) + "s" }

// Summary is what an abort did, or would do (its sentence is render.TxnAbort's, for the
// command and the console alike). JSON field names are an interface.
type Summary struct {
	TransactionalID string `json:"transactional_id"`
	// Partitions counts the data partitions that get (or got) an abort marker.
	Partitions int `json:"partitions"`
	// Done says the transaction was aborted; false for a dry run.
	Done bool `json:"done"`
	// State is the id's state once aborted (CompleteAbort or Empty), "" for a dry run.
	State string `json:"state,omitempty"`
	// ProducerID and Epoch are what the id holds once aborted; the fenced producer's are older.
	ProducerID int64 `json:"producer_id,omitempty"`
	Epoch      int16 `json:"epoch,omitempty"`
}

// Summary is what the plan will do.
func (p Plan) Summary() Summary {
	return Summary{TransactionalID: p.TransactionalID, Partitions: partitionCount(p.Partitions)}
}

func partitionCount(s string) int {
	n := 0
	for _, t := range strings.Fields(s) {
		if i := strings.IndexByte(t, '['); i >= 0 {
			n += len(strings.Split(strings.Trim(t[i:], "[]"), ","))
		}
	}
	return n
}

// Errors Plan and Abort wrap.
var (
	ErrUnknown = errors.New("no such transactional id")
	ErrNotOpen = errors.New("no open transaction")
	ErrEnding  = errors.New("the transaction is ending already")
	ErrChanged = errors.New("the transaction is no longer the one planned")
)

// Describe asks the coordinator of id what its transaction is, now being the operator's clock
// (for the age).
func Describe(ctx context.Context, adm *kadm.Client, id string, now time.Time) (Plan, error) {
	described, err := adm.DescribeTransactions(ctx, id)
	if err != nil {
		var shard *kadm.ShardErrors
		if !errors.As(err, &shard) {
			return Plan{}, fmt.Errorf("describing transactional id %s: %w", id, err)
		}
	}
	d, ok := described[id]
	if !ok {
		return Plan{}, fmt.Errorf("describing transactional id %s: no answer: %w", id, err)
	}
	if errors.Is(d.Err, kerr.TransactionalIDNotFound) {
		return Plan{}, fmt.Errorf("%s: %w", id, ErrUnknown)
	}
	if d.Err != nil {
		return Plan{}, fmt.Errorf("describing transactional id %s: %w", id, d.Err)
	}
	p := Plan{TransactionalID: id, Coordinator: d.Coordinator, State: d.State, ProducerID: d.ProducerID,
		Epoch: d.ProducerEpoch, TimeoutMs: d.TimeoutMillis, started: d.StartTimestamp}
	if d.StartTimestamp > 0 {
		age := now.Sub(time.UnixMilli(d.StartTimestamp)).Seconds()
		p.AgeSeconds = &age
	}
	topics := d.Topics.Sorted()
	var parts []string
	for _, t := range topics {
		ps := slices.Clone(t.Partitions)
		slices.Sort(ps)
		nums := make([]string, len(ps))
		for i, n := range ps {
			nums[i] = strconv.Itoa(int(n))
		}
		parts = append(parts, t.Topic+"["+strings.Join(nums, ",")+"]")
	}
	p.Partitions = strings.Join(parts, " ")
	return p, nil
}

// PlanAbort describes id and refuses it unless its transaction is open (Ongoing): an Empty or
// Complete one has nothing to abort, a PrepareCommit or PrepareAbort one is being finished by its
// coordinator, and aborting it is neither possible nor needed.
func PlanAbort(ctx context.Context, adm *kadm.Client, id string, now time.Time) (Plan, error) {
	p, err := Describe(ctx, adm, id, now)
	if err != nil {
		return p, err
	}
	switch p.State {
	case "Ongoing":
		return p, nil
	case "PrepareCommit", "PrepareAbort":
		return p, fmt.Errorf("%s is %s: its coordinator (node %d) is writing its markers: %w", id, p.State, p.Coordinator, ErrEnding)
	}
	return p, fmt.Errorf("%s is %s: %w to abort", id, p.State, ErrNotOpen)
}

// retryEvery is how often Abort asks again while the coordinator answers that it is busy.
const retryEvery = 100 * time.Millisecond

// Abort initializes p's transactional id again at its coordinator, which fences the producer
// holding it and aborts its open transaction, then reads the id back; adm reads it, cl sends
// the InitProducerId (kgo routes it to the id's coordinator). It waits, on clk, while the
// coordinator answers CONCURRENT_TRANSACTIONS (the abort's markers being written) or names
// another coordinator, until ctx ends.
//
// The operator confirmed p some time ago: Abort plans again first and refuses (ErrChanged,
// nothing written) when the id no longer holds that transaction open (it ended, or a new
// producer or transaction took the id), so a confirmation never fences a producer it did not
// show.
func Abort(ctx context.Context, cl *kgo.Client, adm *kadm.Client, clk clock.Clock, p Plan) (Summary, error) {
	sum := p.Summary()
	id := p.TransactionalID
	now, err := PlanAbort(ctx, adm, id, clk.Now())
	if err == nil && (now.ProducerID != p.ProducerID || now.Epoch != p.Epoch || now.Partitions != p.Partitions || now.started != p.started) {
		err = fmt.Errorf("%s holds another transaction than the plan showed (producer id %d epoch %d, partitions %s; planned: producer id %d epoch %d, partitions %s): plan again: %w",
			id, now.ProducerID, now.Epoch, dash(now.Partitions), p.ProducerID, p.Epoch, dash(p.Partitions), ErrChanged)
	}
	if err != nil {
		return sum, err
	}
	for {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = p.TimeoutMs
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp, err := req.RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			sum.ProducerID, sum.Epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if !errors.Is(err, kerr.ConcurrentTransactions) && !errors.Is(err, kerr.CoordinatorLoadInProgress) &&
			!errors.Is(err, kerr.NotCoordinator) && !errors.Is(err, kerr.CoordinatorNotAvailable) {
			return sum, fmt.Errorf("initializing %s at its coordinator: %w", id, err)
		}
		t := clk.NewTimer(retryEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return sum, fmt.Errorf("aborting %s: the coordinator still answers %v: %w", id, err, ctx.Err())
		case <-t.C():
		}
	}
	after, err := Describe(ctx, adm, id, clk.Now())
	if err != nil {
		return sum, err
	}
	sum.Done, sum.State = true, after.State
	return sum, nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
