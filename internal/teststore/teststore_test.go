package teststore

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A stream created on one store is there when a second store starts on its address and
// directory after Stop; the stopped store refuses connections in between.
func TestStartStopAndStartAgain(t *testing.T) {
	s := Start(t, nil)
	c, err := iggy.Dial(ctxT(t), iggy.Config{Addrs: []string{s.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctxT(t), "kept"); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("%s still accepts after Stop", s.Addr)
	}

	again := Start(t, func(c *store.Config) { c.Listen, c.DataDir = s.Addr, s.Dir })
	if again.Addr != s.Addr || again.Dir != s.Dir {
		t.Fatalf("started again on %s %s, want %s %s", again.Addr, again.Dir, s.Addr, s.Dir)
	}
	c, err = iggy.Dial(ctxT(t), iggy.Config{PoolSize: 1, Dial: func(ctx context.Context, _ string) (net.Conn, error) { return again.Dial(ctx) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.GetStream(ctxT(t), wire.NamedID("kept")); err != nil {
		t.Fatalf("the stream did not survive the restart: %v", err)
	}
}
