package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// lockedBuffer collects log lines written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Two gateways of one fleet share the fleet's store, each leading some partitions; each JSON
// log line names its node once; Shutdown stops the store after the gateways.
func TestFleetSharesOneStore(t *testing.T) {
	base := freeport.Consecutive(t, 2)
	logs := &lockedBuffer{}
	cfg := fleetConfig(base, t.TempDir())
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	f, err := StartFleet(testCtx(t), cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	gws := f.Gateways()
	if len(gws) != 2 || gws[1].Addr().String() != "127.0.0.1:"+strconv.Itoa(base+1) || gws[0].StoreAddr() != nil || f.StoreAddr() == nil {
		t.Fatalf("gateways %v, fleet store %v", gws, f.StoreAddr())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(testCtx(t), 4, 1, nil, "shared"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	// Metadata names the gateways the fleet has heard from, so the second shows up once it
	// announced itself.
	checkfor.Eventually(t, 10*time.Second, "both gateways in Metadata, each leading", func() error {
		// kadm would answer from the client's cache.
		req := kmsg.NewPtrMetadataRequest()
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr("shared")
		req.Topics = append(req.Topics, topic)
		md, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			return err
		}
		leaders := map[int32]bool{}
		for _, t := range md.Topics {
			for _, p := range t.Partitions {
				leaders[p.Leader] = true
			}
		}
		if len(md.Brokers) != 2 || !leaders[1] || !leaders[2] {
			return fmt.Errorf("%d brokers, leaders %v: want both gateways leading", len(md.Brokers), leaders)
		}
		return nil
	})
	cl.Close()
	storeAddr := f.StoreAddr().String()
	if err := f.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", storeAddr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the store still listens on %s after Shutdown", storeAddr)
	}
	seen := map[string]bool{}
	for line := range strings.Lines(logs.String()) {
		if strings.Count(line, `"node":`) > 1 {
			t.Fatalf("node twice: %s", line)
		}
		var rec struct {
			Msg  string
			Node int
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		seen[rec.Msg+" "+strconv.Itoa(rec.Node)] = true
	}
	for _, want := range []string{"gateway listening 1", "gateway listening 2", "gateway stopped 1", "gateway stopped 2"} {
		if !seen[want] {
			t.Errorf("no log line %q", want)
		}
	}
}

func TestStartFleetRefuses(t *testing.T) {
	cases := []struct {
		n    int
		mod  func(*Config)
		want string
	}{
		{0, nil, "must be 1..64"},
		{MaxFleet + 1, nil, "must be 1..64"},
		{3, func(c *Config) { c.NodeID = 2 }, "chooses its node ids"},
		{3, func(c *Config) { c.Brokers = []kafka.Broker{{NodeID: 1}} }, "chooses its node ids"},
		{3, func(c *Config) { c.AdvertisedAddr = "x:1" }, "chooses its node ids"},
		{3, func(c *Config) { c.Bind = "127.0.0.1:0" }, "needs a port"},
		{3, func(c *Config) { c.Bind = "127.0.0.1:65534" }, "run past 65535"},
		{3, func(c *Config) { c.MetricsAddr = "127.0.0.1:65534" }, "run past 65535"},
	}
	for _, c := range cases {
		cfg := Config{Bind: "127.0.0.1:9092", Embedded: store.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), PasswordIterations: teststore.PasswordIterations}}
		if c.mod != nil {
			c.mod(&cfg)
		}
		f, err := StartFleet(context.Background(), cfg, c.n)
		if err == nil {
			f.Shutdown(context.Background())
			t.Errorf("%d %+v: started", c.n, cfg)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d: %v, want %q", c.n, err, c.want)
		}
	}
}
