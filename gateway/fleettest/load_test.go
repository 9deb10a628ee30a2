package fleettest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	topic      = "fleet"
	partitions = 6
	group      = "fleet-readers"
	members    = 2
	// producers write one record each every produceEvery.
	producers    = 2
	produceEvery = 10 * time.Millisecond
)

// pos is a record's place in the topic.
type pos struct {
	p   int32
	off int64
}

// clientOpts are the options of every client: the whole fleet as seeds, the tap as dialer, and
// short enough timeouts that a frozen gateway is given up on within seconds.
func clientOpts(f *fleet, tp *tap, name string) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(f.seeds()...),
		kgo.ClientID(name),
		tp.dialer(name),
		kgo.RequestTimeoutOverhead(3 * time.Second),
		kgo.ConnIdleTimeout(30 * time.Second),
		kgo.MetadataMinAge(200 * time.Millisecond),
		kgo.MetadataMaxAge(2 * time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }),
	}
	if f.lab != nil || f.target.Nodes > 1 {
		// The coordinator log can stay unserved for seconds here, answered NOT_COORDINATOR or
		// COORDINATOR_NOT_AVAILABLE meanwhile, as a Kafka coordinator's failover is: a gateway
		// cut from Iggy keeps its log partitions until Iggy evicts its member (1.2 to 2.2
		// heartbeat intervals) and another claims them, 2.5 to 5 s; a cluster's leader change
		// leaves the log unwritable for its view change, 5 to 21 s. kgo's own backoff (250 ms
		// growing to 5 s, 20 retries) rides out about 40 s of such answers; at the fixed 100 ms
		// above, 20 retries give up after 2 s and end a member's session. 200 keep the fast
		// retries and about kgo's own patience.
		opts = append(opts, kgo.RequestRetries(200))
	}
	return opts
}

// createTopic creates the load's topic through the fleet's controller.
func createTopic(t testing.TB, f *fleet, tp *tap) {
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(f, tp, "admin")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s: %v", topic, err)
	}
}

// load is what the producers and the consumers did.
type load struct {
	t  testing.TB
	f  *fleet
	tp *tap

	mu        sync.Mutex
	acked     map[string]pos // value -> where the producer was told it is
	prodErrs  []error
	reads     map[pos][]string // where -> value read, once per read (by any member)
	readBy    map[pos][]string // where -> member that read it
	commits   map[int32]int64  // partition -> last offset committed successfully
	commitErr []error
	events    []event // assignment changes of the members

	nAcked, nRead atomic.Int64

	prodCancel context.CancelFunc
	prodWG     sync.WaitGroup
	prods      []*kgo.Client

	consCancel context.CancelFunc
	consWG     sync.WaitGroup
	cons       []*member
	// kip848 makes the group a KIP-848 consumer group (ConsumerGroupHeartbeat, the server's
	// uniform assignor); a member's generation is then its member epoch.
	kip848 bool
	// onSend, when set, is told each record's value as its producer is given it.
	onSend func(value string)
}

// event is one assignment change of a member.
type event struct {
	at   time.Time
	what string
}

func (l *load) eventList() []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]event(nil), l.events...)
}

func (e event) String() string { return e.at.Format("15:04:05.000") + " " + e.what }

// member is one consumer of the group.
type member struct {
	name     string
	cl       *kgo.Client
	mu       sync.Mutex
	assigned map[int32]bool
}

func newLoad(t testing.TB, f *fleet, tp *tap) *load {
	return &load{t: t, f: f, tp: tp, acked: map[string]pos{}, reads: map[pos][]string{},
		readBy: map[pos][]string{}, commits: map[int32]int64{}}
}

// startProducers starts idempotent acks=all producers, each writing numbered records round
// robin over the partitions.
func (l *load) startProducers() {
	ctx, cancel := context.WithCancel(context.Background())
	l.prodCancel = cancel
	for i := range producers {
		name := fmt.Sprintf("producer-%d", i)
		opts := append(clientOpts(l.f, l.tp, name),
			kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.RecordDeliveryTimeout(5*time.Minute),
			kgo.ProducerLinger(0),
		)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			l.t.Fatal(err)
		}
		l.prods = append(l.prods, cl)
		l.prodWG.Add(1)
		go func() {
			defer l.prodWG.Done()
			tick := time.NewTicker(produceEvery)
			defer tick.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				value := fmt.Sprintf("%s-%07d", name, n)
				if l.onSend != nil {
					l.onSend(value)
				}
				r := &kgo.Record{Value: []byte(value), Partition: int32(n % partitions)}
				cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
					l.mu.Lock()
					defer l.mu.Unlock()
					if err != nil {
						l.prodErrs = append(l.prodErrs, fmt.Errorf("%s: %w", value, err))
						return
					}
					l.acked[value] = pos{r.Partition, r.Offset}
					l.nAcked.Add(1)
				})
			}
		}()
	}
}

// stopProducers stops writing and waits until every record written is acknowledged or failed.
func (l *load) stopProducers() {
	l.t.Helper()
	l.prodCancel()
	l.prodWG.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, cl := range l.prods {
		if err := cl.Flush(ctx); err != nil {
			l.t.Errorf("flushing a producer: %v", err)
		}
		cl.Close()
	}
}

// startGroup starts the members of the consumer group. Each commits what it read after every
// poll, synchronously, and remembers each partition's last successful commit.
func (l *load) startGroup() {
	ctx, cancel := context.WithCancel(context.Background())
	l.consCancel = cancel
	for i := range members {
		m := &member{name: fmt.Sprintf("member-%d", i), assigned: map[int32]bool{}}
		note := func(what string, ps map[string][]int32) {
			if len(ps[topic]) == 0 {
				return
			}
			l.mu.Lock()
			l.events = append(l.events, event{time.Now(), fmt.Sprintf("%s %s %v", m.name, what, ps[topic])})
			l.mu.Unlock()
		}
		opts := append(clientOpts(l.f, l.tp, m.name),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.SessionTimeout(30*time.Second),
			kgo.FetchMaxWait(500*time.Millisecond),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
				note("assigned", ps)
				m.mu.Lock()
				for _, p := range ps[topic] {
					m.assigned[p] = true
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
				note("revoked", ps)
				m.mu.Lock()
				for _, p := range ps[topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
				note("lost", ps)
				m.mu.Lock()
				for _, p := range ps[topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}),
		)
		if l.kip848 {
			opts = append(opts, kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			l.t.Fatal(err)
		}
		m.cl = cl
		l.cons = append(l.cons, m)
		l.consWG.Add(1)
		go func() {
			defer l.consWG.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				if ctx.Err() != nil {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					l.mu.Lock()
					at := pos{r.Partition, r.Offset}
					l.reads[at] = append(l.reads[at], string(r.Value))
					l.readBy[at] = append(l.readBy[at], m.name)
					l.mu.Unlock()
					l.nRead.Add(1)
				})
				l.commit(ctx, m)
			}
		}()
	}
}

// commit commits what m has read and records the partitions whose commit succeeded.
func (l *load) commit(ctx context.Context, m *member) {
	offsets := m.cl.UncommittedOffsets()
	if len(offsets) == 0 {
		return
	}
	m.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				l.commitErr = append(l.commitErr, fmt.Errorf("%s: %w", m.name, err))
			}
			return
		}
		asked := map[int32]int64{}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				asked[p.Partition] = p.Offset
			}
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					l.commitErr = append(l.commitErr, fmt.Errorf("%s: commit of partition %d: code %d", m.name, p.Partition, p.ErrorCode))
					continue
				}
				if off, ok := asked[p.Partition]; ok && off > l.commits[p.Partition] {
					l.commits[p.Partition] = off
				}
			}
		}
	})
}

// generations is each member's generation; ok when all are in one generation and the group's
// partitions are split among them without overlap.
func (l *load) generations() (gens []int32, stable bool) {
	seen := map[int32]bool{}
	stable = true
	for _, m := range l.cons {
		_, g := m.cl.GroupMetadata()
		gens = append(gens, g)
		m.mu.Lock()
		for p := range m.assigned {
			if seen[p] {
				stable = false
			}
			seen[p] = true
		}
		if len(m.assigned) == 0 {
			stable = false
		}
		m.mu.Unlock()
	}
	if len(seen) != partitions {
		stable = false
	}
	for _, g := range gens {
		if g <= 0 || g != gens[0] {
			stable = false
		}
	}
	return gens, stable
}

func (l *load) stopGroup() {
	l.consCancel()
	l.consWG.Wait()
	for _, m := range l.cons {
		m.cl.Close()
	}
}

// endOffsets is each partition's end offset.
func endOffsets(t testing.TB, f *fleet, tp *tap) map[int32]int64 {
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(f, tp, "admin")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("listing end offsets: %v", err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// readAll reads every partition from the start to ends with a plain consumer (no group).
func readAll(t testing.TB, f *fleet, tp *tap, ends map[int32]int64) map[pos]string {
	t.Helper()
	start := map[int32]kgo.Offset{}
	for p := range ends {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(append(clientOpts(f, tp, "reader"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchMaxWait(200*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stored := map[pos]string{}
	next := map[int32]int64{}
	done := func() bool {
		for p, end := range ends {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading the topic back: %v (next offsets %v, ends %v)", ctx.Err(), next, ends)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Logf("reading %s/%d back: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			at := pos{r.Partition, r.Offset}
			if _, dup := stored[at]; dup {
				t.Errorf("offset %d of partition %d read back twice", r.Offset, r.Partition)
			}
			stored[at] = string(r.Value)
			next[r.Partition] = r.Offset + 1
		})
	}
	return stored
}

// firstFew joins up to 10 items and says how many there were.
func firstFew(items []string) string {
	if len(items) > 10 {
		return fmt.Sprintf("%s ... (%d in all)", strings.Join(items[:10], "; "), len(items))
	}
	return strings.Join(items, "; ")
}

// startPlain starts one consumer without a group that reads every partition from the start and
// records what it read, as the group's members do.
func (l *load) startPlain() {
	ctx, cancel := context.WithCancel(context.Background())
	l.consCancel = cancel
	start := map[int32]kgo.Offset{}
	for p := range int32(partitions) {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(append(clientOpts(l.f, l.tp, "plain"),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchMaxWait(500*time.Millisecond))...)
	if err != nil {
		l.t.Fatal(err)
	}
	l.cons = append(l.cons, &member{name: "plain", cl: cl})
	l.consWG.Add(1)
	go func() {
		defer l.consWG.Done()
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			fs.EachRecord(func(r *kgo.Record) {
				l.mu.Lock()
				at := pos{r.Partition, r.Offset}
				l.reads[at] = append(l.reads[at], string(r.Value))
				l.readBy[at] = append(l.readBy[at], "plain")
				l.mu.Unlock()
				l.nRead.Add(1)
			})
		}
	}()
}

// storedProblemsLocked checks stored (position -> value, as read back from the topic) against
// what the producers were acknowledged: every acknowledged record stored at its offset, and
// once. Called with l.mu held.
func (l *load) storedProblemsLocked(stored map[pos]string) []string {
	count := map[string]int{}
	for _, v := range stored {
		count[v]++
	}
	var problems []string
	for v, at := range l.acked {
		switch got, ok := stored[at]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s acknowledged at %d/%d is not stored", v, at.p, at.off))
		case got != v:
			problems = append(problems, fmt.Sprintf("%s acknowledged at %d/%d, stored there is %s", v, at.p, at.off, got))
		}
		if count[v] > 1 {
			problems = append(problems, fmt.Sprintf("%s is stored %d times", v, count[v]))
		}
	}
	return problems
}

// orderProblemsLocked checks that each producer's acknowledged records sit in each partition in
// the order it produced them: a later record of one producer never at a lower offset. Called
// with l.mu held.
func (l *load) orderProblemsLocked() []string {
	type key struct {
		producer string
		p        int32
	}
	type rec struct {
		n   int
		off int64
	}
	byKey := map[key][]rec{}
	for v, at := range l.acked {
		i := strings.LastIndexByte(v, '-')
		n, err := strconv.Atoi(v[i+1:])
		if i < 0 || err != nil {
			continue
		}
		k := key{v[:i], at.p}
		byKey[k] = append(byKey[k], rec{n, at.off})
	}
	var problems []string
	for k, recs := range byKey {
		sort.Slice(recs, func(i, j int) bool { return recs[i].n < recs[j].n })
		for i := 1; i < len(recs); i++ {
			if recs[i].off <= recs[i-1].off {
				problems = append(problems, fmt.Sprintf("%s's record %d is at %d/%d, below its record %d at %d",
					k.producer, recs[i].n, k.p, recs[i].off, recs[i-1].n, recs[i-1].off))
			}
		}
	}
	return problems
}
