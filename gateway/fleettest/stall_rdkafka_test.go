//go:build cgo

package fleettest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// rdkafkaDebugEnv names librdkafka debug contexts (its `debug` setting, e.g. "metadata,topic")
// for the stall test's client log, whose last lines a failure shows; rdkafkaLogEnv names a file
// that gets all of it. Logging changes nothing the clients do.
const (
	rdkafkaDebugEnv = "FLEETTEST_RDKAFKA_DEBUG"
	rdkafkaLogEnv   = "FLEETTEST_RDKAFKA_LOG"
)

// TestLibrdkafkaStallAfterStop is TestClientStallAfterStop with librdkafka's clients at their
// default settings (confluent-kafka-go, its bundled librdkafka): one producer, and one consumer
// of the topic in a group. librdkafka refreshes metadata on its own only every 5 minutes
// (topic.metadata.refresh.interval.ms); what moves it after a stop is an error: a Produce or
// Fetch answered NOT_LEADER_OR_FOLLOWER, with the new leader in the answer (KIP-951) or from a
// fast leader query, or a broken connection.
func TestLibrdkafkaStallAfterStop(t *testing.T) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	s := startRdkafkaStallLoad(t, f)
	defer s.stop()
	defer func() {
		if t.Failed() {
			t.Log(s.logTail())
		}
	}()
	measureStalls(t, f, s.times, func(*testing.T) {})
}

// rdkafkaStallLoad is stallLoad through librdkafka.
type rdkafkaStallLoad struct {
	prod  *kafka.Producer
	cons  *kafka.Consumer
	times *stallTimes

	// done ends the produce and poll loops (loops); closed ends the log reader once both
	// clients are closed; reports ends with the producer's event channel.
	done, closed, logsDone chan struct{}
	loops, reports         sync.WaitGroup
	logs                   chan kafka.LogEvent

	mu    sync.Mutex
	lines []string // the clients' last log lines
}

func startRdkafkaStallLoad(t *testing.T, f *fleet) *rdkafkaStallLoad {
	t.Helper()
	s := &rdkafkaStallLoad{times: newStallTimes("librdkafka"), done: make(chan struct{}),
		closed: make(chan struct{}), logsDone: make(chan struct{}), logs: make(chan kafka.LogEvent, 1024)}
	conf := func(kv ...any) *kafka.ConfigMap {
		m := kafka.ConfigMap{"bootstrap.servers": strings.Join(f.seeds(), ","),
			"go.logs.channel.enable": true, "go.logs.channel": s.logs}
		if d := os.Getenv(rdkafkaDebugEnv); d != "" {
			m["debug"] = d
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return &m
	}
	var logFile *os.File
	if name := os.Getenv(rdkafkaLogEnv); name != "" {
		var err error
		if logFile, err = os.Create(name); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		defer close(s.logsDone)
		if logFile != nil {
			defer logFile.Close()
		}
		for {
			select {
			case <-s.closed:
				return
			case l := <-s.logs:
				line := fmt.Sprintf("%s %s %s: %s", l.Timestamp.Format("15:04:05.000"), l.Name, l.Tag, l.Message)
				s.logLine(line)
				if logFile != nil {
					fmt.Fprintln(logFile, line)
				}
			}
		}
	}()
	prod, err := kafka.NewProducer(conf("client.id", "stall-rdkafka-producer"))
	if err != nil {
		t.Fatal(err)
	}
	// The group is the one setting a consumer needs; it starts at the earliest offset so that it
	// reads every record of the topic whenever its first assignment comes.
	cons, err := kafka.NewConsumer(conf("client.id", "stall-rdkafka-consumer", "group.id", "stall-rdkafka",
		"auto.offset.reset", "earliest"))
	if err != nil {
		prod.Close()
		t.Fatal(err)
	}
	if err := cons.SubscribeTopics([]string{topic}, nil); err != nil {
		prod.Close()
		cons.Close()
		t.Fatal(err)
	}
	s.prod, s.cons = prod, cons
	ending := func() bool {
		select {
		case <-s.done:
			return true
		default:
			return false
		}
	}
	s.reports.Add(1)
	go func() { // delivery reports, until Close closes the channel
		defer s.reports.Done()
		for ev := range prod.Events() {
			switch e := ev.(type) {
			case *kafka.Message:
				s.times.acked(string(e.Value), e.TopicPartition.Error, ending())
			case kafka.Error:
				s.logLine("producer error: " + e.Error())
			}
		}
	}()
	s.loops.Add(2)
	go func() {
		defer s.loops.Done()
		tick := time.NewTicker(stallEvery)
		defer tick.Stop()
		tpc := topic
		for n := 0; ; n++ {
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
			v := s.times.produced(n)
			err := prod.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &tpc, Partition: int32(n % partitions)},
				Value: []byte(v)}, nil)
			if err != nil {
				s.times.acked(v, err, false)
			}
		}
	}()
	go func() {
		defer s.loops.Done()
		for !ending() {
			switch e := cons.Poll(50).(type) {
			case *kafka.Message:
				s.times.read(time.Now(), string(e.Value))
			case kafka.Error:
				s.logLine("consumer error: " + e.Error())
			}
		}
	}()
	return s
}

// logLine keeps one line of the clients' log, the last 400.
func (s *rdkafkaStallLoad) logLine(l string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, l)
	if len(s.lines) > 400 {
		s.lines = s.lines[len(s.lines)-400:]
	}
}

func (s *rdkafkaStallLoad) logTail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "----- librdkafka log (last lines) -----\n" + strings.Join(s.lines, "\n")
}

// stop ends the load: the producer flushes, the consumer leaves its group, then both close.
func (s *rdkafkaStallLoad) stop() {
	close(s.done)
	s.loops.Wait()
	s.prod.Flush(5000)
	s.cons.Close()
	s.prod.Close()
	s.reports.Wait()
	close(s.closed)
	<-s.logsDone
}
