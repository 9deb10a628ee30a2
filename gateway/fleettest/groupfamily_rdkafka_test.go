//go:build cgo

package fleettest

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// rdkafkaFamilies are librdkafka's groups (confluent-kafka-go and its bundled librdkafka),
// classic and KIP-848 (group.protocol=consumer).
func rdkafkaFamilies(*testing.T) []groupFamily {
	var out []groupFamily
	for _, proto := range []string{"classic", "consumer"} {
		name := "librdkafka classic"
		if proto == "consumer" {
			name = "librdkafka KIP-848"
		}
		out = append(out, groupFamily{name: name, slug: "rdkafka-" + proto,
			start: func(t *testing.T, f *fleet, group string, rec *groupRecorder) func() {
				return startRdkafkaGroup(t, f, group, proto, rec)
			}})
	}
	return out
}

// rdkafkaCommitEvery is how often a member commits what it stored, when its polls keep
// returning records.
const rdkafkaCommitEvery = 100 * time.Millisecond

// startRdkafkaGroup starts the members of group at librdkafka's default settings but the ones
// the commits need: each stores every offset it was given and commits them, synchronously,
// whenever a poll comes back empty and at least every rdkafkaCommitEvery. librdkafka does not
// tell its generation: rec learns the assignment changes only.
func startRdkafkaGroup(t *testing.T, f *fleet, group, proto string, rec *groupRecorder) func() {
	t.Helper()
	var stopping atomic.Bool
	var wg sync.WaitGroup
	for i := range groupMembers {
		name := fmt.Sprintf("member-%d", i)
		conf := &kafka.ConfigMap{
			"bootstrap.servers":        strings.Join(f.seeds(), ","),
			"client.id":                group + "-" + name,
			"group.id":                 group,
			"group.protocol":           proto,
			"enable.auto.commit":       false,
			"enable.auto.offset.store": false,
			"auto.offset.reset":        "earliest",
		}
		if d := os.Getenv(rdkafkaDebugEnv); d != "" {
			(*conf)["debug"] = d
		}
		var c *kafka.Consumer
		var err error
		if f.lab != nil {
			// librdkafka's threads, which open its sockets, are started by NewConsumer and keep
			// the namespace of the thread that started them: the load's clients'.
			err = inNetns(f.lab.node(clientsNs).ns, func() (err error) {
				c, err = kafka.NewConsumer(conf)
				return err
			})
		} else {
			c, err = kafka.NewConsumer(conf)
		}
		if err != nil {
			t.Fatal(err)
		}
		parts := func(tps []kafka.TopicPartition) []int32 {
			var ps []int32
			for _, tp := range tps {
				ps = append(ps, tp.Partition)
			}
			return ps
		}
		// librdkafka assigns what the callback did not assign itself, once it returns.
		err = c.SubscribeTopics([]string{topic}, func(c *kafka.Consumer, ev kafka.Event) error {
			switch e := ev.(type) {
			case kafka.AssignedPartitions:
				rec.assignment(name, "assigned", parts(e.Partitions))
			case kafka.RevokedPartitions:
				what := "revoked"
				if c.AssignmentLost() {
					what = "lost"
				}
				rec.assignment(name, what, parts(e.Partitions))
			}
			return nil
		})
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			stored, last := 0, time.Now()
			commit := func() {
				stored, last = 0, time.Now()
				tps, err := c.Commit()
				if err != nil {
					if ke, ok := err.(kafka.Error); !ok || ke.Code() != kafka.ErrNoOffset {
						rec.failed(name, "commit: "+err.Error())
					}
					return
				}
				for _, tp := range tps {
					if tp.Error == nil && tp.Offset >= 0 {
						rec.committed(tp.Partition, int64(tp.Offset))
					}
				}
			}
			for !stopping.Load() {
				ev := c.Poll(50)
				switch e := ev.(type) {
				case *kafka.Message:
					if e.TopicPartition.Error != nil {
						rec.failed(name, "message: "+e.TopicPartition.Error.Error())
						continue
					}
					rec.read(name, e.TopicPartition.Partition, int64(e.TopicPartition.Offset), string(e.Value))
					if _, err := c.StoreMessage(e); err != nil {
						rec.failed(name, "store: "+err.Error())
					} else {
						stored++
					}
				case kafka.Error:
					rec.failed(name, e.Error())
				}
				if stored > 0 && (ev == nil || time.Since(last) >= rdkafkaCommitEvery) {
					commit()
				}
			}
			if stored > 0 {
				commit()
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			stopping.Store(true)
			wg.Wait()
		})
	}
}
