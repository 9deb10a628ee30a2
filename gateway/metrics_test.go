package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
)

// scrape reads the unlabelled samples of a gateway's /metrics.
func scrape(t testing.TB, g *Gateway) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + g.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("sample %q: %v", sc.Text(), err)
		}
		samples[name] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	return samples
}

// Two gateways in one process (serve --fleet 2) each report their own counts: the produce,
// fetch, long poll and group traffic sent to the first shows in its metrics of the bridge, the
// Kafka listener, the group managers and the coordinator, and not in the second's.
func TestFleetMetricsPerGateway(t *testing.T) {
	base := freeport.Consecutive(t, 2)
	cfg := fleetConfig(base, t.TempDir())
	cfg.MetricsAddr, cfg.CoordinatorLog = "127.0.0.1:0", false
	f, err := StartFleet(testCtx(t), cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Shutdown(testCtx(t)); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	first, second := f.Gateways()[0], f.Gateways()[1]
	cl, err := kgo.NewClient(kgo.SeedBrokers(first.Addr().String()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seed := cl.SeedBrokers()[0] // the first gateway, whichever node a request would go to
	ctx := testCtx(t)

	// 17 empty partitions: a long poll on them watches 16.
	create := kmsg.NewPtrCreateTopicsRequest()
	for _, name := range []string{"counted", "waited"} {
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = name, 17, 1
		create.Topics = append(create.Topics, ct)
	}
	create.TimeoutMillis = 10_000
	if resp, err := seed.Request(ctx, create); err != nil {
		t.Fatal(err)
	} else {
		for _, ct := range resp.(*kmsg.CreateTopicsResponse).Topics {
			if ct.ErrorCode != 0 {
				t.Fatalf("create %s: code %d", ct.Topic, ct.ErrorCode)
			}
		}
	}

	produce := kmsg.NewPtrProduceRequest()
	produce.Acks, produce.TimeoutMillis = -1, 10_000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "counted"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = idempotentBatch(-1, -1, -1, "a", "b", "c")
	pt.Partitions = append(pt.Partitions, pp)
	produce.Topics = append(produce.Topics, pt)
	if resp, err := seed.Request(ctx, produce); err != nil {
		t.Fatal(err)
	} else if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("produce: code %d", code)
	}

	// A fetch of what was just produced is answered from the tail cache; a long poll on 17
	// empty partitions watches only 16.
	for _, topic := range []string{"counted", "waited"} {
		fetch := kmsg.NewPtrFetchRequest()
		// A wait long enough that a loaded machine still reaches the long poll before its
		// deadline: one of 10 ms was over before the handler got there, and counted nothing.
		fetch.Version, fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes = 12, 500, 1, 1<<20
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = topic
		for p := range int32(17) {
			fp := kmsg.NewFetchRequestTopicPartition()
			fp.Partition, fp.PartitionMaxBytes = p, 1<<20
			ft.Partitions = append(ft.Partitions, fp)
		}
		fetch.Topics = append(fetch.Topics, ft)
		if _, err := seed.Request(ctx, fetch); err != nil {
			t.Fatal(err)
		}
	}

	// Without the coordinator log the lowest node id, the first gateway, coordinates every group:
	// a JoinGroup without a member id leaves a pending member there, and the group's first
	// request loads its Iggy offsets.
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.Group, join.ProtocolType = 4, "pending", "consumer"
	join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = 30_000, 30_000
	proto := kmsg.NewJoinGroupRequestProtocol()
	proto.Name = "range"
	join.Protocols = append(join.Protocols, proto)
	if resp, err := seed.Request(ctx, join); err != nil {
		t.Fatal(err)
	} else if code := resp.(*kmsg.JoinGroupResponse).ErrorCode; code != 79 { // MEMBER_ID_REQUIRED
		t.Fatalf("join: code %d, want MEMBER_ID_REQUIRED", code)
	}

	counted := []string{
		"iggy_kafka_produced_records_total",
		"iggy_kafka_partition_states",
		"iggy_kafka_tail_fetches_total",
		"iggy_kafka_fetch_waits_capped_total",
		"iggy_kafka_group_pending_members",
		"iggy_kafka_group_offset_loads_total",
	}
	checkfor.Eventually(t, 10*time.Second, "the first gateway's metrics count its traffic", func() error {
		got := scrape(t, first)
		for _, name := range counted {
			if got[name] == 0 {
				return fmt.Errorf("%s is 0 at the gateway that was sent the traffic", name)
			}
		}
		return nil
	})
	got := scrape(t, second)
	for _, name := range counted {
		if v, ok := got[name]; !ok || v != 0 {
			t.Errorf("%s is %v (present %v) at the gateway that was sent nothing, want 0", name, v, ok)
		}
	}
}
