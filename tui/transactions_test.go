package tui_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
	"github.com/iggy-kafka/iggy-kafka/tui"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// openTxns are three open transactions as `claims --transactions` lists them: etl-7 past its
// timeout (hanging), billing-tx young, and stream-2 ending (PrepareCommit).
func openTxns() []claims.TxnRow {
	row := func(id string, part int, node int32, state string, pid int64, epoch int16, timeout int64, age float64, hanging bool, parts string, groups ...string) claims.TxnRow {
		if groups == nil {
			groups = []string{}
		}
		return claims.TxnRow{TransactionalID: id, Partition: part, Coordinator: i32(node), State: state, ProducerID: pid, Epoch: epoch,
			TimeoutMs: timeout, AgeSeconds: f64(age), Hanging: hanging, Partitions: parts, Groups: groups}
	}
	// By id, as the engine gives them.
	return []claims.TxnRow{
		row("billing-tx", 3, 1, "Ongoing", 1002, 0, 60_000, 4.2, false, "invoices[0]", "billing"),
		row("etl-7", 11, 2, "Ongoing", 1001, 3, 10_000, 754, true, "orders[0,1] totals[2]", "etl-group"),
		row("stream-2", 6, 3, "PrepareCommit", 1003, 1, 30_000, 12.5, false, "words-counts[0,1,2,3]", "wordcount", "wordcount-2"),
	}
}

func (f *fakeActions) Transactions(context.Context) ([]claims.TxnRow, error) {
	f.call("transactions")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.txns == nil {
		return openTxns(), nil
	}
	return slices.Clone(f.txns), nil
}

// txnPlan is the plan of an abort of etl-7, as its coordinator describes it.
func txnPlan(id string) txnadmin.Plan {
	return txnadmin.Plan{TransactionalID: id, Coordinator: 2, State: "Ongoing", ProducerID: 1001, Epoch: 3, TimeoutMs: 10_000,
		AgeSeconds: f64(754), Partitions: "orders[0,1] totals[2]"}
}

func (f *fakeActions) PlanAbort(_ context.Context, id string) (txnadmin.Plan, error) {
	f.call("plan-abort " + id)
	if f.abortPlanErr != nil {
		return txnadmin.Plan{}, f.abortPlanErr
	}
	return txnPlan(id), nil
}

func (f *fakeActions) Abort(_ context.Context, p txnadmin.Plan) (txnadmin.Summary, error) {
	f.call("abort " + p.TransactionalID)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborted = append(f.aborted, p)
	// The transaction is gone from the next reading.
	f.txns = slices.DeleteFunc(openTxns(), func(r claims.TxnRow) bool { return r.TransactionalID == p.TransactionalID })
	sum := p.Summary()
	sum.Done, sum.State, sum.ProducerID, sum.Epoch = true, "Empty", p.ProducerID, p.Epoch+1
	return sum, nil
}

func TestTransactionsViewGolden(t *testing.T) {
	cases := []struct {
		name string
		msgs []tea.Msg
	}{
		{"txns", keys("T")},
		{"txnsfilter", keys("T", "/", "o", "r", "d", "e", "r", "s", "enter")},
		{"txnssorted", keys("T", "s", "S")},
		{"txnplan", keys("T", "a")},
		{"txnaborted", keys("T", "a", "y")},
		{"txnhelp", keys("T", "?")},
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 35}, {60, 15}} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%dx%d/%s", sz.w, sz.h, c.name), func(t *testing.T) {
				m := update(newConsole(&fakeActions{}), append([]tea.Msg{tea.WindowSizeMsg{Width: sz.w, Height: sz.h}}, c.msgs...)...)
				v := m.View()
				checkSize(t, v, sz.w, sz.h)
				golden.Assert(t, fmt.Sprintf("Console_%dx%d_%s", sz.w, sz.h, c.name), []byte(v))
			})
		}
	}
}

// The screen lists the oldest first, marks the hanging one, and filters on what a row says.
func TestTransactionsSortedAndFiltered(t *testing.T) {
	m := update(newConsole(&fakeActions{}), tea.WindowSizeMsg{Width: 120, Height: 35}, keyMsg("T")).(tui.Console)
	var ids []string
	for _, r := range m.Transactions() {
		ids = append(ids, r.TransactionalID)
	}
	if want := []string{"etl-7", "stream-2", "billing-tx"}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v (oldest first)", ids, want)
	}
	var marked []string
	for _, l := range strings.Split(m.View(), "\n") {
		if len(l) > 2 && l[1] == '!' {
			marked = append(marked, strings.Fields(l[2:])[0])
		}
	}
	if !slices.Equal(marked, []string{"etl-7"}) {
		t.Fatalf("marked hanging %v, want [etl-7]:\n%s", marked, m.View())
	}
	for _, c := range []struct {
		filter string
		want   []string
	}{{"hanging", []string{"etl-7"}}, {"node 3", []string{"stream-2"}}, {"wordcount-2", []string{"stream-2"}}, {"invoices", []string{"billing-tx"}}} {
		f := update(m, keys(append([]string{"/"}, append(strings.Split(c.filter, ""), "enter")...)...)...).(tui.Console)
		ids = nil
		for _, r := range f.Transactions() {
			ids = append(ids, r.TransactionalID)
		}
		if !slices.Equal(ids, c.want) {
			t.Errorf("filter %q kept %v, want %v", c.filter, ids, c.want)
		}
	}
}

// Select and abort through a real program: a asks for the plan, any key but y cancels and
// nothing is aborted, y aborts the plan shown and the outcome is the command's sentence; the
// screen reads the transactions again and the aborted one is gone. A refusal says why.
func TestTransactionsAbortTeatest(t *testing.T) {
	act := &fakeActions{}
	tm := teatest.NewTestModel(t, newConsole(act), teatest.WithInitialTermSize(100, 30))
	tm.Send(keyMsg("T"))
	waitFor(t, tm, "[TRANSACTIONS] 3 open transactions · 1 hanging")
	tm.Send(keyMsg("a"))
	waitFor(t, tm, "abort transaction etl-7? y aborts, any other key cancels")
	tm.Send(keyMsg("n"))
	waitFor(t, tm, "abort of transaction etl-7 cancelled: nothing was written")
	tm.Send(keyMsg("a"))
	waitFor(t, tm, "transaction etl-7 would be aborted: its producer fenced, abort markers on 3 partition(s)")
	tm.Send(keyMsg("y"))
	waitForAll(t, tm, "transaction etl-7 aborted: abort markers on 3 partition(s); the id is Empty at producer id 1001", "[TRANSACTIONS] 2 open transactions · by age")
	act.mu.Lock()
	act.abortPlanErr = errors.New("billing-tx is PrepareCommit: its coordinator (node 1) is writing its markers: " + txnadmin.ErrEnding.Error())
	act.mu.Unlock()
	tm.Send(keyMsg("j"))
	tm.Send(keyMsg("a"))
	waitFor(t, tm, "abort refused: billing-tx is PrepareCommit")
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	want := []string{"transactions", "plan-abort etl-7", "plan-abort etl-7", "abort etl-7", "transactions", "plan-abort billing-tx"}
	if got := act.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	act.mu.Lock()
	defer act.mu.Unlock()
	if len(act.aborted) != 1 || !reflect.DeepEqual(act.aborted[0], txnPlan("etl-7")) {
		t.Fatalf("aborted %+v, want the plan shown", act.aborted)
	}
}

// A read-only console offers no abort; the screen reads again on the engine's beats, once a
// second, and not on every beat.
func TestTransactionsReadOnlyAndRefresh(t *testing.T) {
	act := &fakeActions{}
	m := update(tui.NewConsole(fleetAt(now0), act, true), keys("T", "a")...).(tui.Console)
	if m.Message() != "read-only console: aborts are off" || m.Screen() != "transactions" {
		t.Fatalf("read-only: screen %s message %q", m.Screen(), m.Message())
	}
	beat := func(d time.Duration) tea.Msg {
		return tui.StatusMsg{At: now0.Add(d), Store: "127.0.0.1:8090", StoreAnswered: now0.Add(d), StaleAfter: time.Second}
	}
	update(m, beat(250*time.Millisecond), beat(500*time.Millisecond), beat(1000*time.Millisecond), beat(1250*time.Millisecond), beat(2000*time.Millisecond))
	if got, want := act.Calls(), []string{"transactions", "transactions", "transactions"}; !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
}

// waitForAll waits until the output written since the last wait holds every one of what, in
// one frame or several.
func waitForAll(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range what {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
}
