package txn

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// modelTxn is what the model expects of one transactional id.
type modelTxn struct {
	pid     int64
	epoch   int16 // the coordinator's
	client  int16 // the epoch the id's producer holds (from its last InitProducerId or EndTxn v5 answer)
	last    int16 // the epoch before the last bump the producer asked for (Transaction.Last), -1 none
	state   record.TxnState
	parts   []int32
	started time.Time
	ends    []string // "commit [0 2]" per end, in order
}

// Random interleavings of InitProducerId (naming the producer's pair or not, KIP-360), adds,
// commits and aborts of transactions v1 and v2 (EndTxn v5, its bump and its retries), timeouts
// and a coordinator crash (a new manager restored from the log's fold) against a model: every answer is the
// model's, the manager's memory equals the fold of its log after every step, and the markers of
// each id are the model's ends, in order.
func TestPropertyAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runModel(t, seed) })
	}
}

func runModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := newFixture(t)
	mgr := f.m
	const timeout = 5 * time.Second
	ids := []string{"a", "b", "c"}
	model := map[string]*modelTxn{}
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d after %v: %s", seed, log, fmt.Sprintf(format, args...))
	}
	check := func(what string, err error, want *kerr.Error) {
		t.Helper()
		wc := int16(0)
		if want != nil {
			wc = want.Code
		}
		if code(err) != wc {
			fail("%s: error %v, want %v", what, err, want)
		}
	}
	for step := 0; step < 60; step++ {
		id := ids[rng.IntN(len(ids))]
		mt := model[id]
		switch op := rng.IntN(13); {
		case op >= 10 && op < 12: // EndTxn v5 (transactions v2), now and then a retry of the last
			if mt == nil {
				continue
			}
			commit := rng.IntN(2) == 0
			at := mt.client
			if rng.IntN(3) == 0 {
				at--
			}
			lost := rng.IntN(4) == 0 // the answer never reaches the producer, which retries later
			log = append(log, fmt.Sprintf("end v2 %s commit=%v at %d lost=%v", id, commit, at, lost))
			pid, epoch, err := mgr.EndTxnV2(id, mt.pid, at, commit)
			want := map[bool]record.TxnState{true: record.TxnCompleteCommit, false: record.TxnCompleteAbort}[commit]
			end := func() {
				t.Helper()
				check("end v2", err, nil)
				mt.last, mt.epoch = mt.epoch, mt.epoch+1
				if pid != mt.pid || epoch != mt.epoch {
					fail("end v2 answered %d/%d, want %d/%d", pid, epoch, mt.pid, mt.epoch)
				}
				mt.ends = append(mt.ends, fmt.Sprint(map[bool]string{true: "commit ", false: "abort "}[commit], mt.parts))
				mt.state, mt.parts = want, nil
				if !lost {
					mt.client = mt.epoch
				}
			}
			switch {
			case at == mt.epoch && mt.state == record.TxnOngoing:
				end()
			case at == mt.epoch && !commit:
				end() // an abort with nothing open bumps too
			case at == mt.epoch:
				check("commit v2 with nothing open", err, kerr.InvalidTxnState)
			case at+1 == mt.epoch && mt.state == want:
				check("end v2 retried", err, nil)
				if pid != mt.pid || epoch != mt.epoch {
					fail("end v2 retried answered %d/%d, want %d/%d", pid, epoch, mt.pid, mt.epoch)
				}
				if !lost {
					mt.client = epoch
				}
			case at+1 == mt.epoch && (mt.state == record.TxnCompleteCommit || mt.state == record.TxnCompleteAbort):
				check("the opposite end v2 retried", err, kerr.InvalidTxnState)
			default:
				check("end v2 at a fenced epoch", err, kerr.ProducerFenced)
			}
		case op == 12: // InitProducerId naming the pair the producer holds (KIP-360)
			if mt == nil {
				continue
			}
			lost := rng.IntN(3) == 0
			log = append(log, fmt.Sprintf("init %s naming %d lost=%v", id, mt.client, lost))
			pid, epoch, err := mgr.InitProducerID(id, timeout, mt.pid, mt.client)
			valid := mt.client == mt.epoch || mt.client == mt.last
			switch {
			case !valid:
				check("init naming a fenced pair", err, kerr.ProducerFenced)
			case mt.state == record.TxnOngoing:
				check("init naming its pair with a transaction open", err, kerr.ConcurrentTransactions)
				mt.epoch, mt.last = mt.epoch+1, -1
				mt.ends = append(mt.ends, fmt.Sprint("abort ", mt.parts))
				mt.state, mt.parts = record.TxnCompleteAbort, nil
			case mt.client == mt.epoch:
				check("init naming the current pair", err, nil)
				mt.last, mt.epoch = mt.epoch, mt.epoch+1
				mt.state = record.TxnEmpty
			default:
				check("init retrying a bump", err, nil)
				mt.state = record.TxnEmpty
			}
			if err == nil && !lost {
				mt.client = mt.epoch
			}
			if err == nil && (pid != mt.pid || epoch != mt.epoch) {
				fail("init gave %d/%d, want %d/%d", pid, epoch, mt.pid, mt.epoch)
			}
		case op < 2: // InitProducerId
			log = append(log, "init "+id)
			pid, epoch, err := mgr.InitProducerID(id, timeout, NoProducer, NoProducer)
			switch {
			case mt == nil:
				check("init", err, nil)
				model[id] = &modelTxn{pid: pid, epoch: epoch, client: epoch, state: record.TxnEmpty, last: -1}
				if epoch != 0 {
					fail("new id at epoch %d", epoch)
				}
			case mt.state == record.TxnOngoing:
				check("init fencing an open transaction", err, kerr.ConcurrentTransactions)
				mt.epoch, mt.last = mt.epoch+1, -1
				mt.ends = append(mt.ends, fmt.Sprint("abort ", mt.parts))
				mt.state, mt.parts = record.TxnCompleteAbort, nil
			default:
				check("init", err, nil)
				mt.epoch++
				if pid != mt.pid || epoch != mt.epoch {
					fail("init gave %d/%d, want %d/%d", pid, epoch, mt.pid, mt.epoch)
				}
				mt.client, mt.state, mt.last = epoch, record.TxnEmpty, -1
			}
		case op < 6: // AddPartitionsToTxn
			if mt == nil {
				continue
			}
			p := int32(rng.IntN(3))
			log = append(log, fmt.Sprintf("add %s %d", id, p))
			err := mgr.AddPartitions(id, mt.pid, mt.client, []record.TxnTopic{{Topic: "t", Partitions: []int32{p}}})
			if mt.client != mt.epoch {
				check("add by a fenced producer", err, kerr.ProducerFenced)
				continue
			}
			check("add", err, nil)
			if mt.state != record.TxnOngoing {
				mt.state, mt.parts, mt.started = record.TxnOngoing, nil, f.clk.Now()
			}
			if i, found := slices.BinarySearch(mt.parts, p); !found {
				mt.parts = slices.Insert(mt.parts, i, p)
			}
		case op < 8: // EndTxn
			if mt == nil {
				continue
			}
			commit := rng.IntN(2) == 0
			log = append(log, fmt.Sprintf("end %s commit=%v", id, commit))
			err := mgr.EndTxn(id, mt.pid, mt.client, commit)
			want := map[bool]record.TxnState{true: record.TxnCompleteCommit, false: record.TxnCompleteAbort}[commit]
			switch {
			case mt.client != mt.epoch:
				check("end by a fenced producer", err, kerr.ProducerFenced)
			case mt.state == record.TxnOngoing:
				check("end", err, nil)
				mt.ends = append(mt.ends, fmt.Sprint(map[bool]string{true: "commit ", false: "abort "}[commit], mt.parts))
				mt.state, mt.parts = want, nil
			case mt.state == want:
				check("end retried", err, nil)
			default:
				check("end with no transaction", err, kerr.InvalidTxnState)
			}
		case op < 9: // time passes
			d := time.Duration(1+rng.IntN(6)) * time.Second
			log = append(log, fmt.Sprint("advance ", d))
			f.clk.Advance(d)
			now := f.clk.Now()
			for _, m := range model {
				if m.state == record.TxnOngoing && !now.Before(m.started.Add(timeout)) {
					m.epoch, m.last = m.epoch+1, -1
					m.ends = append(m.ends, fmt.Sprint("abort ", m.parts))
					m.state, m.parts = record.TxnCompleteAbort, nil
				}
			}
		default: // the coordinator crashes; another restores the partition from the log
			log = append(log, "crash")
			mgr.Close()
			mgr = NewManager(mgr.cfg)
			t.Cleanup(mgr.Close)
			mgr.Restore(f.j.folded())
			mgr.Start()
		}
		checkfor.Eventually(t, 5*time.Second, "the model's state", func() error {
			for id, m := range model {
				got, ok := mgr.Describe(id)
				if !ok || got.State != m.state || got.Epoch != m.epoch || got.ProducerID != m.pid {
					return fmt.Errorf("%s: %+v, want %s at %d/%d", id, got, m.state, m.pid, m.epoch)
				}
				var parts []int32
				for _, tp := range got.Partitions {
					parts = tp.Partitions
				}
				if !slices.Equal(parts, m.parts) {
					return fmt.Errorf("%s: partitions %v, want %v", id, parts, m.parts)
				}
			}
			if got, want := mgr.List(), f.j.folded(); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("memory %+v\nlog %+v", got, want)
			}
			ends := map[string][]string{}
			for _, e := range f.mk.list() {
				var parts []int32
				for _, tp := range e.Partitions {
					parts = tp.Partitions
				}
				ends[e.ID] = append(ends[e.ID], fmt.Sprint(map[record.TxnState]string{record.TxnPrepareCommit: "commit ", record.TxnPrepareAbort: "abort "}[e.State], parts))
			}
			for id, m := range model {
				if !slices.Equal(ends[id], m.ends) {
					return fmt.Errorf("%s: markers %v, want %v", id, ends[id], m.ends)
				}
			}
			return nil
		})
	}
}
