package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

var t0 = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// journal is a log partition in memory: every append is encoded, decoded and folded by
// record.State under claim 1, as the coordinator's journal reads its records back.
type journal struct {
	mu   sync.Mutex
	st   *record.State
	recs []record.Transaction
	fail error // the next appends fail with it while set
}

func newJournal() *journal {
	st := record.NewState()
	st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1}})
	return &journal{st: st}
}

func (j *journal) Append(_ context.Context, recs ...record.Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	for _, r := range recs {
		r.Claim = 1
		b, err := record.Encode(r)
		if err != nil {
			return err
		}
		back, err := record.Decode(b)
		if err != nil {
			return err
		}
		off, _ := j.st.Last()
		if !j.st.Apply(off+1, back) {
			return errors.New("void record")
		}
		j.recs = append(j.recs, *back.Transaction)
	}
	return nil
}

func (j *journal) setFail(err error) {
	j.mu.Lock()
	j.fail = err
	j.mu.Unlock()
}

// count is how many records were appended.
func (j *journal) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs)
}

// last is the last record appended for id.
func (j *journal) last(id string) (record.Transaction, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := len(j.recs) - 1; i >= 0; i-- {
		if j.recs[i].ID == id {
			return j.recs[i], true
		}
	}
	return record.Transaction{}, false
}

// folded is what a reader of the log holds.
func (j *journal) folded() []record.Transaction {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.st.Transactions()
	if out == nil {
		out = []record.Transaction{}
	}
	return out
}

// markers records every end; while hold is set an End blocks until it is released, and fail
// makes Ends fail.
type markers struct {
	mu    sync.Mutex
	ends  []record.Transaction
	fail  error
	hold  chan struct{}
	began chan struct{} // gets a value when an End starts, when set
}

func (mk *markers) End(ctx context.Context, t record.Transaction) error {
	mk.mu.Lock()
	hold, fail, began := mk.hold, mk.fail, mk.began
	mk.mu.Unlock()
	if began != nil {
		began <- struct{}{}
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if fail != nil {
		return fail
	}
	mk.mu.Lock()
	mk.ends = append(mk.ends, t)
	mk.mu.Unlock()
	return nil
}

func (mk *markers) list() []record.Transaction {
	mk.mu.Lock()
	defer mk.mu.Unlock()
	return append([]record.Transaction(nil), mk.ends...)
}

type fixture struct {
	m   *Manager
	clk *clock.Fake
	j   *journal
	mk  *markers
	pid int64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clk: clock.NewFake(t0), j: newJournal(), mk: &markers{}, pid: 1000}
	var mu sync.Mutex
	f.m = NewManager(Config{Clock: f.clk, Journal: f.j, Markers: f.mk, ProducerID: func(context.Context) (int64, error) {
		mu.Lock()
		defer mu.Unlock()
		f.pid++
		return f.pid, nil
	}})
	f.m.Start()
	t.Cleanup(f.m.Close)
	return f
}

// state waits until the manager and the log both hold id in state want.
func (f *fixture) state(t *testing.T, id string, want record.TxnState) record.Transaction {
	t.Helper()
	var got record.Transaction
	checkfor.Eventually(t, 5*time.Second, fmt.Sprintf("%s in %s", id, want), func() error {
		var ok bool
		got, ok = f.m.Describe(id)
		if !ok {
			return fmt.Errorf("%s unknown", id)
		}
		logged, _ := f.j.last(id)
		if got.State != want || logged.State != want {
			return fmt.Errorf("%s is %s in memory, %s in the log", id, got.State, logged.State)
		}
		return nil
	})
	return got
}

func code(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if err != nil {
		return -100
	}
	return 0
}

func wantCode(t *testing.T, what string, err error, want *kerr.Error) {
	t.Helper()
	wc := int16(0)
	if want != nil {
		wc = want.Code
	}
	if got := code(err); got != wc {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

var errFenced = fmt.Errorf("journal: %w", group.ErrNotCoordinator)
