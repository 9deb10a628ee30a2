package gateway

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/group"
)

// metrics is one gateway's: a registry of its own, which its /metrics serves, and the counts of
// its parts, made here and passed to them in their Config, so that the gateways of one process
// (serve --fleet) each report their own. It implements kafka.Observer for the Kafka listener.
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	bytesIn     prometheus.Counter
	bytesOut    prometheus.Counter
	produced    prometheus.Counter
	fetched     prometheus.Counter
	connections prometheus.Gauge
	accepted    prometheus.Counter
	fetchCapped prometheus.Counter
	clients     *clientMetrics

	bridge *bridge.Metrics
	groups *group.Metrics
	coord  *coordinator.Metrics
}

// limitsOf registers the gauges of the gateway's users (the others are in newMetrics).
func (m *metrics) limitsOf(g *Gateway) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "iggy_kafka_sasl_retired_clients",
		Help: "Iggy clients kept for SASL users whose password changed while their earlier connections may still use them (at most 4 per user).",
	}, func() float64 { return float64(g.users.retiredClients()) }))
}

func newMetrics() *metrics {
	m := &metrics{
		reg:     prometheus.NewRegistry(),
		clients: newClientMetrics(),
		bridge:  new(bridge.Metrics),
		groups:  new(group.Metrics),
		coord:   new(coordinator.Metrics),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "iggy_kafka_requests_total",
			Help: "Kafka requests answered, by API and by the first error code of the answer (0 = none).",
		}, []string{"api", "error_code"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_request_bytes_total",
			Help: "Bytes of Kafka requests read, size prefixes included.",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_response_bytes_total",
			Help: "Bytes of Kafka responses written, size prefixes included.",
		}),
		produced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_produced_records_total",
			Help: "Records written by Produce requests.",
		}),
		fetched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_fetched_records_total",
			Help: "Records returned by Fetch requests (v4 and later).",
		}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "iggy_kafka_connections",
			Help: "Open Kafka client connections.",
		}),
		accepted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_connections_accepted_total",
			Help: "Kafka client connections accepted.",
		}),
		fetchCapped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "iggy_kafka_fetch_waits_capped_total",
			Help: "Fetch long polls that watched only 16 of their empty partitions for new data.",
		}),
	}
	b, gm, cm := m.bridge, m.groups, m.coord
	droppedHeaders := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_dropped_headers_total",
		Help: "Records served without the kafka.h headers a native Iggy client wrote, which did not parse.",
	}, func() float64 { return float64(b.DroppedHeaders()) })
	tailFetches := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_tail_fetches_total",
		Help: "Partition reads answered with producers' own batches from the tail cache.",
	}, func() float64 { return float64(b.TailFetches()) })
	rebuiltFetches := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_cache_fetches_total",
		Help: "Partition reads answered with batches an earlier fetch rebuilt, from the fetch cache.",
	}, func() float64 { return float64(b.RebuiltFetches()) })
	keptFetches := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_cache_kept_fetches_total",
		Help: "Partition reads answered with producers' own batches kept beyond the tail cache in the fetch cache's memory.",
	}, func() float64 { return float64(b.KeptFetches()) })
	keptStored := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_cache_kept_bytes_total",
		Help: "Bytes of producers' batches the tail cache let go that were kept in the fetch cache's memory.",
	}, func() float64 { return float64(b.KeptBytesStored()) })
	keptDiskFaults := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_cache_kept_disk_faults_total",
		Help: "Writes of kept batches to their files (--kept-batches) that failed, and reads back that failed or did not check; those reads were answered from Iggy.",
	}, func() float64 { return float64(b.KeptDiskFaults()) })
	endAnswers := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_end_answers_total",
		Help: "Partition reads at the end of a partition, or of its watermarks only, answered from the high watermark Iggy told within 50 ms, or at the end the gateway knew while an append of its own there was under way.",
	}, func() float64 { return float64(b.EndAnswers()) })
	sliceHeads := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_slice_heads_total",
		Help: "Partition reads that started inside a batch whose start the gateway did not know and read that batch's first message as well.",
	}, func() float64 { return float64(b.SliceHeads()) })
	rebuiltStored := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_cache_stored_bytes_total",
		Help: "Bytes of rebuilt batches put in the fetch cache.",
	}, func() float64 { return float64(b.RebuiltBytesStored()) })
	pinnedChunks := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "iggy_kafka_fetch_cache_pinned_chunks",
		Help: "Chunks of the fetch cache that fetch answers not yet written point into; back to 0 when every answer is written.",
	}, func() float64 { return float64(b.PinnedChunks()) })
	releaseFaults := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_fetch_release_faults_total",
		Help: "Releases of fetch answers refused because they were released already; 0 unless the fetch path breaks its rule.",
	}, func() float64 { return float64(b.ReleaseFaults()) })
	scans := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_producer_scans_total",
		Help: "Tail scans that rebuilt an idempotent producer's state from Iggy.",
	}, func() float64 { return float64(b.ProducerScans()) })
	scansSkipped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_producer_scans_skipped_total",
		Help: "Unknown idempotent producers taken for new without a scan, a recent scan of the partition having read it to its bound.",
	}, func() float64 { return float64(b.ProducerScansSkipped()) })
	statesDropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_producer_states_dropped_total",
		Help: "Idempotent producer states dropped, expired (producer-id-expiration) or past 4096 per partition.",
	}, func() float64 { return float64(b.ProducerStatesDropped()) })
	partStates := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "iggy_kafka_partition_states",
		Help: "Partitions the gateway keeps produce and fetch state for, only ever partitions found in Iggy.",
	}, func() float64 { return float64(b.PartitionStates()) })
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "iggy_kafka_group_pending_members",
		Help: "KIP-394 pending members (member ids handed out, not yet joined with), at most 1024 per coordinator log partition.",
	}, func() float64 { n, _ := gm.PendingMembers(); return float64(n) })
	pendingDropped := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_group_pending_members_dropped_total",
		Help: "KIP-394 pending members dropped, the oldest of a coordinator log partition past 1024.",
	}, func() float64 { _, n := gm.PendingMembers(); return float64(n) })
	loads := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "iggy_kafka_group_offset_loads",
		Help: "Group names whose Iggy offsets a gateway without the coordinator log remembers having loaded, at most 1024.",
	}, func() float64 { n, _, _ := cm.GroupOffsetLoads(); return float64(n) })
	loaded := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_group_offset_loads_total",
		Help: "Loads of a group's Iggy offsets without the coordinator log, each a topic listing and two offset reads per partition.",
	}, func() float64 { _, n, _ := cm.GroupOffsetLoads(); return float64(n) })
	forgotten := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "iggy_kafka_group_offset_loads_forgotten_total",
		Help: "Group names whose load was forgotten, the least recently requested past 1024.",
	}, func() float64 { _, _, n := cm.GroupOffsetLoads(); return float64(n) })
	m.reg.MustRegister(m.requests, m.bytesIn, m.bytesOut, m.produced, m.fetched, m.connections, m.accepted, m.fetchCapped, droppedHeaders, tailFetches, rebuiltFetches, rebuiltStored, keptFetches, keptStored, keptDiskFaults, pinnedChunks, releaseFaults, endAnswers, sliceHeads, scans, scansSkipped, statesDropped,
		partStates, pending, pendingDropped, loads, loaded, forgotten,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(m.clients.collectors()...)
	return m
}

func (m *metrics) ConnectionOpened() { m.connections.Inc(); m.accepted.Inc() }
func (m *metrics) ConnectionClosed() { m.connections.Dec() }
func (m *metrics) Request(key, code int16, in, out int) {
	api := kmsg.NameForKey(key)
	if api == "" {
		api = strconv.Itoa(int(key))
	}
	m.requests.WithLabelValues(api, strconv.Itoa(int(code))).Inc()
	m.bytesIn.Add(float64(in))
	m.bytesOut.Add(float64(out))
}
func (m *metrics) RecordsProduced(n int) { m.produced.Add(float64(n)) }
func (m *metrics) RecordsFetched(n int)  { m.fetched.Add(float64(n)) }
func (m *metrics) FetchWaitCapped()      { m.fetchCapped.Inc() }
func (m *metrics) ClientTraffic(user, clientID string, key int16, in, out int) {
	if key == kmsg.Produce.Int16() { // Produce: the request's bytes; Fetch: the answer's
		m.clients.traffic(user, clientID, true, in)
	} else {
		m.clients.traffic(user, clientID, false, out)
	}
}
func (m *metrics) ClientThrottled(user, clientID string, d time.Duration) {
	m.clients.throttledFor(user, clientID, d)
}

// handler serves /metrics, /healthz (the process answers) and /readyz (the Kafka listener is
// up and Iggy answers a ping).
func (m *metrics) handler(ready func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}
