package coordinator

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/logio"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// topicEnv is one coordinator serving all 16 partitions over a store whose stream `kafka`
// holds the given topics (2 partitions each).
type topicEnv struct {
	t   *testing.T
	s   *testStore
	mod func(*Config)
	cl  *iggy.Client
	c   *Coordinator
}

func newTopicEnv(t *testing.T, mod func(*Config), topics ...string) *topicEnv {
	t.Helper()
	s := newStore(t)
	e := &topicEnv{t: t, s: s, cl: s.client(t), mod: mod}
	if _, err := e.cl.CreateStream(ctxT(t), "kafka"); err != nil {
		t.Fatal(err)
	}
	for _, name := range topics {
		e.create(name)
	}
	e.startNode(1)
	return e
}

// startNode starts the coordinator of node on the env's store, serving all 16 partitions (the
// one before it must be closed). The first node runs on a heldClock; a later one, which gains the
// partitions from the one before and serves them HandoverBound after the gain, on the real clock.
func (e *topicEnv) startNode(node int32) {
	e.t.Helper()
	e.c = start(e.t, e.s, node, func(c *Config) {
		if node == 1 {
			heldLease(c)
		}
		if e.mod != nil {
			e.mod(c)
		}
	})
	waitServing(e.t, "all 16 partitions served", func() error {
		return checkfor.True(len(serving(e.c)) == 16 && settled(e.c), "serving %d", len(serving(e.c)))
	})
}

func (e *topicEnv) create(name string) {
	e.t.Helper()
	if _, err := e.cl.CreateTopic(ctxT(e.t), wire.NamedID("kafka"), name, 2, iggy.TopicOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *topicEnv) delete(name string) {
	e.t.Helper()
	if err := e.cl.DeleteTopic(ctxT(e.t), wire.NamedID("kafka"), wire.NamedID(name)); err != nil {
		e.t.Fatal(err)
	}
}

// commit is a simple-consumer OffsetCommit of one partition through the gateway's router.
func (e *topicEnv) commit(group, topic string, part int32, off int64) {
	e.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 8, group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset = part, off
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := e.c.Groups().OffsetCommit(ctxT(e.t), kafkaIdentity(), req)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		e.t.Fatalf("commit %s %s/%d: %v %+v", group, topic, part, err, resp)
	}
}

// fetch is the group's committed offset of topic/part through the gateway's router.
func (e *topicEnv) fetch(group, topic string, part int32) int64 {
	e.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group = 7, group
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{part}}}
	resp, err := e.c.Groups().OffsetFetch(ctxT(e.t), kafkaIdentity(), req)
	if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		e.t.Fatalf("fetch %s %s/%d: %v %+v", group, topic, part, err, resp)
	}
	return resp.Topics[0].Partitions[0].Offset
}

// offsetsIn is every committed offset of log partition p, as the live manager holds them and as a
// full replay of the log folds them, sorted.
func (e *topicEnv) offsetsIn(p int) (live, replayed []record.OffsetCommit) {
	e.t.Helper()
	m, code := (directory{e.c}).Manager(groupIn(p, "any"))
	if code != 0 {
		e.t.Fatalf("partition %d answers %d", p, code)
	}
	_, live = m.State()
	st := fullReplay(e.t, e.cl, e.c, p)
	for _, g := range st.GroupNames() {
		replayed = append(replayed, st.GroupOffsets(g)...)
	}
	for _, s := range [][]record.OffsetCommit{live, replayed} {
		for i := range s {
			s[i].Expire = time.Unix(0, s[i].Expire.UnixNano()) // the log holds Unix ns only
		}
		sort.Slice(s, func(i, j int) bool { return fmt.Sprint(s[i]) < fmt.Sprint(s[j]) })
	}
	return live, replayed
}

// deletedIn is every valid OffsetDeleted record of log partition p.
func (e *topicEnv) deletedIn(p int) []record.OffsetDeleted {
	e.t.Helper()
	var out []record.OffsetDeleted
	src := logio.Poll{C: e.cl, P: logio.Partition{Stream: e.c.meta, Topic: e.c.topic, ID: uint32(p)}}
	_, err := logio.Replay(ctxT(e.t), src, record.NewState(), 0, -1, nil, func(_ uint64, r record.Record, valid bool) {
		if valid && r.Type == record.TypeOffsetDeleted {
			out = append(out, *r.OffsetDeleted)
		}
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// Offsets of a topic deleted in Iggy are dropped at the next resync, through the log: OffsetFetch
// answers -1 for it and the other topic's offset still, the log holds one OffsetDeleted per
// dropped partition, and a full replay folds to what the manager holds.
func TestResyncDropsDeletedTopicOffsets(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a", "b")
	g, h := groupIn(3, "g"), groupIn(9, "h")
	e.commit(g, "a", 0, 10)
	e.commit(g, "b", 0, 20)
	e.commit(g, "b", 1, 21)
	e.commit(h, "b", 1, 30)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "b", 0); got != 20 {
		t.Fatalf("b's offset %d before b was deleted", got)
	}

	e.delete("b")
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		group string
		part  int32
	}{{g, 0}, {g, 1}, {h, 1}} {
		if got := e.fetch(c.group, "b", c.part); got != -1 {
			t.Fatalf("%s b/%d is %d after b was deleted", c.group, c.part, got)
		}
	}
	if got := e.fetch(g, "a", 0); got != 10 {
		t.Fatalf("a's offset %d, want 10", got)
	}
	want := map[int][]record.OffsetDeleted{
		3: {{Group: g, Topic: "b", Partition: 0}, {Group: g, Topic: "b", Partition: 1}},
		9: {{Group: h, Topic: "b", Partition: 1}},
	}
	for p, w := range want {
		if got := e.deletedIn(p); !reflect.DeepEqual(got, w) {
			t.Fatalf("partition %d holds deletions %+v, want %+v", p, got, w)
		}
		live, replayed := e.offsetsIn(p)
		if !reflect.DeepEqual(live, replayed) {
			t.Fatalf("partition %d: manager holds %+v, replay gives %+v", p, live, replayed)
		}
	}
	if live, _ := e.offsetsIn(3); len(live) != 1 || live[0].Topic != "a" || live[0].Offset != 10 {
		t.Fatalf("partition 3 offsets %+v", live)
	}
	// Nothing more to drop: a further resync appends nothing.
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.deletedIn(3); len(got) != 2 {
		t.Fatalf("a second resync appended deletions: %+v", got)
	}
}

// A topic deleted and recreated between two resyncs gets a new (id, creation time), so its old
// offsets are dropped; a topic first seen at a resync keeps the offsets committed to it.
func TestResyncDropsRecreatedTopicOffsets(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a", "b")
	g := groupIn(5, "g")
	e.commit(g, "a", 1, 10)
	e.commit(g, "b", 1, 20)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.delete("a")
	e.create("a")
	e.create("c")
	e.commit(g, "c", 0, 40)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "a", 1); got != -1 {
		t.Fatalf("recreated a kept the old offset %d", got)
	}
	if got, got2 := e.fetch(g, "b", 1), e.fetch(g, "c", 0); got != 20 || got2 != 40 {
		t.Fatalf("b's offset %d (want 20), c's %d (want 40)", got, got2)
	}
	if got := e.deletedIn(5); !reflect.DeepEqual(got, []record.OffsetDeleted{{Group: g, Topic: "a", Partition: 1}}) {
		t.Fatalf("deletions %+v", got)
	}
	// Commits to the recreated topic after the resync that saw it stay.
	e.commit(g, "a", 1, 3)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "a", 1); got != 3 {
		t.Fatalf("recreated a's new offset %d, want 3", got)
	}
}

// A commit to a topic deleted and created again since the partition's last resync lands in the
// new incarnation: the former one's offsets are dropped before it, and the resync that then finds
// the recreation keeps it. (On a fleet, a gateway other than the one that deleted the topic is
// told nothing and finds the recreation only at its next resync; it dropped the commits made in
// between, so a later generation of their group read those records again.)
func TestCommitAfterRecreationSurvivesResync(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a", "b")
	g, h := groupIn(5, "g"), groupIn(5, "h")
	e.commit(g, "a", 1, 10)
	e.commit(h, "a", 0, 5)
	e.commit(h, "b", 0, 6)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.delete("a")
	e.create("a")
	e.commit(g, "a", 1, 3)
	// The former incarnation's offsets are gone with the first commit to the new one.
	if got := e.fetch(h, "a", 0); got != -1 {
		t.Fatalf("h kept a/0 = %d of the deleted a after a commit to the new one", got)
	}
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "a", 1); got != 3 {
		t.Fatalf("g's commit of 3 to the recreated a is %d after the resync", got)
	}
	if got := e.fetch(h, "b", 0); got != 6 {
		t.Fatalf("h's b/0 is %d, want 6", got)
	}
	want := []record.OffsetDeleted{{Group: g, Topic: "a", Partition: 1}, {Group: h, Topic: "a", Partition: 0}}
	got := e.deletedIn(5)
	sort.Slice(got, func(i, j int) bool { return got[i].Group < got[j].Group })
	sort.Slice(want, func(i, j int) bool { return want[i].Group < want[j].Group })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deletions %+v, want %+v", got, want)
	}
	live, replayed := e.offsetsIn(5)
	if !reflect.DeepEqual(live, replayed) {
		t.Fatalf("manager holds %+v, replay gives %+v", live, replayed)
	}
}

// A commit checked against an incarnation older than the one its partition holds (the topic was
// created again meanwhile) is refused and drops nothing; the current one is taken as it is.
func TestCommitTopicRefusesAnOlderIncarnation(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a")
	g := groupIn(2, "g")
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.c.topics.mu.Lock()
	old := e.c.topics.last["a"]
	e.c.topics.mu.Unlock()
	e.delete("a")
	e.create("a")
	e.commit(g, "a", 0, 4)
	m, _ := (directory{e.c}).Manager(g)
	e.c.mu.Lock()
	pt := e.c.parts[2]
	e.c.mu.Unlock()
	if err := e.c.adoptTopic(ctxT(t), pt, m, "a", old); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("the deleted incarnation was adopted: %v", err)
	}
	if got := e.fetch(g, "a", 0); got != 4 {
		t.Fatalf("a/0 is %d after a refused stale commit, want 4", got)
	}
}

// A partition's log names the incarnation of the topic its offsets belong to, so a gateway that
// gains the partition after the topic was deleted and created again, and that never saw the
// deleted incarnation, still drops its offsets; before, such a gateway found the new topic in its
// list, took the offsets for the new topic's and kept them.
func TestGainedPartitionDropsAnEarlierIncarnation(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a", "b")
	g := groupIn(4, "g")
	e.commit(g, "a", 1, 10)
	e.commit(g, "b", 0, 5)
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	e.delete("a")
	e.create("a")
	e.startNode(2)
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "a", 1); got != -1 {
		t.Fatalf("the gaining gateway kept a/1 = %d of the deleted a", got)
	}
	if got := e.fetch(g, "b", 0); got != 5 {
		t.Fatalf("b/0 is %d, want 5", got)
	}
	live, replayed := e.offsetsIn(4)
	if !reflect.DeepEqual(live, replayed) {
		t.Fatalf("manager holds %+v, replay gives %+v", live, replayed)
	}
}

// A gateway that gains a partition holding commits to a recreated topic keeps them even when its
// own last list still showed the deleted incarnation: the log says which one they belong to.
// Before, it dropped them at its next resync, and their group read those records again.
func TestGainedPartitionKeepsCommitsOfTheNewIncarnation(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a")
	g := groupIn(6, "g")
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	e.c.topics.mu.Lock()
	stale := e.c.topics.last
	e.c.topics.mu.Unlock()
	e.commit(g, "a", 0, 10)
	e.delete("a")
	e.create("a")
	e.commit(g, "a", 0, 3)
	if err := e.c.Close(); err != nil {
		t.Fatal(err)
	}
	e.startNode(2)
	e.c.topics.mu.Lock()
	e.c.topics.last = stale // the list node 2 read before the recreation
	e.c.topics.mu.Unlock()
	if err := e.c.resyncTopics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fetch(g, "a", 0); got != 3 {
		t.Fatalf("the commit of 3 to the new a is %d after the gaining gateway's resync", got)
	}
}

// The loop resyncs when told of a deletion, without waiting for TopicResync.
func TestTopicsDeletedResyncsNow(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = time.Hour }, "a", "b")
	g := groupIn(0, "g")
	e.commit(g, "b", 0, 7)
	e.delete("b")
	if got := e.fetch(g, "b", 0); got != 7 {
		t.Fatalf("b's offset %d before any resync", got)
	}
	e.c.TopicsDeleted()
	checkfor.Eventually(t, 5*time.Second, "b's offset dropped", func() error {
		return checkfor.True(e.fetch(g, "b", 0) == -1, "b's offset still committed")
	})
}

// Without notice, the periodic resync finds the deletion.
func TestTopicResyncPeriodic(t *testing.T) {
	e := newTopicEnv(t, func(c *Config) { c.TopicResync = 20 * time.Millisecond }, "a", "b")
	g := groupIn(7, "g")
	e.commit(g, "b", 1, 7)
	e.delete("b")
	checkfor.Eventually(t, 5*time.Second, "b's offset dropped", func() error {
		return checkfor.True(e.fetch(g, "b", 1) == -1, "b's offset still committed")
	})
}
