package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

func startGateway(t testing.TB, mod func(*Config)) *Gateway {
	t.Helper()
	cfg := Config{
		Bind:             "127.0.0.1:0",
		AutoCreateTopics: true,
		MetricsAddr:      "127.0.0.1:0",
		Embedded:         store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), PasswordIterations: teststore.PasswordIterations},
	}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	g, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return g
}

// fleetConfig is the Config the package's fleet tests start StartFleet with: gateways on
// consecutive ports from base, the coordinator log on, the embedded store's data in data.
func fleetConfig(base int, data string) Config {
	return Config{
		Bind:             "127.0.0.1:" + strconv.Itoa(base),
		AutoCreateTopics: true,
		CoordinatorLog:   true,
		DrainTimeout:     5 * time.Second,
		Logger:           slog.New(slog.DiscardHandler),
		Embedded:         store.Config{Listen: "127.0.0.1:0", DataDir: data, HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations},
	}
}

func client(t testing.TB, g *Gateway, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(g.Addr().String())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestProduceConsumeThroughIggy(t *testing.T) {
	g := startGateway(t, nil)
	cl := client(t, g, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(testCtx(t), 2, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	const n = 500
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(i % 2), Key: []byte("k" + strconv.Itoa(i)), Value: []byte(strconv.Itoa(i)),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}})
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	consumer := client(t, g, kgo.ConsumeTopics("events"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := map[int32]int64{}
	got := 0
	ctx := testCtx(t)
	for got < n {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll after %d records: %v", got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			i, _ := strconv.Atoi(string(r.Value))
			if r.Offset != next[r.Partition] || int32(i%2) != r.Partition || string(r.Key) != "k"+string(r.Value) ||
				len(r.Headers) != 1 || r.Headers[0].Key != "h" {
				t.Fatalf("unexpected record %+v", r)
			}
			next[r.Partition]++
			got++
		})
	}
	end, err := adm.ListEndOffsets(testCtx(t), "events")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := end.Lookup("events", 1); o.Offset != n/2 {
		t.Fatalf("end offset %+v", o)
	}
}

func TestMetricsAndHealth(t *testing.T) {
	g := startGateway(t, nil)
	cl := client(t, g)
	if err := cl.Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	base := "http://" + g.MetricsAddr().String()
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  "ok",
		"/metrics": `iggy_kafka_requests_total{api="ApiVersions",error_code="0"}`,
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
	resp, _ := http.Get(base + "/metrics")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "iggy_kafka_connections 1") {
		t.Fatalf("connections gauge missing in %s", body)
	}
	for _, name := range []string{"iggy_kafka_partition_states", "iggy_kafka_group_pending_members",
		"iggy_kafka_group_pending_members_dropped_total", "iggy_kafka_group_offset_loads",
		"iggy_kafka_group_offset_loads_total", "iggy_kafka_group_offset_loads_forgotten_total"} {
		if !strings.Contains(string(body), "\n"+name+" ") {
			t.Errorf("limit metric %s missing", name)
		}
	}
}

func TestSASLAgainstIggyUsers(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.SASL = true })
	admin, err := iggy.Dial(testCtx(t), iggy.Config{Addrs: []string{g.StoreAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	perms := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, ManageTopics: true, PollMessages: true, SendMessages: true}}
	if _, err := admin.CreateUser(testCtx(t), "alice", "wonderland", wire.UserStatusActive, perms); err != nil {
		t.Fatal(err)
	}
	reader := &wire.Permissions{Global: wire.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true}}
	if _, err := admin.CreateUser(testCtx(t), "bob", "builder", wire.UserStatusActive, reader); err != nil {
		t.Fatal(err)
	}

	alice := client(t, g, kgo.SASL(plain.Auth{User: "alice", Pass: "wonderland"}.AsMechanism()))
	if r, err := kadm.NewClient(alice).CreateTopic(testCtx(t), 1, 1, nil, "private"); err != nil || r.Err != nil {
		t.Fatalf("alice creates: %v %v", err, r.Err)
	}
	if err := alice.ProduceSync(testCtx(t), &kgo.Record{Topic: "private", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("alice produces: %v", err)
	}

	// bob may read but not write: Iggy's permissions reach the Kafka client.
	bob := client(t, g, kgo.SASL(plain.Auth{User: "bob", Pass: "builder"}.AsMechanism()), kgo.RecordRetries(1), kgo.DisableIdempotentWrite())
	err = bob.ProduceSync(testCtx(t), &kgo.Record{Topic: "private", Value: []byte("v")}).FirstErr()
	if err == nil {
		t.Fatal("bob wrote without SendMessages permission")
	}

	wrong := client(t, g, kgo.SASL(plain.Auth{User: "alice", Pass: "nope"}.AsMechanism()), kgo.RequestRetries(0))
	if err := wrong.Ping(testCtx(t)); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: %v", err)
	}
	anon := client(t, g, kgo.RequestRetries(0))
	if err := anon.Ping(testCtx(t)); err == nil {
		// Ping uses ApiVersions+Metadata; Metadata must be refused before authentication.
		t.Fatal("unauthenticated client was served")
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addr := freeport.Addr(t)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Bind: addr, Embedded: store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), PasswordIterations: teststore.PasswordIterations}})
	}()
	checkfor.Eventually(t, 20*time.Second, "the gateway listens", func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// TestReadyzFollowsIggy points a gateway at a store of its own, stops the store and starts it
// again on the same address: /readyz answers 200, then 503, then 200.
func TestReadyzFollowsIggy(t *testing.T) {
	st := teststore.Start(t, nil)
	addr := st.Addr
	g := startGateway(t, func(c *Config) {
		c.IggyAddrs = []string{addr}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	readyz := func(want int) func() error {
		return func() error {
			resp, err := http.Get("http://" + g.MetricsAddr().String() + "/readyz")
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return checkfor.True(resp.StatusCode == want, "/readyz answered %d %q, want %d", resp.StatusCode, body, want)
		}
	}
	checkfor.Eventually(t, 10*time.Second, "ready while Iggy answers", readyz(http.StatusOK))

	if err := st.Stop(); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 10*time.Second, "not ready once Iggy is gone", readyz(http.StatusServiceUnavailable))

	teststore.Start(t, func(c *store.Config) { c.Listen, c.DataDir = addr, st.Dir })
	checkfor.Eventually(t, 20*time.Second, "ready again once Iggy is back", readyz(http.StatusOK))
}

func TestAdvertised(t *testing.T) {
	ln := &net.TCPAddr{IP: net.IPv4zero, Port: 9999}
	for _, tc := range []struct {
		in   string
		host string
		port int32
	}{
		{"", "localhost", 9999},
		{"kafka.example:9092", "kafka.example", 9092},
		{"kafka.example:0", "kafka.example", 9999},
	} {
		host, port, err := advertised(tc.in, ln)
		if err != nil || host != tc.host || port != tc.port {
			t.Errorf("advertised(%q) = %q %d %v", tc.in, host, port, err)
		}
	}
	if _, _, err := advertised("no-port", ln); err == nil {
		t.Error("address without port accepted")
	}
}

func TestFleetOfTwoSharesOneStore(t *testing.T) {
	ps := freeport.Ports(t, 2)
	p1, p2 := ps[0], ps[1]
	fleet := []kafka.Broker{{NodeID: 1, Host: "127.0.0.1", Port: int32(p1)}, {NodeID: 2, Host: "127.0.0.1", Port: int32(p2)}}
	g1 := startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers = 1, "127.0.0.1:"+strconv.Itoa(p1), fleet
	})
	startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers = 2, "127.0.0.1:"+strconv.Itoa(p2), fleet
		c.IggyAddrs = []string{g1.StoreAddr().String()}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})

	cl := client(t, g1, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(testCtx(t), 4, 1, nil, "shared"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	md, err := adm.Metadata(testCtx(t), "shared")
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]bool{}
	for _, p := range md.Topics["shared"].Partitions {
		leaders[p.Leader] = true
	}
	if len(md.Brokers) != 2 || !leaders[1] || !leaders[2] {
		t.Fatalf("brokers %v, leaders %v: want both gateways leading", md.Brokers, leaders)
	}
	// Producing to every partition goes through both gateways into the one store.
	var recs []*kgo.Record
	for p := range int32(4) {
		recs = append(recs, &kgo.Record{Topic: "shared", Partition: p, Value: []byte{byte(p)}})
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	consumer := client(t, g1, kgo.ConsumeTopics("shared"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	ctx := testCtx(t)
	for got < 4 {
		fs := consumer.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value[0] != byte(r.Partition) || r.Offset != 0 {
				t.Fatalf("record %+v", r)
			}
			got++
		})
	}
}

func TestOldConsumerGetsMessageSets(t *testing.T) {
	g := startGateway(t, nil)
	cl := client(t, g)
	if r, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 1, 1, nil, "legacy"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "legacy", Key: []byte("k"), Value: []byte("v1")},
		&kgo.Record{Topic: "legacy", Value: []byte("v2")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A 0.10.2 client fetches with Fetch v3: magic-1 message sets.
	old := client(t, g, kgo.MaxVersions(kversion.V0_10_2()), kgo.ConsumeTopics("legacy"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	ctx := testCtx(t)
	for len(got) < 2 {
		fs := old.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)+"="+string(r.Value)) })
	}
	if strings.Join(got, ",") != "k=v1,=v2" {
		t.Fatalf("old consumer read %v", got)
	}
}

func TestStartFailureReleasesEverything(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	kafkaPort := freeport.Port(t)
	dir := t.TempDir()
	// The metrics address is taken, so Start fails after the Kafka listener is up.
	_, err = Start(testCtx(t), Config{
		Bind:        "127.0.0.1:" + strconv.Itoa(kafkaPort),
		MetricsAddr: busy.Addr().String(),
		Embedded:    store.Config{Listen: "127.0.0.1:0", DataDir: dir, PasswordIterations: teststore.PasswordIterations},
	})
	if err == nil {
		t.Fatal("Start succeeded on a taken metrics address")
	}
	// Everything is released: the same ports and data directory serve a new gateway.
	g := startGateway(t, func(c *Config) {
		c.Bind = "127.0.0.1:" + strconv.Itoa(kafkaPort)
		c.Embedded.DataDir = dir
	})
	if err := client(t, g).Ping(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

// saslPair starts two SASL gateways of one fleet over gateway 1's store, and an Iggy client
// logged in to that store as its root user, closed when the test ends.
func saslPair(t *testing.T) (g1, g2 *Gateway, admin *iggy.Client) {
	t.Helper()
	ps := freeport.Ports(t, 2)
	fleet := []kafka.Broker{{NodeID: 1, Host: "127.0.0.1", Port: int32(ps[0])}, {NodeID: 2, Host: "127.0.0.1", Port: int32(ps[1])}}
	g1 = startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers, c.SASL = 1, "127.0.0.1:"+strconv.Itoa(ps[0]), fleet, true
	})
	g2 = startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers, c.SASL = 2, "127.0.0.1:"+strconv.Itoa(ps[1]), fleet, true
		c.IggyAddrs = []string{g1.StoreAddr().String()}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	admin, err := iggy.Dial(testCtx(t), iggy.Config{Addrs: []string{g1.StoreAddr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return g1, g2, admin
}
