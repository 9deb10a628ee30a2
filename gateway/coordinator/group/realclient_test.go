package group

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// oneManager is a Directory with one manager for every group, on this node.
type oneManager struct {
	m    *Manager
	host string
	port int32
}

func (d *oneManager) Manager(string) (*Manager, int16) { return d.m, 0 }
func (d *oneManager) Managers() []*Manager             { return []*Manager{d.m} }
func (d *oneManager) Coordinator(string, int8) (int32, string, int32, int16) {
	return 0, d.host, d.port, 0
}

type stack struct {
	addr string
	m    *Manager
	j    *memJournal
}

// startStack runs the embedded store on a temp dir, the bridge over it, and a Kafka listener
// whose groups are served by one Manager on the wall clock; edit, when given, changes the
// manager's configuration.
func startStack(t *testing.T, edit ...func(*Config)) *stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := teststore.Start(t, nil)
	ic, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ic.Close() })
	b, err := bridge.New(ctx, ic, bridge.Config{AutoCreateTopics: true, DefaultPartitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := int32(ln.Addr().(*net.TCPAddr).Port)
	j := &memJournal{}
	cfg := Config{Journal: j, MinSessionTimeout: time.Second}
	for _, e := range edit {
		e(&cfg)
	}
	m := NewManager(cfg)
	t.Cleanup(m.Close)
	ks, err := kafka.NewServer(kafka.Config{
		AdvertisedHost:   "127.0.0.1",
		AdvertisedPort:   port,
		AutoCreateTopics: true,
		Storage:          b.As(ic),
		Groups:           NewRouter(&oneManager{m: m, host: "127.0.0.1", port: port}),
	})
	if err != nil {
		t.Fatal(err)
	}
	kdone := make(chan error, 1)
	go func() { kdone <- ks.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = ks.Shutdown(ctx)
		<-kdone
	})
	return &stack{addr: ln.Addr().String(), m: m, j: j}
}

func (s *stack) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func groupOpts(group string, extra ...kgo.Opt) []kgo.Opt {
	return append([]kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(6 * time.Second),
		kgo.HeartbeatInterval(100 * time.Millisecond),
		kgo.RebalanceTimeout(5 * time.Second),
		kgo.DisableAutoCommit(),
	}, extra...)
}

// produce writes n records to each of the 4 partitions of "events".
func (s *stack) produce(t *testing.T, n int) {
	t.Helper()
	cl := s.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(tctx(t), 4, 1, nil, "events"); err != nil || (r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists)) {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	var recs []*kgo.Record
	for p := range int32(4) {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: []byte(strconv.Itoa(i))})
		}
	}
	if err := cl.ProduceSync(tctx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func tctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// consumer runs a group member that polls until closed and tracks its assignment.
type consumer struct {
	cl      *kgo.Client
	mu      sync.Mutex
	owned   map[int32]bool
	revoked int
	read    map[int32][]int64
	done    chan struct{}
}

func (s *stack) consumer(t *testing.T, group string, opts ...kgo.Opt) *consumer {
	t.Helper()
	c := &consumer{owned: map[int32]bool{}, read: map[int32][]int64{}, done: make(chan struct{})}
	opts = append(groupOpts(group, opts...),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.mu.Lock()
			defer c.mu.Unlock()
			for _, p := range m["events"] {
				c.owned[p] = true
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.revoked++
			for _, p := range m["events"] {
				delete(c.owned, p)
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.revoked++
			for _, p := range m["events"] {
				delete(c.owned, p)
			}
		}))
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c.cl = cl
	go func() {
		defer close(c.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				c.mu.Lock()
				c.read[r.Partition] = append(c.read[r.Partition], r.Offset)
				c.mu.Unlock()
			})
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *consumer) close() {
	c.cl.Close()
	<-c.done
}

func (c *consumer) partitions() []int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ps []int32
	for p := range c.owned {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

func (c *consumer) revokes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.revoked
}

// split checks that the consumers own the 4 partitions between them, want each.
func split(cs []*consumer, want ...int) error {
	seen := map[int32]bool{}
	for i, c := range cs {
		ps := c.partitions()
		if len(ps) != want[i] {
			return fmt.Errorf("consumer %d owns %v, want %d partitions", i, ps, want[i])
		}
		for _, p := range ps {
			if seen[p] {
				return fmt.Errorf("partition %d owned twice", p)
			}
			seen[p] = true
		}
	}
	return nil
}

// Two franz-go members share a group, rebalance when one joins and when one leaves, with the
// eager range and the cooperative-sticky balancers.
func TestRealClientGroupRebalance(t *testing.T) {
	s := startStack(t)
	s.produce(t, 5)
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
		protocol string
	}{
		{"range", kgo.RangeBalancer(), "range"},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer(), "cooperative-sticky"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			group := "rebalance-" + tc.name
			a := s.consumer(t, group, kgo.Balancers(tc.balancer))
			checkfor.Eventually(t, 20*time.Second, "first member owns all", func() error { return split([]*consumer{a}, 4) })
			b := s.consumer(t, group, kgo.Balancers(tc.balancer))
			checkfor.Eventually(t, 20*time.Second, "two members split", func() error { return split([]*consumer{a, b}, 2, 2) })

			adm := kadm.NewClient(s.client(t))
			// A cooperative rebalance settles in two generations; describe once it has.
			checkfor.Eventually(t, 20*time.Second, "described group", func() error {
				dg, err := adm.DescribeGroups(tctx(t), group)
				if err != nil {
					return err
				}
				d := dg[group]
				if d.Err != nil || d.State != "Stable" || d.Protocol != tc.protocol || d.ProtocolType != "consumer" || len(d.Members) != 2 {
					return fmt.Errorf("describe: %+v", d)
				}
				for _, m := range d.Members {
					ca, ok := m.Assigned.AsConsumer()
					if !ok || len(ca.Topics) != 1 || len(ca.Topics[0].Partitions) != 2 || m.ClientHost != "127.0.0.1" || m.ClientID != "kgo" {
						return fmt.Errorf("member: %+v %+v", m, ca)
					}
				}
				return nil
			})
			snap := s.j.lastGroup(group)
			if snap == nil || len(snap.Members) != 2 || snap.Protocol != tc.protocol {
				t.Fatalf("snapshot: %+v", snap)
			}

			b.close()
			checkfor.Eventually(t, 20*time.Second, "left member's partitions move", func() error { return split([]*consumer{a}, 4) })
			a.close()
			checkfor.Eventually(t, 10*time.Second, "group empty", func() error {
				dg, err := adm.DescribeGroups(tctx(t), group)
				if err != nil {
					return err
				}
				return checkfor.True(dg[group].State == "Empty", "state %s", dg[group].State)
			})
		})
	}
}

// Commits are kept, fetched and resumed from; a new member starts where the last one stopped.
func TestRealClientCommitAndResume(t *testing.T) {
	s := startStack(t)
	s.produce(t, 10)
	cl := s.client(t, groupOpts("resume")...)
	got := 0
	for got < 20 {
		fs := cl.PollRecords(tctx(t), 20-got)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(tctx(t)); err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(s.client(t))
	offs, err := adm.FetchOffsets(tctx(t), "resume")
	if err != nil {
		t.Fatal(err)
	}
	committed := int64(0)
	offs.Each(func(o kadm.OffsetResponse) { committed += o.At })
	if committed != 20 {
		t.Fatalf("committed %d records, want 20: %+v", committed, offs)
	}
	cl.Close()

	rest := s.client(t, groupOpts("resume")...)
	seen := map[string]bool{}
	for len(seen) < 20 {
		fs := rest.PollFetches(tctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			key := fmt.Sprintf("%d/%d", r.Partition, r.Offset)
			if seen[key] {
				t.Fatalf("read %s twice", key)
			}
			if r.Offset < offs["events"][r.Partition].At {
				t.Fatalf("read %s below the committed offset %d", key, offs["events"][r.Partition].At)
			}
			seen[key] = true
		})
	}

	// The simple-consumer pattern: an admin commit to a group without members.
	toCommit := kadm.Offsets{}
	toCommit.Add(kadm.Offset{Topic: "events", Partition: 2, At: 7, LeaderEpoch: -1, Metadata: "by hand"})
	if r, err := adm.CommitOffsets(tctx(t), "by-hand", toCommit); err != nil || r.Error() != nil {
		t.Fatalf("simple commit: %v %v", err, r.Error())
	}
	back, err := adm.FetchOffsets(tctx(t), "by-hand")
	if err != nil || back["events"][2].At != 7 || back["events"][2].Metadata != "by hand" {
		t.Fatalf("simple commit back: %+v %v", back, err)
	}
}

// A static member that restarts takes its place back without a rebalance: the other member keeps
// its partitions and the generation does not move.
func TestRealClientStaticRestart(t *testing.T) {
	s := startStack(t)
	s.produce(t, 3)
	// Eager range: a cooperative member that closes owing a rejoin leaves the group on purpose.
	opts := []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())}
	a := s.consumer(t, "static", append(opts, kgo.InstanceID("a"))...)
	b := s.consumer(t, "static", append(opts, kgo.InstanceID("b"))...)
	checkfor.Eventually(t, 20*time.Second, "two static members split", func() error { return split([]*consumer{a, b}, 2, 2) })
	checkfor.Eventually(t, 20*time.Second, "every member synced", func() error {
		s.m.mu.Lock()
		defer s.m.mu.Unlock()
		g := s.m.groups["static"]
		return checkfor.True(g.state == stStable && len(g.pendingSync) == 0, "%s, %d members to sync", g.state, len(g.pendingSync))
	})
	gen := func() int32 {
		s.m.mu.Lock()
		defer s.m.mu.Unlock()
		return s.m.groups["static"].generation
	}
	// Restart the follower: a restarted leader recomputes the plan over the new member ids and
	// rejoins when its own share differs (KIP-814), which is the client's choice.
	s.m.mu.Lock()
	g := s.m.groups["static"]
	leaderInstance := g.members[g.leader].rec.InstanceID
	s.m.mu.Unlock()
	restartID := "a"
	if leaderInstance == "a" {
		a, b, restartID = b, a, "b"
	}
	before, bParts, bRevokes := gen(), b.partitions(), b.revokes()
	a.close()
	a2 := s.consumer(t, "static", append(opts, kgo.InstanceID(restartID))...)
	checkfor.Eventually(t, 20*time.Second, "restarted member owns its partitions", func() error { return split([]*consumer{a2, b}, 2, 2) })
	if g := gen(); g != before {
		t.Fatalf("generation moved from %d to %d", before, g)
	}
	if fmt.Sprint(b.partitions()) != fmt.Sprint(bParts) || b.revokes() != bRevokes {
		t.Fatalf("the other member was disturbed: %v (was %v), %d revokes (was %d)", b.partitions(), bParts, b.revokes(), bRevokes)
	}
	dg, err := kadm.NewClient(s.client(t)).DescribeGroups(tctx(t), "static")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range dg["static"].Members {
		if m.InstanceID != nil {
			ids[*m.InstanceID] = true
		}
	}
	if !ids["a"] || !ids["b"] || len(dg["static"].Members) != 2 {
		t.Fatalf("members: %+v", dg["static"].Members)
	}
}

// The admin APIs through kadm: ListGroups with a state filter, DescribeGroups, DeleteGroups and
// OffsetDelete with their refusals.
func TestRealClientAdmin(t *testing.T) {
	s := startStack(t)
	s.produce(t, 2)
	c := s.consumer(t, "live")
	checkfor.Eventually(t, 20*time.Second, "member owns all", func() error { return split([]*consumer{c}, 4) })
	adm := kadm.NewClient(s.client(t))
	for _, topic := range []string{"events", "other"} {
		o := kadm.Offsets{}
		o.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
		if topic == "other" {
			if r, err := adm.CreateTopic(tctx(t), 1, 1, nil, "other"); err != nil || r.Err != nil {
				t.Fatalf("create: %v %v", err, r.Err)
			}
		}
		if r, err := adm.CommitOffsets(tctx(t), "idle", o); err != nil || r.Error() != nil {
			t.Fatalf("commit: %v %v", err, r.Error())
		}
	}
	// "live" needs a generation commit for OffsetDelete to have something subscribed to.
	if err := c.cl.CommitRecords(tctx(t), &kgo.Record{Topic: "events", Partition: 0, Offset: 0}); err != nil {
		t.Fatal(err)
	}

	listed, err := adm.ListGroups(tctx(t))
	if err != nil || len(listed) != 2 || listed["live"].State != "Stable" || listed["idle"].State != "Empty" {
		t.Fatalf("list: %+v %v", listed, err)
	}
	stable, err := adm.ListGroups(tctx(t), "Stable")
	if err != nil || len(stable) != 1 || stable["live"].Group != "live" {
		t.Fatalf("list stable: %+v %v", stable, err)
	}

	del, err := adm.DeleteGroups(tctx(t), "live", "idle", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(del["live"].Err, kerr.NonEmptyGroup) || del["idle"].Err != nil || !errors.Is(del["nope"].Err, kerr.GroupIDNotFound) {
		t.Fatalf("delete: %+v", del)
	}
	if back, err := adm.FetchOffsets(tctx(t), "idle"); err != nil || len(back) != 0 {
		t.Fatalf("deleted group's offsets: %+v %v", back, err)
	}

	ts := kadm.TopicsSet{}
	ts.Add("events", 0)
	od, err := adm.DeleteOffsets(tctx(t), "live", ts)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(od["events"][0], kerr.GroupSubscribedToTopic) {
		t.Fatalf("offset delete of a subscribed topic: %+v", od)
	}
	c.close()
	checkfor.Eventually(t, 10*time.Second, "group empty", func() error {
		l, err := adm.ListGroups(tctx(t), "Empty")
		if err != nil {
			return err
		}
		return checkfor.True(len(l) == 1, "empty groups %v", l)
	})
	od, err = adm.DeleteOffsets(tctx(t), "live", ts)
	if err != nil || od["events"][0] != nil {
		t.Fatalf("offset delete of an empty group: %+v %v", od, err)
	}
	if back, err := adm.FetchOffsets(tctx(t), "live"); err != nil || len(back["events"]) != 0 {
		t.Fatalf("offsets after delete: %+v %v", back, err)
	}
}

// Old protocol versions (Kafka 0.10.0: JoinGroup v0, OffsetCommit v2, OffsetFetch v1) form a
// group, commit and resume as well.
func TestRealClientOldVersions(t *testing.T) {
	s := startStack(t)
	s.produce(t, 5)
	old := kgo.MaxVersions(kversion.V0_10_0())
	cl := s.client(t, groupOpts("old", old)...)
	got := 0
	for got < 20 {
		fs := cl.PollFetches(tctx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(tctx(t)); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	adm := kadm.NewClient(s.client(t))
	offs, err := adm.FetchOffsets(tctx(t), "old")
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(4) {
		if o, ok := offs.Lookup("events", p); !ok || o.At != 5 {
			t.Fatalf("partition %d committed %+v", p, o)
		}
	}
	var stable *record.Group
	for _, r := range s.j.records() {
		if r.Type == record.TypeGroup && r.Group.Name == "old" && r.Group.State == "Stable" {
			stable = r.Group
		}
	}
	if stable == nil || len(stable.Members) != 1 || stable.Members[0].RebalanceTimeout != stable.Members[0].SessionTimeout {
		t.Fatalf("v0 member: %+v", stable)
	}
	if last := s.j.lastGroup("old"); last.State != "Empty" || len(last.Members) != 0 || last.Generation != stable.Generation+1 {
		t.Fatalf("after the v0 leave: %+v", last)
	}
}
