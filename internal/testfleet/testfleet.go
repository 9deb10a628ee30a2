// Package testfleet runs a fleet inside a test process: a store (package teststore) and n
// gateways with the coordinator log in front of it, each on a loopback port of its own, as
// `serve --iggy` runs them, all stopped when the test ends. Only _test.go files may import it.
//
// The one thing to know is Start, which returns once every gateway accepts Kafka connections.
package testfleet

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// Start runs a store and n gateways (node ids 1..n, each advertising its own listener) until t
// ends. mod, when not nil, changes gateway i's configuration (0-based) before it starts.
func Start(t testing.TB, n int, mod func(i int, cfg *gateway.Config)) (*teststore.Store, []*gateway.Gateway) {
	t.Helper()
	srv := teststore.Start(t, nil)
	ports := freeport.Ports(t, n)
	var brokers []kafka.Broker
	for i, p := range ports {
		brokers = append(brokers, kafka.Broker{NodeID: int32(i + 1), Host: "127.0.0.1", Port: int32(p)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var gws []*gateway.Gateway
	for i, p := range ports {
		cfg := gateway.Config{
			Bind: fmt.Sprintf("127.0.0.1:%d", p), AdvertisedAddr: fmt.Sprintf("127.0.0.1:%d", p), NodeID: int32(i + 1), Brokers: brokers,
			IggyAddrs: []string{srv.Addr}, IggyUsername: "iggy", IggyPassword: "iggy",
			AutoCreateTopics: true, CoordinatorLog: true, HeartbeatInterval: 2 * time.Second,
			ConsumerHeartbeatInterval: 100 * time.Millisecond,
			Logger:                    slog.New(slog.DiscardHandler),
		}
		if mod != nil {
			mod(i, &cfg)
		}
		g, err := gateway.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = g.Shutdown(ctx)
		})
		gws = append(gws, g)
	}
	return srv, gws
}
