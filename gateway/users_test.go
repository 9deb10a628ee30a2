package gateway

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// A cached SASL login is trusted for recheckAfter on the gateway's clock, and a user whose
// password keeps changing holds at most maxRetired old clients: past that they are closed with
// the user's Kafka connections.
func TestSASLClientsBounded(t *testing.T) {
	st := teststore.Start(t, nil)
	ctx := testCtx(t)
	dialRoot := func(ctx context.Context) (*iggy.Client, error) {
		return iggy.Dial(ctx, iggy.Config{Addrs: []string{st.Addr}, PoolSize: 1})
	}
	admin, err := dialRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b, err := bridge.New(ctx, admin, bridge.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fc := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var dials, closes atomic.Int32
	u := &userClients{
		bridge: b, clock: fc, users: map[loginKey]*userClient{},
		// The store knows one password; the gateway only compares what clients send.
		dial: func(ctx context.Context, _ login) (*iggy.Client, error) {
			dials.Add(1)
			return dialRoot(ctx)
		},
		closeUser: func(string) int { closes.Add(1); return 0 },
	}
	defer u.close()

	auth := func(password string) {
		t.Helper()
		if _, err := u.authenticate(ctx, "iggy", password); err != nil {
			t.Fatal(err)
		}
	}
	auth("p0")
	auth("p0")
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d logins for two authentications within recheckAfter, want 1", n)
	}
	fc.Advance(recheckAfter)
	auth("p0")
	if n := dials.Load(); n != 2 {
		t.Fatalf("%d logins after recheckAfter passed on the clock, want 2", n)
	}
	if n := u.retiredClients(); n != 0 {
		t.Fatalf("a recheck retired %d clients", n)
	}

	for i := 1; i <= maxRetired; i++ {
		auth(fmt.Sprintf("p%d", i))
		if n := u.retiredClients(); n != int64(i) {
			t.Fatalf("after %d password changes %d retired clients", i, n)
		}
	}
	if closes.Load() != 0 {
		t.Fatal("the user's connections were closed within the bound")
	}
	u.mu.Lock()
	oldest := u.retired[loginKey{"iggy", "PLAIN"}][0]
	u.mu.Unlock()
	auth("one-too-many")
	if n := u.retiredClients(); n != 0 {
		t.Fatalf("%d retired clients kept past the bound of %d", n, maxRetired)
	}
	if closes.Load() != 1 {
		t.Fatalf("the user's connections were closed %d times past the bound, want once", closes.Load())
	}
	if err := oldest.Ping(ctx); err == nil {
		t.Fatal("a retired client past the bound still answers")
	}
	if _, err := u.authenticate(ctx, "iggy", "one-too-many"); err != nil {
		t.Fatalf("the current login after the bound: %v", err)
	}
}
