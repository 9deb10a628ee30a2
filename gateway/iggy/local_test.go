package iggy_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// A client whose Config.Local runs requests in an embedded store's goroutine-free connection
// works as over TCP: large batches both ways from several goroutines, one session per
// connection listed among the store's clients and gone when the client closes, a request
// refused with the server's code, and a restarted store found again.
func TestEmbeddedLocal(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	cur := startStore(t, dir, "")
	local := func() (iggy.Local, error) {
		mu.Lock()
		s := cur
		mu.Unlock()
		l, err := s.Local()
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	c := dial(t, "local", iggy.Config{PoolSize: 2, Local: local})
	ctx := ctxT(t)
	st := okv(c.CreateStream(ctx, "s")).get(t)
	sid, tid := wire.NumericID(st.ID), wire.NamedID("t")
	okv(c.CreateTopic(ctx, sid, "t", 1, iggy.TopicOptions{})).get(t)

	sendBigAndPoll(t, c, sid, tid)
	if _, err := c.CreateStream(ctx, "s"); !errors.Is(err, wire.StreamNameAlreadyExists) {
		t.Fatalf("second stream of the same name: %v", err)
	}

	// Every connection of the client is a client of the store, reached without a socket.
	other := dial(t, "local", iggy.Config{PoolSize: 1, Local: local})
	clients := okv(other.GetClients(ctx)).get(t)
	locals := 0
	for _, cl := range clients {
		if cl.Address == "local" {
			locals++
		}
	}
	if locals < 2 {
		t.Fatalf("store lists %d local clients of %+v, want at least 2", locals, clients)
	}
	before := len(clients)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	checkfor.Eventually(t, 5*time.Second, "the closed client's sessions to end", func() error {
		n := len(okv(other.GetClients(ctx)).get(t))
		if n >= before {
			return errors.New("still listed")
		}
		return nil
	})

	cur.Stop()
	mu.Lock()
	cur = startStore(t, dir, "")
	mu.Unlock()
	if got := okv(other.GetStream(ctx, wire.NamedID("s"))).get(t); got.Name != "s" {
		t.Fatalf("stream after restart %+v", got)
	}
}
