// Command sarama checks that IBM/sarama's consumer groups work against an iggy-kafka gateway at
// one protocol level (sarama's Config.Version decides which request versions it sends). It
// creates a 3-partition topic, starts two members of one group and waits until they share the
// partitions in one generation, produces N numbered records, checks that the two read each
// record exactly once between them, closes them (committing), produces M more, and checks
// that a third run of the group reads exactly those M and nothing it had committed before.
//
// With -sasl it checks SASL instead, against a gateway started with --sasl (sasl.go): the
// SCRAM credentials set with UpsertUserScramCredentials, and a record produced and consumed
// with each of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512. With -txn it checks the transactional
// producer, against a gateway started with --transactions (txn.go).
//
// Every check prints a PASS or FAIL line for scripts/clients-interop.sh; the exit status is 1
// when one failed. The last line names the request versions the client sent, observed on its
// connections (sarama does not say which versions it picked).
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

func main() {
	broker := flag.String("broker", "127.0.0.1:9092", "gateway host:port")
	version := flag.String("version", sarama.DefaultVersion.String(), "sarama Config.Version of the consumers (and of the producer when it can produce)")
	topic := flag.String("topic", "sarama", "topic to create")
	n := flag.Int("n", 300, "records read by the two-member group")
	m := flag.Int("m", 60, "records produced after the group's commit")
	saslMode := flag.Bool("sasl", false, "check SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) against a gateway started with --sasl instead of groups")
	txnMode := flag.Bool("txn", false, "check the transactional producer (commit, abort, offsets, read_committed) against a gateway started with --transactions instead of groups")
	flag.Parse()

	v, err := sarama.ParseKafkaVersion(*version)
	if err != nil {
		fmt.Printf("FAIL  sarama: version %q: %v\n", *version, err)
		os.Exit(1)
	}
	r := &run{broker: *broker, version: v, topic: *topic, group: *topic + "-g", n: *n, m: *m, tap: newTap()}
	switch {
	case *saslMode:
		r.saslRun()
	case *txnMode:
		r.txnRun()
	default:
		r.main()
	}
	fmt.Printf("      sarama %s sent: %s\n", v, r.tap.summary())
	if r.failed {
		os.Exit(1)
	}
}

type run struct {
	broker  string
	version sarama.KafkaVersion
	topic   string
	group   string
	n, m    int
	tap     *tap
	failed  bool
	label   string
}

func (r *run) pass(format string, args ...any) {
	fmt.Printf("PASS  %s: %s\n", r.label, fmt.Sprintf(format, args...))
}

func (r *run) fail(format string, args ...any) {
	r.failed = true
	fmt.Printf("FAIL  %s: %s\n", r.label, fmt.Sprintf(format, args...))
}

func (r *run) config(v sarama.KafkaVersion) *sarama.Config {
	c := sarama.NewConfig()
	c.Version = v
	c.ClientID = "clients-interop-sarama"
	c.Net.Proxy.Enable = true
	c.Net.Proxy.Dialer = r.tap
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	c.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	c.Consumer.Group.Session.Timeout = 10 * time.Second
	c.Consumer.Group.Heartbeat.Interval = time.Second
	c.Consumer.Return.Errors = true
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Partitioner = sarama.NewManualPartitioner
	return c
}

func (r *run) main() {
	r.label = "sarama " + r.version.String()
	// Produce v0-2 (magic 0/1 message sets) are served, so every level produces at its own
	// version: below 0.11 that is Produce v2, magic 1.

	admin, err := sarama.NewClusterAdmin([]string{r.broker}, r.config(r.version))
	if err != nil {
		r.fail("admin client: %v", err)
		return
	}
	defer admin.Close()
	if err := admin.CreateTopic(r.topic, &sarama.TopicDetail{NumPartitions: 3, ReplicationFactor: 1}, false); err != nil {
		r.fail("create topic %s with 3 partitions: %v", r.topic, err)
		return
	}
	r.pass("created topic %s with 3 partitions", r.topic)

	if !r.twoMembers() {
		return
	}
	if !r.produce(r.n, r.n+r.m) {
		return
	}
	r.resume()
	r.committed(admin)
}

// produce sends records numbered from..to-1, record i to partition i%3.
func (r *run) produce(from, to int) bool {
	p, err := sarama.NewSyncProducer([]string{r.broker}, r.config(r.version))
	if err != nil {
		r.fail("producer: %v", err)
		return false
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, 0, to-from)
	for i := from; i < to; i++ {
		msgs = append(msgs, &sarama.ProducerMessage{
			Topic:     r.topic,
			Partition: int32(i % 3),
			Key:       sarama.StringEncoder(fmt.Sprintf("k%d", i)),
			Value:     sarama.StringEncoder(fmt.Sprintf("record-%d", i)),
		})
	}
	if err := p.SendMessages(msgs); err != nil {
		r.fail("produce records %d-%d: %v", from, to-1, err)
		return false
	}
	r.pass("produced records %d-%d to 3 partitions", from, to-1)
	return true
}

// member is one consumer of the group with what it read.
type member struct {
	name string
	cg   sarama.ConsumerGroup

	mu        sync.Mutex
	gen       int32
	claims    []int32
	read      map[int]int // record number -> times read
	order     []int
	partition map[int32]bool // partitions it read from
	errs      []error
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen = s.GenerationID()
	m.claims = slices.Clone(s.Claims()[topicOf(s)])
	return nil
}

func topicOf(s sarama.ConsumerGroupSession) string {
	for t := range s.Claims() {
		return t
	}
	return ""
}

func (m *member) Cleanup(sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = nil
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for {
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			var i int
			if _, err := fmt.Sscanf(string(msg.Value), "record-%d", &i); err != nil {
				m.mu.Lock()
				m.errs = append(m.errs, fmt.Errorf("partition %d offset %d: value %q", msg.Partition, msg.Offset, msg.Value))
				m.mu.Unlock()
				continue
			}
			m.mu.Lock()
			m.read[i]++
			m.order = append(m.order, i)
			m.partition[msg.Partition] = true
			m.mu.Unlock()
			s.MarkMessage(msg, "")
		case <-s.Context().Done():
			return nil
		}
	}
}

func (m *member) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.order)
}

func (r *run) start(ctx context.Context, name string) (*member, chan struct{}, error) {
	cg, err := sarama.NewConsumerGroup([]string{r.broker}, r.group, r.config(r.version))
	if err != nil {
		return nil, nil, err
	}
	mb := &member{name: name, cg: cg, read: map[int]int{}, partition: map[int32]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := cg.Consume(ctx, []string{r.topic}, mb); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) || ctx.Err() != nil {
					return
				}
				mb.mu.Lock()
				mb.errs = append(mb.errs, err)
				mb.mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	go func() {
		for err := range cg.Errors() {
			mb.mu.Lock()
			mb.errs = append(mb.errs, err)
			mb.mu.Unlock()
		}
	}()
	return mb, done, nil
}

// stop closes a member, which commits what it marked and leaves the group.
func stop(cancel context.CancelFunc, mb *member, done chan struct{}) error {
	cancel()
	err := mb.cg.Close()
	<-done
	return err
}

// poll waits until cond holds, up to d.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

func (r *run) twoMembers() bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, adone, err := r.start(ctx, "a")
	if err != nil {
		r.fail("consumer group member a: %v", err)
		return false
	}
	b, bdone, err := r.start(ctx, "b")
	if err != nil {
		r.fail("consumer group member b: %v", err)
		return false
	}
	var split string
	shared := poll(30*time.Second, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		b.mu.Lock()
		defer b.mu.Unlock()
		if a.gen != b.gen || len(a.claims) == 0 || len(b.claims) == 0 {
			return false
		}
		all := append(slices.Clone(a.claims), b.claims...)
		slices.Sort(all)
		split = fmt.Sprintf("generation %d: a %v, b %v", a.gen, a.claims, b.claims)
		return slices.Equal(all, []int32{0, 1, 2})
	})
	if !shared {
		r.fail("two members did not share the 3 partitions within 30 s (a: gen %d %v %v; b: gen %d %v %v)",
			a.gen, a.claims, a.errs, b.gen, b.claims, b.errs)
		stop(cancel, a, adone)
		stop(cancel, b, bdone)
		return false
	}
	r.pass("two members share the partitions, %s", split)

	if !r.produce(0, r.n) {
		stop(cancel, a, adone)
		stop(cancel, b, bdone)
		return false
	}
	all := poll(30*time.Second, func() bool { return a.count()+b.count() >= r.n })
	erra := stop(cancel, a, adone)
	errb := stop(cancel, b, bdone)
	if !all {
		r.fail("the two members read %d+%d of %d records within 30 s (errors: %v %v)", a.count(), b.count(), r.n, a.errs, b.errs)
		return false
	}
	if erra != nil || errb != nil {
		r.fail("closing the members (commit, leave): %v %v", erra, errb)
	}
	seen := map[int]int{}
	for _, mb := range []*member{a, b} {
		for i, c := range mb.read {
			seen[i] += c
		}
	}
	var bad []string
	for i := 0; i < r.n; i++ {
		if seen[i] != 1 {
			bad = append(bad, fmt.Sprintf("record %d read %d times", i, seen[i]))
		}
	}
	for i := range seen {
		if i < 0 || i >= r.n {
			bad = append(bad, fmt.Sprintf("unexpected record %d", i))
		}
	}
	for p := range a.partition {
		if b.partition[p] {
			bad = append(bad, fmt.Sprintf("both members read partition %d", p))
		}
	}
	if a.count() == 0 || b.count() == 0 {
		bad = append(bad, "one member read nothing")
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		r.fail("two members: %s", strings.Join(bad[:min(len(bad), 10)], "; "))
		return false
	}
	r.pass("two members read all %d records once each (a %d, b %d), committed and left", r.n, a.count(), b.count())
	return true
}

// resume checks that the group, run again, reads exactly the records produced after its commit.
func (r *run) resume() {
	ctx, cancel := context.WithCancel(context.Background())
	c, done, err := r.start(ctx, "c")
	if err != nil {
		r.fail("third run: %v", err)
		cancel()
		return
	}
	got := poll(30*time.Second, func() bool { return c.count() >= r.m })
	// Anything read again would come before the new records of its partition: the first M
	// records tell whether the run resumed at the commits.
	if err := stop(cancel, c, done); err != nil {
		r.fail("third run: close: %v", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !got {
		r.fail("third run read %d of the %d new records within 30 s (errors: %v)", len(c.order), r.m, c.errs)
		return
	}
	first := slices.Clone(c.order[:r.m])
	slices.Sort(first)
	for k, i := range first {
		if i != r.n+k {
			r.fail("third run: first %d records read are not records %d-%d: %v", r.m, r.n, r.n+r.m-1, first)
			return
		}
	}
	if len(c.order) != r.m {
		r.fail("third run read %d records, want %d", len(c.order), r.m)
		return
	}
	r.pass("third run resumed at the commits: read only records %d-%d", r.n, r.n+r.m-1)
}

// committed checks the group's committed offsets against the partitions' end offsets.
func (r *run) committed(admin sarama.ClusterAdmin) {
	client, err := sarama.NewClient([]string{r.broker}, r.config(r.version))
	if err != nil {
		r.fail("client: %v", err)
		return
	}
	defer client.Close()
	res, err := admin.ListConsumerGroupOffsets(r.group, map[string][]int32{r.topic: {0, 1, 2}})
	if err != nil {
		r.fail("OffsetFetch: %v", err)
		return
	}
	var got, want []string
	for p := int32(0); p < 3; p++ {
		end, err := client.GetOffset(r.topic, p, sarama.OffsetNewest)
		if err != nil {
			r.fail("end offset of partition %d: %v", p, err)
			return
		}
		want = append(want, fmt.Sprintf("%d:%d", p, end))
		if b := res.GetBlock(r.topic, p); b != nil && b.Err == sarama.ErrNoError {
			got = append(got, fmt.Sprintf("%d:%d", p, b.Offset))
		} else if b != nil {
			got = append(got, fmt.Sprintf("%d:%v", p, b.Err))
		} else {
			got = append(got, fmt.Sprintf("%d:missing", p))
		}
	}
	if slices.Equal(got, want) {
		r.pass("committed offsets equal the end offsets %v", want)
	} else {
		r.fail("committed offsets %v, end offsets %v", got, want)
	}
}

// tap is the client's dialer: it notes the api key and version of every request the client
// writes, read from the Kafka framing (size, api key, api version, ...).
type tap struct {
	mu   sync.Mutex
	seen map[int16]map[int16]bool
}

func newTap() *tap { return &tap{seen: map[int16]map[int16]bool{}} }

func (t *tap) Dial(network, addr string) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, t: t}, nil
}

func (t *tap) note(key, version int16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen[key] == nil {
		t.seen[key] = map[int16]bool{}
	}
	t.seen[key][version] = true
}

var apiNames = map[int16]string{
	0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
	10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
	15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics",
	22: "InitProducerId", 36: "SaslAuthenticate", 51: "AlterUserScramCredentials",
}

func (t *tap) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]int, 0, len(t.seen))
	for k := range t.seen {
		keys = append(keys, int(k))
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		var vs []string
		for v := range t.seen[int16(k)] {
			vs = append(vs, fmt.Sprint(v))
		}
		sort.Strings(vs)
		name := apiNames[int16(k)]
		if name == "" {
			name = fmt.Sprintf("key%d", k)
		}
		parts = append(parts, name+" v"+strings.Join(vs, ","))
	}
	return strings.Join(parts, ", ")
}

// tapConn follows the request frames in the bytes written, however the writes split them.
// After a SaslHandshake v0 the mechanism's tokens go out as bare frames (one for PLAIN, two for
// SCRAM), which are not requests: they are skipped, so the handshake's body is kept to read the
// mechanism.
type tapConn struct {
	net.Conn
	t    *tap
	skip int    // bytes left of the current frame after its header was read
	head []byte // the start of a frame while fewer than 8 bytes of it were written
	hs   []byte // the body of a SaslHandshake v0 while it is written
	inHS bool   // the current frame is a SaslHandshake v0
	bare int    // bare SASL frames still to come
}

func (c *tapConn) Write(b []byte) (int, error) {
	rest := b
	for len(rest) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(rest))
			if c.inHS {
				c.hs = append(c.hs, rest[:k]...)
			}
			c.skip -= k
			rest = rest[k:]
			if c.skip == 0 && c.inHS {
				c.inHS = false
				c.bare = bareTokens(c.hs)
			}
			continue
		}
		need := 8 // size, api key, api version
		if c.bare > 0 {
			need = 4 // size
		}
		k := min(need-len(c.head), len(rest))
		c.head = append(c.head, rest[:k]...)
		rest = rest[k:]
		if len(c.head) == 4 && c.bare > 0 {
			c.bare--
			c.skip = int(binary.BigEndian.Uint32(c.head))
			c.head = c.head[:0]
			continue
		}
		if len(c.head) == 8 {
			size := int(binary.BigEndian.Uint32(c.head))
			key, version := int16(binary.BigEndian.Uint16(c.head[4:])), int16(binary.BigEndian.Uint16(c.head[6:]))
			c.t.note(key, version)
			c.skip = size - 4
			c.head = c.head[:0]
			if c.inHS = key == 17 && version == 0; c.inHS {
				c.hs = c.hs[:0]
			}
		}
	}
	return c.Conn.Write(b)
}

// bareTokens is how many bare frames follow a SaslHandshake v0 whose body (after api key and
// version: correlation id, client id, mechanism) is body.
func bareTokens(body []byte) int {
	if len(body) < 6 {
		return 0
	}
	n := int(int16(binary.BigEndian.Uint16(body[4:])))
	body = body[6+max(n, 0):]
	if len(body) < 2 || int(binary.BigEndian.Uint16(body)) > len(body)-2 {
		return 0
	}
	if strings.HasPrefix(string(body[2:2+int(binary.BigEndian.Uint16(body))]), "SCRAM-") {
		return 2
	}
	return 1
}
