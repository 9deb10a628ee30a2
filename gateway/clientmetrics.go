package gateway

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// maxClientSeries bounds the user and client-id pairs the per-client metrics keep series for:
// client ids are chosen by clients, and a series is never dropped (a counter must not go
// back). The first pairs seen keep their own series; every later one is counted under
// user="(other)", client_id="(other)".
const maxClientSeries = 256

// otherClients labels the pairs past maxClientSeries.
const otherClients = "(other)"

// clientMetrics are the bytes and throttle time of each user and client id (Kafka's byte-rate
// and throttle-time per user/client-id), for the quotas.
type clientMetrics struct {
	bytes     *prometheus.CounterVec
	throttle  *prometheus.CounterVec
	throttled *prometheus.CounterVec

	mu   sync.Mutex
	seen map[[2]string]struct{}
}

func newClientMetrics() *clientMetrics {
	return &clientMetrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggy_kafka_client_bytes_total",
			Help: "Bytes of Produce requests (quota=producer_byte_rate) and of Fetch answers (quota=consumer_byte_rate) by user and client id; past 256 pairs, user and client_id are (other).",
		}, []string{"user", "client_id", "quota"}),
		throttle: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggy_kafka_client_throttle_seconds_total",
			Help: "Time client quotas throttled requests for, by user and client id; past 256 pairs, user and client_id are (other).",
		}, []string{"user", "client_id"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggy_kafka_client_throttled_requests_total",
			Help: "Requests client quotas throttled, by user and client id; past 256 pairs, user and client_id are (other).",
		}, []string{"user", "client_id"}),
		seen: map[[2]string]struct{}{},
	}
}

func (m *clientMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.bytes, m.throttle, m.throttled}
}

// labels are the series labels of user and clientID, (other) past the cap.
func (m *clientMetrics) labels(user, clientID string) (string, string) {
	k := [2]string{user, clientID}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[k]; ok {
		return user, clientID
	}
	if len(m.seen) >= maxClientSeries {
		return otherClients, otherClients
	}
	m.seen[k] = struct{}{}
	return user, clientID
}

func (m *clientMetrics) traffic(user, clientID string, produce bool, n int) {
	u, c := m.labels(user, clientID)
	q := "consumer_byte_rate"
	if produce {
		q = "producer_byte_rate"
	}
	m.bytes.WithLabelValues(u, c, q).Add(float64(n))
}

func (m *clientMetrics) throttledFor(user, clientID string, d time.Duration) {
	u, c := m.labels(user, clientID)
	m.throttle.WithLabelValues(u, c).Add(d.Seconds())
	m.throttled.WithLabelValues(u, c).Inc()
}
