package replay

import (
	"context"
	"errors"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
)

// Options says how far back `replay` starts and where it stops.
type Options struct {
	// FromStart folds from offset 0 instead of the last valid checkpoint.
	FromStart bool
	// Until stops after the last record at or before it (time travel); unset means the end.
	Until logread.Position
}

// Result is the state of one partition rebuilt from the log. JSON field names are an interface.
type Result struct {
	Partition int `json:"partition"`
	// From is the offset the fold started at (a checkpoint, or 0).
	From uint64 `json:"from_offset"`
	// Through is the last offset folded; nil when the partition had nothing in range.
	Through *uint64 `json:"through_offset"`
	Records uint64  `json:"records"`
	Void    uint64  `json:"void_records"`
	// Seconds is how long the fold took, reading included; Rate is Records/Seconds.
	Seconds float64               `json:"seconds"`
	Rate    float64               `json:"records_per_second"`
	Claim   *stateview.ClaimInfo  `json:"claim"`
	Groups  []stateview.GroupView `json:"groups"`
	// Transactions are the partition's transactional ids with their state, sorted by id.
	Transactions []stateview.TransactionView `json:"transactions"`

	state *record.State
}

// State is the fold the replay ended with.
func (r *Result) State() *record.State { return r.state }

// Run rebuilds one partition's state.
func Run(ctx context.Context, l *logread.Log, partition int, opts Options) (*Result, error) {
	if err := logread.CheckPartition(partition); err != nil {
		return nil, err
	}
	start := time.Now()
	ends, err := l.Ends(ctx)
	if err != nil {
		return nil, err
	}
	end := ends[partition]
	if opts.Until.HasOffset {
		end = min(end, opts.Until.Offset+1)
	}
	res := &Result{Partition: partition, state: record.NewState()}
	if !opts.FromStart && !opts.Until.Set() {
		at, ok, err := l.LastCheckpoint(ctx, partition, end)
		if err != nil {
			return nil, err
		}
		if ok {
			res.From = at
		}
	}
	err = l.ReadBatches(ctx, partition, res.From, end, func(batch []logread.Entry) error {
		for i := range batch {
			e := &batch[i]
			if e.Err != nil {
				res.Void++
				continue
			}
			if !opts.Until.Time.IsZero() && e.Record.Time.After(opts.Until.Time) {
				return logread.ErrStop
			}
			res.state.Apply(e.Offset, e.Record)
		}
		return nil
	})
	if err != nil && !errors.Is(err, logread.ErrStop) {
		return nil, err
	}
	res.fill(time.Since(start))
	return res, nil
}

func (r *Result) fill(elapsed time.Duration) {
	st := r.state
	c := st.Counts()
	r.Records, r.Void = c.Applied+r.Void, c.Void+r.Void
	if last, ok := st.Last(); ok {
		r.Through = &last
	}
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.Rate = float64(r.Records) / r.Seconds
	}
	if cl := st.Claim(); cl.Number != 0 {
		r.Claim = &stateview.ClaimInfo{Number: cl.Number, Node: cl.Node, Addr: cl.Addr, Offset: st.ClaimOffset()}
	}
	r.Groups = stateview.GroupViews(st)
	r.Transactions = []stateview.TransactionView{}
	for _, x := range st.Transactions() {
		r.Transactions = append(r.Transactions, stateview.NewTransactionView(x))
	}
}
