package console_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// sink keeps what a console said.
type sink struct {
	mu     sync.Mutex
	snaps  []console.Snapshot
	status []console.Status
}

func (s *sink) Snapshot(snap console.Snapshot) {
	s.mu.Lock()
	s.snaps = append(s.snaps, snap)
	s.mu.Unlock()
}

func (s *sink) Status(st console.Status) {
	s.mu.Lock()
	s.status = append(s.status, st)
	s.mu.Unlock()
}

func (s *sink) last() (console.Snapshot, console.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var snap console.Snapshot
	var st console.Status
	if len(s.snaps) > 0 {
		snap = s.snaps[len(s.snaps)-1]
	}
	if len(s.status) > 0 {
		st = s.status[len(s.status)-1]
	}
	return snap, st
}

// consoleEnv is a store on a TCP port of its own (so that it can be stopped and started again
// where it was), a coordinator log with every partition claimed, and a console following it.
type consoleEnv struct {
	t     *testing.T
	ctx   context.Context
	srv   *teststore.Store
	c     *iggy.Client
	log   *testlog.Log
	con   *console.Console
	sink  *sink
	done  chan error
	stop  context.CancelFunc
	epoch time.Time
	// configure, when set, changes the console before it starts.
	configure func(*console.Console)
}

func newConsoleEnv(t *testing.T, owners func(p int) int32) *consoleEnv {
	t.Helper()
	srv := teststore.Start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}, PoolSize: 2, DialTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	e := &consoleEnv{t: t, ctx: ctx, srv: srv, c: c, log: testlog.Create(ctx, t, c, "kafka"), sink: &sink{}, epoch: time.Now().Add(-time.Minute)}
	for p := range record.Partitions {
		n := owners(p)
		e.log.Put(p, record.Record{Type: record.TypeClaim, Claim: 1, Time: e.epoch, ClaimInfo: &record.Claim{Number: 1, Node: n, Addr: fmt.Sprintf("localhost:909%d", n)}})
	}
	return e
}

func (e *consoleEnv) send(topic string, payload []byte) {
	e.t.Helper()
	meta := wire.NamedID(fleet.MetaStream("kafka"))
	_, err := e.c.CreateTopic(e.ctx, meta, topic, 1, iggy.TopicOptions{})
	if err != nil && !errors.Is(err, wire.TopicNameAlreadyExists) {
		e.t.Fatal(err)
	}
	if _, err := e.c.SendMessages(e.ctx, meta, wire.NamedID(topic), 0, []iggy.Message{{Payload: payload}}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *consoleEnv) announce(a fleet.Announcement) {
	e.send(fleet.OwnersTopic, fleet.EncodeAnnouncement(a))
}

func (e *consoleEnv) start(drainer bool) {
	e.t.Helper()
	log := logread.NewLog(e.c, "kafka", nil)
	m, err := claims.LoadModel(e.ctx, log)
	if err != nil {
		e.t.Fatal(err)
	}
	e.con = &console.Console{Log: log, Store: e.srv.Addr}
	if drainer {
		e.con.Drainer = drainplan.IggyDrainer{Log: log, Writer: e.c}
	}
	if e.configure != nil {
		e.configure(e.con)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	e.stop, e.done = cancel, make(chan error, 1)
	go func() { e.done <- e.con.Run(ctx, m, e.sink) }()
	e.t.Cleanup(func() {
		cancel()
		<-e.done
	})
}

// waitSnap waits for a snapshot that check accepts.
func (e *consoleEnv) waitSnap(within time.Duration, what string, check func(console.Snapshot) error) console.Snapshot {
	e.t.Helper()
	var got console.Snapshot
	checkfor.Eventually(e.t, within, what, func() error {
		snap, _ := e.sink.last()
		if snap.At.IsZero() {
			return errors.New("no snapshot yet")
		}
		got = snap
		return check(snap)
	})
	return got
}

func roundRobin(p int) int32 { return int32(1 + p%3) }

// The store stops answering: the console says so within 2 s and keeps the last rows, refuses
// to plan on them, and once the store is back (with a new controller meanwhile) it resumes
// on its own, the handover it missed included.
func TestConsoleSurvivesTheStore(t *testing.T) {
	e := newConsoleEnv(t, roundRobin)
	e.start(true)
	e.waitSnap(10*time.Second, "a healthy snapshot", func(s console.Snapshot) error {
		if !s.Status.StoreOK() || len(s.Rows) != 16 {
			return fmt.Errorf("status %+v, %d rows", s.Status, len(s.Rows))
		}
		return nil
	})
	if err := e.srv.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	var said console.Status
	checkfor.Eventually(t, 2*time.Second, "the console says the store does not answer", func() error {
		_, st := e.sink.last()
		if st.StoreOK() {
			return fmt.Errorf("status %+v", st)
		}
		said = st
		return nil
	})
	t.Logf("the console said %q %v after the store stopped", render.Problems(said), time.Since(stopped).Round(time.Millisecond))
	if p := render.Problems(said); len(p) != 1 || !strings.Contains(p[0], "no answer from the store at "+e.srv.Addr) {
		t.Fatalf("problems %q", p)
	}
	if snap, _ := e.sink.last(); len(snap.Rows) != 16 || snap.Rows[0].OwnerNode == nil || *snap.Rows[0].OwnerNode != 1 {
		t.Fatalf("rows not kept: %+v", snap.Rows)
	}
	if _, err := e.con.PlanDrain(e.ctx, []int32{2}); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("a plan on a stale view: %v", err)
	}
	// The console retries with backoff, which its status shows.
	checkfor.Eventually(t, 5*time.Second, "a retry", func() error {
		if _, st := e.sink.last(); st.Retry == 0 || st.NextRetry.IsZero() {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	srv := teststore.Start(t, func(c *store.Config) { c.Listen, c.DataDir = e.srv.Addr, e.srv.Dir })
	e.srv = srv
	// Meanwhile node 2 took partition 0 over: a new controller.
	claim, err := record.Encode(record.Record{Type: record.TypeClaim, Claim: 2, Time: time.Now(), ClaimInfo: &record.Claim{Number: 2, Node: 2, Addr: "localhost:9092"}})
	if err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "write to the store again", func() error {
		_, err := e.c.SendMessages(e.ctx, wire.NamedID(fleet.MetaStream("kafka")), wire.NamedID(fleet.LogTopic), 0, []iggy.Message{{Payload: claim}})
		return err
	})
	resumed := e.waitSnap(20*time.Second, "the console resumes with the new controller", func(s console.Snapshot) error {
		if !s.Status.StoreOK() || s.Rows[0].OwnerNode == nil || *s.Rows[0].OwnerNode != 2 {
			return fmt.Errorf("status %+v, partition 0 owner %v", s.Status, s.Rows[0].OwnerNode)
		}
		return nil
	})
	if h := resumed.Handovers; len(h) == 0 || h[0].Partition != 0 || h[0].To != 2 || *h[0].From != 1 {
		t.Fatalf("handovers after the reload %+v", h)
	}
	if !resumed.Nodes[1].Controller {
		t.Fatalf("node 2 not the controller: %+v", resumed.Nodes)
	}
}

// Each handover says why it happened, from the announcements and drain requests as they stand
// when its claim is read, and how long the partition went unserved.
func TestConsoleExplainsHandovers(t *testing.T) {
	e := newConsoleEnv(t, func(p int) int32 { return int32(1 + p%4) })
	now := time.Now()
	claimed := func(node int32) map[int]uint64 {
		m := map[int]uint64{}
		for p := range record.Partitions {
			if int32(1+p%4) == node {
				m[p] = 1
			}
		}
		return m
	}
	for n := int32(1); n <= 4; n++ {
		e.announce(fleet.Announcement{Node: n, Addr: fmt.Sprintf("localhost:909%d", n), Time: now, Claims: claimed(n)})
	}
	// Node 2 stops: its last announcement releases its partitions and says it leaves.
	e.announce(fleet.Announcement{Node: 2, Addr: "localhost:9092", Time: now.Add(100 * time.Millisecond), Leaving: true, Claims: map[int]uint64{}, Released: claimed(2)})
	// Node 3 is drained by an operator; node 4 crashed long ago (its announcement is old).
	e.send(fleet.DrainsTopic, fleet.EncodeDrainRequest(fleet.DrainRequest{Node: 3, Time: now}))
	e.announce(fleet.Announcement{Node: 4, Addr: "localhost:9094", Time: now.Add(-time.Minute), Claims: claimed(4)})
	e.start(false)
	e.waitSnap(10*time.Second, "the first snapshot", func(s console.Snapshot) error { return nil })
	put := func(p int, node int32, at time.Time) {
		e.log.Put(p, record.Record{Type: record.TypeClaim, Claim: 2, Time: at, ClaimInfo: &record.Claim{Number: 2, Node: node, Addr: fmt.Sprintf("localhost:909%d", node)}})
	}
	put(1, 1, now.Add(350*time.Millisecond)) // node 2's, released 250 ms before
	put(2, 1, now.Add(time.Second))          // node 3's, drained
	put(3, 1, now.Add(time.Second))          // node 4's, crashed
	put(4, 2, now.Add(time.Second))          // node 1's: alive and serving, the lease moved
	want := map[int]string{1: claims.ReasonStop, 2: claims.ReasonDrain, 3: claims.ReasonCrash, 4: claims.ReasonLease}
	snap := e.waitSnap(10*time.Second, "four handovers with their reasons", func(s console.Snapshot) error {
		if len(s.Handovers) != 4 {
			return fmt.Errorf("%d handovers", len(s.Handovers))
		}
		for _, h := range s.Handovers {
			if h.Reason != want[h.Partition] {
				return fmt.Errorf("partition %d: reason %q, want %q", h.Partition, h.Reason, want[h.Partition])
			}
		}
		return nil
	})
	for _, h := range snap.Handovers {
		switch h.Partition {
		case 1:
			if h.UnservedSeconds == nil || *h.UnservedSeconds < 0.2 || *h.UnservedSeconds > 0.3 {
				t.Errorf("partition 1 unserved %v, want 250ms (release to claim)", h.UnservedSeconds)
			}
		case 3:
			if h.UnservedSeconds == nil || *h.UnservedSeconds < 60 {
				t.Errorf("partition 3 unserved %v, want from the crashed node's last announcement", h.UnservedSeconds)
			}
		}
	}
}

// A drain from the console is planned and requested with inspect's calls and rules: a plan the
// fleet no longer matches is refused, the request is the drain command's, progress comes in the
// snapshots, and the undo is checked and requested the same way.
func TestConsoleDrainsAndUndoes(t *testing.T) {
	e := newConsoleEnv(t, roundRobin)
	owned := map[int32]map[int]uint64{1: {}, 2: {}, 3: {}}
	for p := range record.Partitions {
		owned[roundRobin(p)][p] = 1
	}
	announce := func() {
		for n, cl := range owned {
			e.announce(fleet.Announcement{Node: n, Addr: fmt.Sprintf("localhost:909%d", n), Time: time.Now(), Claims: cl})
		}
	}
	announce()
	e.start(true)
	e.waitSnap(10*time.Second, "three serving nodes", func(s console.Snapshot) error {
		if len(s.Nodes) != 3 || s.Nodes[1].State != "serving" {
			return fmt.Errorf("nodes %+v", s.Nodes)
		}
		return nil
	})
	if _, err := e.con.PlanDrain(e.ctx, []int32{9}); err == nil || !strings.Contains(err.Error(), "not a gateway of this fleet (known: 1, 2, 3)") {
		t.Fatalf("unknown node: %v", err)
	}
	if err := e.con.CheckUndo(e.ctx, []int32{2}); err == nil || !strings.Contains(err.Error(), "not drained") {
		t.Fatalf("undo of a node never drained: %v", err)
	}
	plan, err := e.con.PlanDrain(e.ctx, []int32{2})
	if err != nil || len(plan.Steps) != 5 {
		t.Fatalf("plan %+v %v", plan, err)
	}
	stale := plan
	stale.Steps = stale.Steps[1:]
	if err := e.con.Drain(e.ctx, stale); err == nil || !strings.Contains(err.Error(), "fleet changed since the plan was shown") {
		t.Fatalf("a plan the fleet does not match: %v", err)
	}
	if err := e.con.Drain(e.ctx, plan); err != nil {
		t.Fatal(err)
	}
	e.waitSnap(10*time.Second, "the drain request in the fleet", func(s console.Snapshot) error {
		if s.Drain == nil || !s.Nodes[1].DrainRequested {
			return fmt.Errorf("drain %+v, node 2 %+v", s.Drain, s.Nodes[1])
		}
		return nil
	})
	// The test plays the gateways: node 1 claims node 2's partitions and announces them.
	for p := range owned[2] {
		e.log.Put(p, record.Record{Type: record.TypeClaim, Claim: 2, Time: time.Now(), ClaimInfo: &record.Claim{Number: 2, Node: 1, Addr: "localhost:9091"}})
		owned[1][p] = 2
	}
	owned[2] = map[int]uint64{}
	announce()
	snap := e.waitSnap(10*time.Second, "the drain done", func(s console.Snapshot) error {
		if s.Drain == nil || !s.Drain.Done {
			return fmt.Errorf("drain %+v", s.Drain)
		}
		return nil
	})
	if got := render.Drain(*snap.Drain); got != "node 2 drained: every partition is claimed and served elsewhere" {
		t.Fatalf("sentence %q, events %+v", got, snap.Drain.Events)
	}
	if len(snap.Drain.Events) != 15 {
		t.Fatalf("%d events, want 3 per partition: %+v", len(snap.Drain.Events), snap.Drain.Events)
	}
	for _, h := range snap.Handovers {
		if h.Reason != claims.ReasonDrain {
			t.Fatalf("handover %+v of the drain", h)
		}
	}
	if _, err := e.con.PlanDrain(e.ctx, []int32{2}); err == nil || !strings.Contains(err.Error(), "already drained") {
		t.Fatalf("second drain: %v", err)
	}
	if err := e.con.Undo(e.ctx, []int32{2}); err != nil {
		t.Fatal(err)
	}
	e.waitSnap(10*time.Second, "the undo in the fleet", func(s console.Snapshot) error {
		if s.Drain == nil || !s.Drain.Undo || s.Nodes[1].DrainRequested {
			return fmt.Errorf("drain %+v node 2 %+v", s.Drain, s.Nodes[1])
		}
		return nil
	})
}

// The console asks the gateways the log announces, every one that is not gone, each alone, and
// its banner names each that does not answer.
func TestConsoleProbesEachAnnouncedGateway(t *testing.T) {
	e := newConsoleEnv(t, roundRobin)
	now := time.Now()
	e.announce(fleet.Announcement{Node: 1, Addr: "10.0.0.1:9092", Time: now, Claims: map[int]uint64{0: 1}})
	e.announce(fleet.Announcement{Node: 2, Addr: "10.0.0.2:9092", Time: now, Claims: map[int]uint64{1: 1}})
	e.announce(fleet.Announcement{Node: 3, Addr: "10.0.0.3:9092", Time: now.Add(-time.Hour), Claims: map[int]uint64{2: 1}}) // gone
	var mu sync.Mutex
	var asked []string
	e.configure = func(c *console.Console) {
		c.Dial = func(nodes []fleet.Node) dial.Gateways {
			return dial.DialGateways(nil, nodes, []string{"localhost:9092"})
		}
		c.Probe = func(_ context.Context, gws dial.Gateways) []dial.Reach {
			mu.Lock()
			asked = append(asked, gws.String())
			mu.Unlock()
			out := make([]dial.Reach, len(gws.List))
			for i, g := range gws.List {
				out[i].Gateway = g
				if g.Node == 2 {
					out[i].Err = errors.New("connection refused")
				}
			}
			return out
		}
	}
	e.start(false)
	checkfor.Eventually(t, 5*time.Second, "the banner names node 2", func() error {
		_, st := e.sink.last()
		if p := render.Problems(st); len(p) != 1 || p[0] != "no answer from node 2 at 10.0.0.2:9092: connection refused" || st.Healthy() {
			return fmt.Errorf("problems %q", p)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if a != "node 1 at 10.0.0.1:9092, node 2 at 10.0.0.2:9092" {
			t.Fatalf("probed %q: want the two live nodes", a)
		}
	}
}

// skewedDrainer writes each request and at once its undo, as a second operator whose clock is an
// hour behind would: the console never reads the drain alone, and the undo's time is before it.
type skewedDrainer struct {
	drainplan.IggyDrainer
	e *consoleEnv
}

func (d skewedDrainer) RequestDrain(ctx context.Context, node int32, undo bool) (uint64, error) {
	off, err := d.IggyDrainer.RequestDrain(ctx, node, undo)
	if err == nil {
		d.e.send(fleet.DrainsTopic, fleet.EncodeDrainRequest(fleet.DrainRequest{Node: node, Undo: !undo, Time: time.Now().Add(-time.Hour).UTC()}))
	}
	return off, err
}

// The console, like `drain --wait`, sees a drain undone by an operator whose clock is behind:
// log order decides which request is the later one.
func TestConsoleDrainUndoneFromASkewedClock(t *testing.T) {
	e := newConsoleEnv(t, roundRobin)
	for n := int32(1); n <= 3; n++ {
		cl := map[int]uint64{}
		for p := range record.Partitions {
			if roundRobin(p) == n {
				cl[p] = 1
			}
		}
		e.announce(fleet.Announcement{Node: n, Addr: fmt.Sprintf("localhost:909%d", n), Time: time.Now(), Claims: cl})
	}
	e.configure = func(c *console.Console) { c.Drainer = skewedDrainer{drainplan.IggyDrainer{Log: c.Log, Writer: e.c}, e} }
	e.start(false)
	e.waitSnap(10*time.Second, "three serving nodes", func(s console.Snapshot) error {
		if len(s.Nodes) != 3 || s.Nodes[1].State != "serving" {
			return fmt.Errorf("nodes %+v", s.Nodes)
		}
		return nil
	})
	plan, err := e.con.PlanDrain(e.ctx, []int32{2})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.con.Drain(e.ctx, plan); err != nil {
		t.Fatal(err)
	}
	snap := e.waitSnap(10*time.Second, "the drain undone", func(s console.Snapshot) error {
		if s.Drain == nil || !s.Drain.Undone {
			return fmt.Errorf("drain %+v", s.Drain)
		}
		return nil
	})
	if got := render.Drain(*snap.Drain); got != "the drain of node 2 was undone meanwhile" {
		t.Fatalf("sentence %q", got)
	}
}

// The store is said to be away once it was silent past StaleAfter, or at once when a request
// failed; the banner says since when the rows are and when the next retry comes.
func TestStatusStaleness(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s := console.Status{At: at.Add(900 * time.Millisecond), Store: "127.0.0.1:8090", StoreAnswered: at, StaleAfter: time.Second}
	if !s.StoreOK() || len(render.Problems(s)) != 0 {
		t.Fatalf("silent 900ms: %+v %q", s, render.Problems(s))
	}
	s.At = at.Add(1100 * time.Millisecond)
	if s.StoreOK() || render.Problems(s)[0] != "no answer from the store at 127.0.0.1:8090 for 1s; the rows are as of 09:00:00" {
		t.Fatalf("silent 1.1s: %q", render.Problems(s))
	}
	s.At, s.StoreError, s.Retry, s.NextRetry = at.Add(200*time.Millisecond), "connection refused", 2, at.Add(700*time.Millisecond)
	if s.StoreOK() || render.Problems(s)[0] != "no answer from the store at 127.0.0.1:8090 for 200ms (retry 2 in 500ms): connection refused; the rows are as of 09:00:00" {
		t.Fatalf("failed request: %q", render.Problems(s))
	}
	// One sentence per gateway that does not answer, naming its node; those that answer are
	// not mentioned.
	s = console.Status{At: at, StoreAnswered: at, StaleAfter: time.Second, Gateways: "node 1 at 10.0.0.1:9092, node 2 at 10.0.0.2:9092, node 3 at 10.0.0.3:9092",
		Unreachable: []dial.Reach{
			{Gateway: dial.Gateway{Node: 1, Addr: "10.0.0.1:9092"}, Err: errors.New("dial tcp: refused")},
			{Gateway: dial.Gateway{Node: 3, Addr: "10.0.0.3:9092"}, Err: errors.New("i/o timeout")},
		}}
	want := []string{"no answer from node 1 at 10.0.0.1:9092: dial tcp: refused", "no answer from node 3 at 10.0.0.3:9092: i/o timeout"}
	if !s.StoreOK() || s.Healthy() || !slices.Equal(render.Problems(s), want) {
		t.Fatalf("gateways away: %q", render.Problems(s))
	}
	s.Unreachable = []dial.Reach{{Gateway: dial.Gateway{Addr: "localhost:9092"}, Err: errors.New("dial tcp: refused")}}
	if p := render.Problems(s); len(p) != 1 || p[0] != "no answer from localhost:9092: dial tcp: refused" {
		t.Fatalf("given address away: %q", p)
	}
}

// The transactions screen reads the model the console follows, as `claims --transactions` reads
// it: an open transaction is listed, and one that ends after the console started is gone from
// the next answer.
func TestConsoleTransactions(t *testing.T) {
	e := newConsoleEnv(t, roundRobin)
	const id = "etl-7"
	p := record.Partition(id)
	open := record.Transaction{ID: id, ProducerID: 42, Epoch: 3, Timeout: time.Minute, State: record.TxnOngoing,
		Partitions: []record.TxnTopic{{Topic: "orders", Partitions: []int32{0, 1}}}, Started: e.epoch, Updated: e.epoch}
	e.log.Put(p, record.Record{Type: record.TypeTransaction, Claim: 1, Time: e.epoch, Transaction: &open})
	e.start(false)
	rows, err := e.con.Transactions(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].TransactionalID != id || rows[0].Partitions != "orders[0,1]" || rows[0].Coordinator == nil ||
		*rows[0].Coordinator != roundRobin(p) || rows[0].AgeSeconds == nil || *rows[0].AgeSeconds < 59 || !rows[0].Hanging {
		t.Fatalf("rows %+v", rows)
	}
	ended := open
	ended.State, ended.Updated = record.TxnCompleteAbort, time.Now()
	e.log.Put(p, record.Record{Type: record.TypeTransaction, Claim: 1, Time: time.Now(), Transaction: &ended})
	checkfor.Eventually(t, 10*time.Second, "the ended transaction gone", func() error {
		rows, err := e.con.Transactions(e.ctx)
		if err != nil {
			return err
		}
		return checkfor.True(len(rows) == 0, "rows %+v", rows)
	})
}
