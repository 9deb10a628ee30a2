//go:build cgo

package gateway

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	rdk "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/twmb/franz-go/pkg/kadm"
)

// librdkafka (confluent-kafka-go) under a producer_byte_rate quota is held at the quota within
// the same 25% as franz-go, and its statistics show the throttle_time_ms it was told.
func TestLibrdkafkaProducerThrottled(t *testing.T) {
	g := quotaGateway(t, quotaWindow)
	cl := client(t, g)
	if _, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 1, 1, nil, "quota-rdk"); err != nil {
		t.Fatal(err)
	}
	setClientQuota(t, cl, "rdk-slow", "producer_byte_rate", quotaRate)
	p, err := rdk.NewProducer(&rdk.ConfigMap{
		"bootstrap.servers":      g.Addr().String(),
		"client.id":              "rdk-slow",
		"compression.type":       "none",
		"batch.size":             16 << 10,
		"linger.ms":              0,
		"statistics.interval.ms": 100,
		"log_level":              0,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f := newFlow()
	// At most 64 records undelivered: librdkafka would take every record at once otherwise.
	inFlight := make(chan struct{}, 64)
	var throttleMax atomic.Int64
	var failed atomic.Value
	events := make(chan struct{})
	go func() {
		defer close(events)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *rdk.Message:
				<-inFlight
				if e.TopicPartition.Error != nil {
					failed.Store(e.TopicPartition.Error)
				} else {
					f.add(len(e.Value))
				}
			case *rdk.Stats:
				var s struct {
					Brokers map[string]struct {
						Throttle struct {
							Max int64 `json:"max"`
						} `json:"throttle"`
					} `json:"brokers"`
				}
				if json.Unmarshal([]byte(e.String()), &s) == nil {
					for _, b := range s.Brokers {
						if b.Throttle.Max > throttleMax.Load() {
							throttleMax.Store(b.Throttle.Max)
						}
					}
				}
			}
		}
	}()
	topic := "quota-rdk"
	value := randomValue(2048)
	end := time.NewTimer(quotaRun)
	defer end.Stop()
produce:
	for {
		select {
		case inFlight <- struct{}{}:
		case <-end.C:
			break produce
		}
		if err := p.Produce(&rdk.Message{TopicPartition: rdk.TopicPartition{Topic: &topic, Partition: 0}, Value: value}, nil); err != nil {
			t.Fatal(err)
		}
	}
	p.Purge(rdk.PurgeQueue)
	p.Flush(10000)
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	rate := f.rate(measureFrom, measureTo)
	t.Logf("quota %d B/s: librdkafka %.0f B/s, largest throttle in its statistics %d ms", quotaRate, rate, throttleMax.Load())
	if !within(rate, quotaRate, quotaTolerance) {
		t.Errorf("librdkafka under a %d B/s quota moved %.0f B/s", quotaRate, rate)
	}
	if throttleMax.Load() == 0 {
		t.Error("librdkafka's statistics show no throttle")
	}
}
