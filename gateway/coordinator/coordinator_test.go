package coordinator

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The log's shape is created when missing, accepted when right, and refused with a message that
// names the topic and both counts when a topic has another partition count.
func TestShapeCreatedAndRefused(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	ctx := ctxT(t)
	if err := logio.EnsureShape(ctx, cl, "kafka"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{fleet.LogTopic: 16, fleet.OwnersTopic: 1} {
		td, err := cl.GetTopic(ctx, wire.NamedID("kafka.meta"), wire.NamedID(name))
		if err != nil || td.PartitionsCount != want {
			t.Fatalf("topic %s: %v partitions, err %v", name, td, err)
		}
	}
	if err := logio.EnsureShape(ctx, cl, "kafka"); err != nil {
		t.Fatalf("second start on the right shape: %v", err)
	}

	st, err := cl.CreateStream(ctx, "other.meta")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(ctx, wire.NumericID(st.ID), fleet.LogTopic, 3, iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = Start(ctx, Config{Client: cl, Stream: "other", NodeID: 1, Log: true})
	var se *logio.ShapeError
	if !errors.As(err, &se) || se.Have != 3 || se.Want != 16 || !strings.Contains(err.Error(), "other.meta/coordinators has 3 partitions") {
		t.Fatalf("Start on a 3-partition log: %v", err)
	}
}

// A lease bound at or above the store's eviction time is refused with the arithmetic.
func TestLeaseBoundRefused(t *testing.T) {
	s := newStore(t)
	_, err := Start(ctxT(t), Config{Client: s.client(t), Log: true, HeartbeatInterval: 5 * time.Second, LeaseBound: 6 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "below 1.2 x heartbeat interval 5s = 6s") {
		t.Fatalf("Start with a 6 s bound and a 5 s heartbeat: %v", err)
	}
}

func member(id string) record.Member {
	return record.Member{
		MemberID: id, InstanceID: "static-" + id, ClientID: "kgo", ClientHost: "10.1.2.3",
		SessionTimeout: 45 * time.Second, RebalanceTimeout: time.Minute,
		Protocols: []record.Protocol{
			{Name: "cooperative-sticky", Metadata: []byte{0, 3, 0, 0, 0, 1, 0, 1, 't', 0xff}},
			{Name: "range", Metadata: []byte{}},
			{Name: "roundrobin", Metadata: []byte{9}},
		},
		Assignment: []byte{0, 3, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1, 0, 0, 0, 0},
	}
}

func stableGroup(name string, gen int32) record.Group {
	return record.Group{Name: name, Generation: gen, ProtocolType: "consumer", Protocol: "cooperative-sticky",
		Leader: "m-1", State: "Stable", Members: []record.Member{member("m-1"), member("m-2")}}
}

func commit(g, topic string, p int32, off int64) record.Record {
	return record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &record.OffsetCommit{
		Group: g, Topic: topic, Partition: p, Offset: off, LeaderEpoch: 3, Metadata: "m" + fmt.Sprint(off)}}
}

// Two coordinators on one store split the 16 partitions; when one's lease session closes, the
// other takes its partitions over with the groups (every member field, byte for byte),
// generations and offsets that the records hold, without anything being rejoined.
func TestTwoCoordinatorsSplitAndTakeOver(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, nil)
	b := start(t, s, 2, nil)
	waitServing(t, "16 partitions split over two gateways", func() error {
		sa, sb := serving(a), serving(b)
		for p := range sa {
			if sb[p] {
				return fmt.Errorf("partition %d served by both", p)
			}
		}
		return checkfor.True(len(sa)+len(sb) == 16 && len(sa) > 0 && len(sb) > 0 && settled(a) && settled(b), "a serves %d, b serves %d", len(sa), len(sb))
	})
	// Each sees the other's partitions through the announcements.
	waitServing(t, "owners known everywhere", func() error {
		return checkfor.True(len(a.Owners()) == 16 && len(b.Owners()) == 16, "a knows %d owners, b %d", len(a.Owners()), len(b.Owners()))
	})
	// The views are pushed by the follow loops: each names one controller and both gateways.
	waitServing(t, "one controller and two live brokers in both views", func() error {
		av, bv := a.Fleet().View(), b.Fleet().View()
		return checkfor.True(av.Controller == bv.Controller && av.Controller >= 1 && len(av.Live) == 2 && len(bv.Live) == 2,
			"views %+v and %+v", av, bv)
	})

	// Groups in a's partitions, written through a's journals.
	ctx := ctxT(t)
	want := map[string]record.Group{}
	for p := range serving(a) {
		g := groupIn(p, "g")
		rg := stableGroup(g, int32(10+p))
		j := journal{part(a, p)}
		if err := j.Append(ctx, record.Record{Type: record.TypeGroup, Group: &rg}, commit(g, "orders", 0, 100), commit(g, "orders", 1, 200)); err != nil {
			t.Fatal(err)
		}
		want[g] = rg
		if node, _, _, code := (directory{b}).Coordinator(g, 0); code != 0 || node != 1 {
			checkfor.Eventually(t, 5*time.Second, "b names a as coordinator", func() error {
				node, _, _, code := (directory{b}).Coordinator(g, 0)
				return checkfor.True(code == 0 && node == 1, "b names %d (code %d)", node, code)
			})
		}
		if _, code := (directory{b}).Manager(g); code != kerr.NotCoordinator.Code {
			t.Fatalf("b answers %d for a group of a", code)
		}
	}
	// a crashes: its lease session ends with it and nothing is released (a gateway whose session
	// alone broke joins again and wins its partitions back, fleet.Lease).
	gained := serving(a)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for p := range gained {
		if _, code := (directory{a}).Manager(groupIn(p, "g")); code != kerr.NotCoordinator.Code {
			t.Fatalf("a still answers %d right after it stopped", code)
		}
	}
	waitServing(t, "b serves a's partitions", func() error {
		sb := serving(b)
		for p := range gained {
			if !sb[p] {
				return fmt.Errorf("b does not serve %d yet", p)
			}
		}
		return nil
	})
	for g, rg := range want {
		m, code := (directory{b}).Manager(g)
		if code != 0 {
			t.Fatalf("b answers %d for %s", code, g)
		}
		groups, offsets := m.State()
		var got *record.Group
		for i := range groups {
			if groups[i].Name == g {
				got = &groups[i]
			}
		}
		if got == nil || !reflect.DeepEqual(got.Members, rg.Members) || got.Generation != rg.Generation || got.Leader != rg.Leader || got.Protocol != rg.Protocol {
			t.Fatalf("restored %s:\n%+v\nwant\n%+v", g, got, rg)
		}
		n := 0
		for _, o := range offsets {
			if o.Group == g {
				n++
				if o.Offset != int64(100*(o.Partition+1)) || o.LeaderEpoch != 3 || o.Metadata != fmt.Sprint("m", o.Offset) {
					t.Fatalf("restored offset %+v", o)
				}
			}
		}
		if n != 2 {
			t.Fatalf("%s restored with %d offsets", g, n)
		}
	}
}

// A writer whose claim was overtaken gets ErrNotCoordinator, stops serving the partition in the
// same call, and its record is void for every reader.
func TestFencedWriter(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, heldLease)
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	ctx := ctxT(t)
	pt := part(a, 3)
	g := groupIn(3, "fenced")
	if err := (journal{pt}).Append(ctx, commit(g, "t", 0, 1)); err != nil {
		t.Fatal(err)
	}
	// Another gateway claims partition 3 (the lease moved while a was unaware), and a appends
	// before any read of its own sees that claim: the test holds the partition's lock from
	// before the claim is written until the append returns, and a's tail only tries the lock.
	// So the record lands behind the newer claim, and only the read-back can refuse it.
	newer := pt.claim.Load() + 1
	b, _ := record.Encode(record.Record{Type: record.TypeClaim, Claim: newer, ClaimInfo: &record.Claim{Number: newer, Node: 2, Addr: "x:1"}})
	pt.mu.Lock()
	_, err := a.cfg.Client.SendMessages(ctx, a.meta, a.topic, 3, []iggy.Message{{Payload: b}})
	if err == nil {
		err = pt.appendLocked(ctx, []record.Record{commit(g, "t", 0, 2)}, false)
	}
	pt.mu.Unlock()
	if !errors.Is(err, group.ErrNotCoordinator) || !strings.Contains(err.Error(), "a newer claim precedes the record") {
		t.Fatalf("append behind a newer claim: %v", err)
	}
	if _, code := (directory{a}).Manager(g); code == 0 {
		t.Fatal("a still serves the fenced partition")
	}
	st := fullReplay(t, a.cfg.Client, a, 3)
	if o, ok := st.Offset(g, "t", 0); !ok || o.Offset != 1 {
		t.Fatalf("a reader sees offset %+v, want the one before the newer claim", o)
	}
	// The fenced append was written, and every reader voids it.
	if st.Counts().Void != 1 || st.Claim().Node != 2 {
		t.Fatalf("reader counts %+v claim %+v, want the fenced record void behind node 2's claim", st.Counts(), st.Claim())
	}
}

// Checkpoints come every CheckpointEvery records, the last one is found through the checkpoint
// consumer offset, and a takeover from it equals a full replay. Deletion markers and checkpoint
// size follow the live state, not the history.
func TestCheckpointReplayEqualsFullReplayAndMarkersBounded(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, func(c *Config) { heldLease(c); c.CheckpointEvery = 50 })
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	ctx := ctxT(t)
	const p = 5
	pt := part(a, p)
	j := journal{pt}
	keep := groupIn(p, "keep")
	rg := stableGroup(keep, 4)
	if err := j.Append(ctx, record.Record{Type: record.TypeGroup, Group: &rg}); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for round := range 6 {
		for i := range 40 {
			g := groupIn(p, fmt.Sprintf("tmp%d-%d", round, i))
			if err := j.Append(ctx, commit(g, "t", 0, int64(i))); err != nil {
				t.Fatal(err)
			}
			if err := j.Append(ctx, record.Record{Type: record.TypeGroupDeleted, GroupDeleted: &record.GroupDeleted{Group: g}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.Append(ctx, commit(keep, "t", int32(round), int64(round))); err != nil {
			t.Fatal(err)
		}
		pt.mu.Lock()
		c := pt.st.Counts()
		pt.mu.Unlock()
		if c.Markers > 50 {
			t.Fatalf("round %d: %d deletion markers, more than one checkpoint interval", round, c.Markers)
		}
		off, ok, err := a.cfg.Client.GetOffset(ctx, checkpointConsumer, a.meta, a.topic, p)
		if err != nil || !ok {
			t.Fatalf("checkpoint offset: %v %v", ok, err)
		}
		cp, ok := pt.readCheckpoint(ctx, off.StoredOffset)
		if !ok {
			t.Fatalf("no checkpoint at the stored offset %d", off.StoredOffset)
		}
		raw, _ := record.Encode(cp)
		sizes = append(sizes, len(raw))
		if len(cp.Checkpoint.Groups) != 1 {
			t.Fatalf("checkpoint holds %d groups, want only the live one", len(cp.Checkpoint.Groups))
		}
	}
	if sizes[len(sizes)-1] > 2*sizes[0] {
		t.Fatalf("checkpoint sizes grew with history: %v", sizes)
	}

	full := fullReplay(t, a.cfg.Client, a, p)
	b := newPartition(a, p, time.Now())
	if err := b.rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if b.st.Counts().Applied >= full.Counts().Applied {
		t.Fatalf("rebuild applied %d records, a full replay %d: the checkpoint was not used", b.st.Counts().Applied, full.Counts().Applied)
	}
	if got, want := b.st.Snapshot(0), full.Snapshot(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay from checkpoint\n%+v\nwant\n%+v", got, want)
	}
	if got, _ := b.st.Group(keep); !reflect.DeepEqual(got, rg) {
		t.Fatalf("group through a checkpoint\n%+v\nwant\n%+v", got, rg)
	}
}

// Deciding whether a checkpoint is due reads counters only: appends to a partition holding
// 100,000 offsets take no snapshot until the record count is reached, and the decision
// allocates nothing.
func TestCheckpointDecisionIsNotAScan(t *testing.T) {
	st := record.NewState()
	st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1}})
	for i := range 100000 {
		r := commit(fmt.Sprintf("g%d", i/10), "t", int32(i%10), 1)
		r.Claim = 1
		st.Apply(uint64(i+1), r)
	}
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() { st.CheckpointDue(1<<30, 24*time.Hour, now, now) }); n != 0 {
		t.Fatalf("CheckpointDue allocates %v times", n)
	}

	s := newStore(t)
	var snaps atomic.Int64
	a := start(t, s, 1, func(c *Config) { heldLease(c); c.CheckpointEvery = 30 })
	a.onSnapshot = func() { snaps.Add(1) }
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	j := journal{part(a, 0)}
	for i := range 28 { // the claim is the first of the 30 records
		if err := j.Append(ctxT(t), commit(groupIn(0, "x"), "t", int32(i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	if n := snaps.Load(); n != 0 {
		t.Fatalf("%d snapshots before the checkpoint interval", n)
	}
	if err := j.Append(ctxT(t), commit(groupIn(0, "x"), "t", 99, 1)); err != nil {
		t.Fatal(err)
	}
	if n := snaps.Load(); n != 1 {
		t.Fatalf("%d snapshots at the checkpoint interval, want 1", n)
	}
}

// lagSource is a log whose reader falls behind retention: the messages in [gapFrom, gapTo) are
// gone.
type lagSource struct {
	msgs           []logio.Msg
	gapFrom, gapTo uint64
}

func (l *lagSource) Read(_ context.Context, from uint64, count uint32) ([]logio.Msg, error) {
	var out []logio.Msg
	for _, m := range l.msgs {
		if m.Offset >= from && (m.Offset < l.gapFrom || m.Offset >= l.gapTo) && len(out) < int(count) {
			out = append(out, m)
		}
	}
	return out, nil
}

// A reader that falls behind never skips what it missed: a group deletion inside the gap is not
// silently lost (the group would come back to life); the replay reports the gap instead, and a
// rebuild from a checkpoint after the gap gives the true state.
func TestGapIsNeverSkipped(t *testing.T) {
	enc := func(r record.Record) []byte { b, _ := record.Encode(r); return b }
	g := "doomed"
	log := []record.Record{
		{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1}},
		commit(g, "t", 0, 5),
		{Type: record.TypeGroupDeleted, GroupDeleted: &record.GroupDeleted{Group: g}},
		commit("other", "t", 0, 1),
	}
	src := &lagSource{gapFrom: 2, gapTo: 3}
	for i, r := range log {
		if i > 0 {
			r.Claim = 1
		}
		src.msgs = append(src.msgs, logio.Msg{Offset: uint64(i), Payload: enc(r)})
	}
	st := record.NewState()
	_, err := logio.Replay(context.Background(), src, st, 0, -1, nil, nil)
	if !errors.Is(err, logio.ErrGap) {
		t.Fatalf("replay across a gap: %v", err)
	}
	if _, ok := st.Offset("other", "t", 0); ok {
		t.Fatal("records after the gap were applied")
	}
	// A checkpoint written after the deletion covers the gap.
	cpState := record.NewState()
	for i, r := range log {
		if i > 0 {
			r.Claim = 1
		}
		cpState.Apply(uint64(i), r)
	}
	cp := cpState.Snapshot(3)
	src.msgs = append(src.msgs, logio.Msg{Offset: 4, Payload: enc(record.Record{Type: record.TypeCheckpoint, Claim: 1, Checkpoint: &cp})})
	st = record.NewState()
	if _, err := logio.Replay(context.Background(), src, st, 4, -1, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Offset(g, "t", 0); ok {
		t.Fatal("the deleted group's offset came back")
	}
	if _, ok := st.Offset("other", "t", 0); !ok {
		t.Fatal("state after the checkpoint is missing")
	}
}

// A gateway whose last lease confirmation is older than the bound stops answering as
// coordinator before its next lease read, and its journal refuses to write; the next
// confirmation brings it back.
func TestStaleLeaseStopsServing(t *testing.T) {
	s := newStore(t)
	clk := clock.NewFake(time.Now())
	a := start(t, s, 1, func(c *Config) {
		c.Clock = clk
		c.LeasePoll = time.Hour // only the first read, then the test moves the clock
		c.LeaseBound = 10 * time.Second
		c.HandoverBound = 0 // the product's default: 3 x LeasePoll, capped at LeaseBound
		c.AnnounceInterval, c.FollowInterval = time.Hour, time.Hour
	})
	driveUntil(t, a, "a serves all", func() error { return servesAll(a) })
	g := groupIn(7, "frozen")
	if _, code := (directory{a}).Manager(g); code != 0 {
		t.Fatalf("fresh lease answers %d", code)
	}
	// HandoverBound derives from LeasePoll (3 x one hour), capped at LeaseBound: 10 s. One
	// nanosecond before it the lease is still fresh; at it, it is not.
	if a.cfg.HandoverBound != 10*time.Second {
		t.Fatalf("HandoverBound %v, want the 10 s LeaseBound caps it to", a.cfg.HandoverBound)
	}
	clk.Advance(a.cfg.HandoverBound - time.Nanosecond)
	if _, code := (directory{a}).Manager(g); code != 0 {
		t.Fatalf("lease a nanosecond short of its bound answers %d", code)
	}
	clk.Advance(time.Nanosecond)
	if _, code := (directory{a}).Manager(g); code != kerr.NotCoordinator.Code {
		t.Fatalf("lease at its bound answers %d", code)
	}
	if err := (journal{part(a, 7)}).Append(ctxT(t), commit(g, "t", 0, 1)); !errors.Is(err, group.ErrNotCoordinator) {
		t.Fatalf("append on a stale lease: %v", err)
	}
}

// A gained partition whose previous owner did not release it starts serving exactly
// HandoverBound after the gain, not a nanosecond before, on the coordinator's clock; one whose
// previous owner released it serves at once.
func TestGainedPartitionServesAfterHandoverBound(t *testing.T) {
	s := newStore(t)
	clk := clock.NewFake(time.Now())
	a := start(t, s, 1, func(c *Config) {
		c.Clock = clk
		c.LeasePoll = 20 * time.Millisecond // on the fake clock: no lease read after the first
		c.HandoverBound = 0                 // the product's default, derived from LeasePoll
		c.AnnounceInterval, c.FollowInterval = time.Hour, time.Hour
	})
	if a.cfg.HandoverBound != 3*a.cfg.LeasePoll {
		t.Fatalf("HandoverBound %v, want 3 x LeasePoll %v", a.cfg.HandoverBound, a.cfg.LeasePoll)
	}
	waiting := func(p int, prev record.Claim) *partition {
		pt := newPartition(a, p, clk.Now())
		t.Cleanup(pt.cancel)
		pt.prev = prev
		pt.serveAt = pt.gained.Add(a.cfg.HandoverBound)
		pt.status.Store(stWaiting)
		return pt
	}
	other := waiting(3, record.Claim{Number: 7, Node: 2}) // node 2 announced no release
	other.promote()
	if other.status.Load() != stWaiting {
		t.Fatalf("served at the gain, status %d", other.status.Load())
	}
	clk.Advance(a.cfg.HandoverBound - time.Nanosecond)
	other.promote()
	if other.status.Load() != stWaiting {
		t.Fatalf("served a nanosecond before HandoverBound, status %d", other.status.Load())
	}
	clk.Advance(time.Nanosecond)
	other.promote()
	if other.status.Load() != stServing {
		t.Fatalf("not serving at HandoverBound after the gain, status %d", other.status.Load())
	}

	a.noteReleased(4, 9)
	own := waiting(4, record.Claim{Number: 9, Node: 1})
	own.promote()
	if own.status.Load() != stServing {
		t.Fatalf("a partition this gateway released is not served at once, status %d", own.status.Load())
	}
}

// Without the log, the lowest node id coordinates every group, the others answer 16 and name
// it, and offsets are Iggy consumer offsets another gateway can read.
func TestLogOff(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	ctx := ctxT(t)
	st, err := cl.CreateStream(ctx, "kafka")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(ctx, wire.NumericID(st.ID), "orders", 2, iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	off := func(c *Config) { c.Log = false; c.Brokers = append(c.Brokers, brokerOf(1), brokerOf(2)) }
	a := start(t, s, 1, off)
	b := start(t, s, 2, off)
	if _, code := (directory{a}).Manager("g"); code != 0 {
		t.Fatalf("lowest node answers %d", code)
	}
	if _, code := (directory{b}).Manager("g"); code != kerr.NotCoordinator.Code {
		t.Fatalf("other node answers %d", code)
	}
	if node, _, port, code := (directory{b}).Coordinator("g", 0); node != 1 || port != 9001 || code != 0 {
		t.Fatalf("FindCoordinator at b: %d %d %d", node, port, code)
	}
	// No transactions and no share groups: answers clients give up on at once, not the
	// retriable COORDINATOR_NOT_AVAILABLE.
	for keyType, want := range map[int8]int16{1: kerr.TransactionalIDAuthorizationFailed.Code, 2: kerr.InvalidRequest.Code, 9: kerr.InvalidRequest.Code} {
		if node, _, _, code := (directory{a}).Coordinator("tx", keyType); node != -1 || code != want {
			t.Fatalf("FindCoordinator of key type %d: node %d, code %d; want -1, %d", keyType, node, code, want)
		}
	}
	if a.Fleet().View().Controller != a.cfg.NodeID || b.Fleet().View().Controller != a.cfg.NodeID {
		t.Fatal("controller is not the lowest node")
	}
	for range 50 {
		if _, err := cl.SendMessages(ctx, wire.NamedID("kafka"), wire.NamedID("orders"), 1, []iggy.Message{{Payload: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	j := offsetJournal{c: cl, stream: wire.NamedID("kafka")}
	if err := j.Append(ctx, commit("g", "orders", 1, 42)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := IggyOffsets(cl, "kafka")(ctx, kafkaIdentity(), "g", "orders", 1)
	if err != nil || !ok || got != 42 {
		t.Fatalf("offset read back %d %v %v", got, ok, err)
	}
	if _, ok, _ := IggyOffsets(cl, "kafka")(ctx, kafkaIdentity(), "g", "orders", 0); ok {
		t.Fatal("an offset for a partition never committed")
	}
}

// Leave stops serving and leaves kafka-gateways: the other gateway serves all 16 partitions and
// no longer lists the leaver as live.
func TestLeaveHandsOver(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, nil)
	b := start(t, s, 2, nil)
	waitServing(t, "split", func() error {
		return checkfor.True(len(serving(a))+len(serving(b)) == 16 && len(serving(a)) > 0, "a %d b %d", len(serving(a)), len(serving(b)))
	})
	waitServing(t, "b sees a live", func() error { return checkfor.True(len(b.Fleet().View().Live) == 2, "%v", b.Fleet().View().Live) })
	if err := a.Leave(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(serving(a)); n != 0 {
		t.Fatalf("a serves %d partitions after Leave", n)
	}
	// Leaderships move first, the broker leaves the list later: from a's leaving announcement,
	// b lists a, leading nothing, for departedListed, then not at all. The view is checked at
	// moments of the test's choosing, so a loaded machine cannot miss the window.
	var leaving fleet.Announcement
	waitServing(t, "b read a's leaving announcement", func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		an, ok := b.fv.Announcement(1)
		leaving = an
		return checkfor.True(ok && an.Leaving, "a's announcement %+v", an)
	})
	listed := func(v *kafka.FleetView) bool {
		return slices.ContainsFunc(v.Live, func(br kafka.Broker) bool { return br.NodeID == 1 })
	}
	if v := b.brokers.viewAt(leaving.Time.Add(departedListed / 2)); !listed(v) || !slices.Contains(v.Draining, 1) {
		t.Fatalf("within departedListed of its leaving: live %v, draining %v; want a listed, leading nothing", v.Live, v.Draining)
	}
	if v := b.brokers.viewAt(leaving.Time.Add(departedListed)); listed(v) || slices.Contains(v.Draining, 1) {
		t.Fatalf("departedListed after its leaving: live %v, draining %v; want a gone", v.Live, v.Draining)
	}
	waitServing(t, "b serves all and a is gone", func() error {
		live := b.Fleet().View().Live
		return checkfor.True(len(serving(b)) == 16 && len(live) == 1 && b.Fleet().View().Controller == b.cfg.NodeID, "b serves %d, live %v", len(serving(b)), live)
	})
	if slices.Contains(b.Fleet().View().Draining, 1) {
		t.Fatal("a gone from the list still counts as leading nothing")
	}
}

// A gateway that stops without leaving (its lease session ends as a crashed gateway's does)
// leaves the other's view once its lease loop reads the membership, with no request asking:
// the view is pushed. (A client that lost its connection asks for Metadata at once, sooner than
// that read; the Kafka listener leaves the gone gateway out of that answer because its port
// refuses connections, package kafka's reach.go.)
func TestCrashedGatewayLeavesTheView(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, nil)
	b := start(t, s, 2, nil)
	for range 3 {
		waitServing(t, "b lists a", func() error { return checkfor.True(len(b.Fleet().View().Live) == 2, "%v", b.Fleet().View().Live) })
		_ = a.Close()
		waitServing(t, "b's view without a", func() error { return checkfor.True(len(b.Fleet().View().Live) == 1, "%v", b.Fleet().View().Live) })
		a = start(t, s, 1, nil)
	}
}

// Sixteen gateways hold the log's leases; a seventeenth starts, holds none (it could not tell
// its member id, and a member that cannot would hold partitions nobody serves), and takes a
// share once one of the sixteen has stopped.
func TestSeventeenthGatewayWaitsForALease(t *testing.T) {
	s := newStore(t)
	var cs []*Coordinator
	for n := range int32(record.Partitions) {
		cs = append(cs, start(t, s, n+1, nil))
	}
	total := func() int {
		n := 0
		for _, c := range cs {
			n += len(serving(c))
		}
		return n
	}
	waitServing(t, "16 gateways serving one partition each", func() error {
		return checkfor.True(total() == record.Partitions, "%d partitions served", total())
	})
	extra := start(t, s, 17, nil)
	if m := extra.member.Load(); m != -1 {
		t.Fatalf("the 17th gateway is lease member %d", m)
	}
	if n := len(serving(extra)); n != 0 {
		t.Fatalf("the 17th gateway serves %d partitions", n)
	}
	// Stop one that serves (under the rendezvous lease some of 16 members win no partition);
	// the 17th takes its member id, which Iggy reuses, and so its partitions.
	i := slices.IndexFunc(cs, func(c *Coordinator) bool { return len(serving(c)) > 0 })
	if err := cs[i].Close(); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 15*time.Second, "the 17th gateway serving once one of the 16 stopped", func() error {
		return checkfor.True(len(serving(extra)) > 0 && extra.member.Load() >= 0, "serves %d, member %d", len(serving(extra)), extra.member.Load())
	})
}
