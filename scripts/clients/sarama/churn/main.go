// Command churn runs IBM/sarama's consumer-group churn against iggy-kafka gateways: thirteen
// members of one group join in waves over a 4-partition topic of 5,000 records, each reads up
// to its own quota (500, 1000, 500, 70, 35, then 100, 135, 170, 670, then 335, then 335, 830,
// then 320: 5,000 in all), marks what it read, and then stops taking part without leaving, so
// its session expires at the coordinator and the others rebalance; sarama commits what was
// marked every second and when a session ends. Every record must be read exactly once: a record
// read twice means a later generation did not resume at an earlier member's commit.
//
// With -recreate the topic exists already: the run deletes it and creates it again first, as
// sarama's own suite does with its test topics. It prints PASS or FAIL lines like the other
// client programs (on a failure also every member's sessions and claims), and exits 1 when a
// check failed. -brokers takes every gateway of a fleet; gateway/fleettest runs it
// (TestSaramaGroupChurn).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/IBM/sarama"
)

func main() {
	brokers := flag.String("brokers", "127.0.0.1:9092", "gateways host:port,...")
	topic := flag.String("topic", "churn", "topic to create")
	group := flag.String("group", "", "consumer group (default: the topic with -g)")
	records := flag.Int("records", 5000, "records to produce; the members' quotas add up to 5,000")
	timeout := flag.Duration("timeout", 120*time.Second, "limit of the whole run")
	verbose := flag.Bool("v", false, "sarama's own log on stderr")
	recreate := flag.Bool("recreate", false, "the topic exists: delete it and create it again before the run, as sarama's own suite does with its test topics")
	flag.Parse()
	if *verbose {
		sarama.Logger = log.New(os.Stderr, "sarama ", log.Lmicroseconds)
	}
	r := &run{brokers: strings.Split(*brokers, ","), topic: *topic, group: *group, records: *records,
		start: time.Now(), read: map[key][]string{}, recreate: *recreate}
	if r.group == "" {
		r.group = r.topic + "-g"
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.main()
	}()
	select {
	case <-done:
	case <-time.After(*timeout):
		r.fail("the run did not end within %v (%d records read)", *timeout, r.count.Load())
		r.report()
		os.Exit(1)
	}
	if r.failed.Load() {
		os.Exit(1)
	}
}

const partitions = 4

// waves are the members' quotas, wave by wave, and how many records the group has read when
// the next wave starts; the quotas are sarama's own consumer-group fuzz test's.
var waves = []struct {
	quotas []int32
	until  int
}{
	{[]int32{500, 1000, 500, 70, 35}, 1000},
	{[]int32{100, 135, 170, 670}, 2700},
	{[]int32{335}, 3300},
	{[]int32{335, 830}, 4000},
	{[]int32{320}, 5000},
}

type key struct {
	p   int32
	off int64
}

type run struct {
	brokers  []string
	topic    string
	group    string
	records  int
	start    time.Time
	failed   atomic.Bool
	recreate bool

	count atomic.Int64
	mu    sync.Mutex
	read  map[key][]string // where -> the members that read it, in order
	log   []string         // sessions and errors, for a failure
}

func (r *run) pass(format string, args ...any) {
	fmt.Printf("PASS  sarama churn: %s\n", fmt.Sprintf(format, args...))
}

func (r *run) fail(format string, args ...any) {
	r.failed.Store(true)
	fmt.Printf("FAIL  sarama churn: %s\n", fmt.Sprintf(format, args...))
}

func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf("%6.2fs %s", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...)))
}

func (r *run) config(clientID string) *sarama.Config {
	c := sarama.NewConfig()
	c.Version = sarama.MaxVersion
	c.ApiVersionsRequest = true
	c.ClientID = clientID
	c.Metadata.Retry.Backoff = 100 * time.Millisecond
	c.Metadata.Full = false
	c.Metadata.RefreshFrequency = 10 * time.Second
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Group.Rebalance.Timeout = 6 * time.Second
	c.Consumer.Group.Session.Timeout = 6 * time.Second
	c.Consumer.Group.Heartbeat.Interval = 2 * time.Second
	c.Producer.Return.Successes = true
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Partitioner = sarama.NewManualPartitioner
	return c
}

func (r *run) main() {
	ac := r.config("churn-admin")
	ac.Metadata.Full = true
	admin, err := sarama.NewClusterAdmin(r.brokers, ac)
	if err != nil {
		r.fail("admin client: %v", err)
		return
	}
	defer admin.Close()
	if r.recreate {
		if !r.recreateTopic(admin) {
			return
		}
	} else if err := admin.CreateTopic(r.topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		r.fail("create topic %s with %d partitions: %v", r.topic, partitions, err)
		return
	}
	if !r.produce() {
		return
	}
	r.pass("produced %d records to %d partitions of %s", r.records, partitions, r.topic)

	var members []*member
	defer func() {
		for _, m := range members {
			_ = m.cg.Close()
		}
		for _, m := range members {
			<-m.done
		}
	}()
	n := 0
	for _, w := range waves {
		for _, q := range w.quotas {
			n++
			m, err := r.startMember(fmt.Sprintf("M%d", n), q)
			if err != nil {
				r.fail("member M%d: %v", n, err)
				return
			}
			members = append(members, m)
		}
		want := min(w.until, r.records)
		deadline := time.Now().Add(60 * time.Second)
		for int(r.count.Load()) < want {
			if time.Now().After(deadline) {
				r.fail("the group read %d records within 60 s of wave %d, want %d", r.count.Load(), n, want)
				r.report()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		r.note("the group has read %d records", r.count.Load())
	}
	r.check()
}

// recreateTopic deletes the topic, waits until Metadata no longer lists it, and creates it again
// with 4 partitions.
func (r *run) recreateTopic(admin sarama.ClusterAdmin) bool {
	if err := admin.DeleteTopic(r.topic); err != nil {
		r.fail("delete topic %s: %v", r.topic, err)
		return false
	}
	for {
		ts, err := admin.ListTopics()
		if err != nil {
			r.fail("list topics: %v", err)
			return false
		}
		if _, ok := ts[r.topic]; !ok {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := admin.CreateTopic(r.topic, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: 1}, false); err != nil {
		r.fail("create topic %s again: %v", r.topic, err)
		return false
	}
	r.pass("deleted topic %s and created it again with %d partitions", r.topic, partitions)
	return true
}

// produce writes record-0 ... record-(N-1), record i to partition i % 4.
func (r *run) produce() bool {
	p, err := sarama.NewSyncProducer(r.brokers, r.config("churn-producer"))
	if err != nil {
		r.fail("producer: %v", err)
		return false
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, 0, r.records)
	for i := range r.records {
		msgs = append(msgs, &sarama.ProducerMessage{Topic: r.topic, Partition: int32(i % partitions),
			Value: sarama.StringEncoder(fmt.Sprintf("record-%d", i))})
	}
	if err := p.SendMessages(msgs); err != nil {
		r.fail("produce: %v", err)
		return false
	}
	return true
}

// member is one consumer of the group: it reads until its quota is spent, then its loop ends
// without closing the consumer group, so its session expires at the coordinator.
type member struct {
	r      *run
	name   string
	cg     sarama.ConsumerGroup
	quota  atomic.Int32
	done   chan struct{}
	capped bool
}

func (r *run) startMember(name string, quota int32) (*member, error) {
	cg, err := sarama.NewConsumerGroup(r.brokers, r.group, r.config(name))
	if err != nil {
		return nil, err
	}
	m := &member{r: r, name: name, cg: cg, done: make(chan struct{}), capped: quota != 0}
	m.quota.Store(quota)
	go func() {
		for err := range cg.Errors() {
			r.note("%s error: %v", name, err)
		}
	}()
	go m.loop()
	return m, nil
}

func (m *member) loop() {
	defer close(m.done)
	for {
		err := m.cg.Consume(context.Background(), []string{m.r.topic}, m)
		if errors.Is(err, sarama.ErrClosedConsumerGroup) {
			return
		}
		if err != nil {
			m.r.note("%s consume: %v", m.name, err)
			return
		}
		if m.capped && m.quota.Load() < 0 {
			m.r.note("%s reached its quota", m.name)
			return
		}
	}
}

func (m *member) Setup(s sarama.ConsumerGroupSession) error {
	m.r.note("%s session %s generation %d claims %v", m.name, s.MemberID(), s.GenerationID(), s.Claims()[m.r.topic])
	return nil
}

func (m *member) Cleanup(s sarama.ConsumerGroupSession) error {
	m.r.note("%s session ended, generation %d", m.name, s.GenerationID())
	return nil
}

func (m *member) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	m.r.note("%s claim %d from offset %d", m.name, c.Partition(), c.InitialOffset())
	for {
		select {
		case msg, ok := <-c.Messages():
			if !ok {
				return nil
			}
			if n := m.quota.Add(-1); m.capped && n < 0 {
				return nil
			}
			s.MarkMessage(msg, "")
			m.r.mu.Lock()
			k := key{msg.Partition, msg.Offset}
			m.r.read[k] = append(m.r.read[k], m.name)
			m.r.mu.Unlock()
			m.r.count.Add(1)
		case <-s.Context().Done():
			return nil
		}
	}
}

// check: every record read exactly once.
func (r *run) check() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var twice []string
	perPartition := map[int32]int{}
	for k, who := range r.read {
		if len(who) > 1 {
			twice = append(twice, fmt.Sprintf("%d/%d by %v", k.p, k.off, who))
			perPartition[k.p]++
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		r.fail("%d records read more than once (per partition %v): %s", len(twice), perPartition, strings.Join(twice[:min(10, len(twice))], "; "))
		r.reportLocked()
		return
	}
	if len(r.read) != r.records {
		r.fail("%d distinct records read, want %d", len(r.read), r.records)
		r.reportLocked()
		return
	}
	r.pass("13 members in turn read all %d records exactly once", r.records)
}

func (r *run) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reportLocked()
}

func (r *run) reportLocked() {
	for _, l := range r.log {
		fmt.Println("      " + l)
	}
}
