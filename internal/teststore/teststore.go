// Package teststore runs the embedded store (gateway/store) inside a test process, the way
// every test that needs a real Iggy server wants it: on a loopback port of its own, on the
// test's temporary directory, without fsync (no test here survives a machine crash, and syncing
// costs seconds on a shared disk), logging nowhere, and stopped when the test ends.
//
// The two things to know are Start, which returns a running Store, and Store.Stop, for a test
// that takes the store away before its end. Only _test.go files may import this package.
package teststore

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/gateway/store/partlog"
)

// PasswordIterations is the PBKDF2 count of the password hashes of every store a test starts,
// here and as a gateway's embedded store (store.Config.PasswordIterations): a login hashes once,
// and the default 20,000 iterations took 0.65 s of CPU under the race detector on a loaded
// 2-core machine, which made logins of tests running in parallel miss their deadline. The
// store's own tests check the default count and the count kept per user.
const PasswordIterations = 1

// Store is a running store.
type Store struct {
	// Server is the store itself: Server.Dial reaches it in memory, without the port.
	*store.Server
	// Addr is the TCP address it listens on.
	Addr string
	// Dir is its data directory.
	Dir string

	stop sync.Once
	done chan error
}

// Start runs a store until t ends. mod, when not nil, changes the configuration first (a
// fixed Listen or DataDir, to start a store again where an earlier one was).
func Start(t testing.TB, mod func(*store.Config)) *Store {
	t.Helper()
	cfg := store.Config{
		Listen:             "127.0.0.1:0",
		DataDir:            t.TempDir(),
		Fsync:              partlog.FsyncNever,
		Logger:             slog.New(slog.DiscardHandler),
		PasswordIterations: PasswordIterations,
	}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := store.New(cfg)
	if err != nil {
		t.Fatalf("starting the store: %v", err)
	}
	s := &Store{Server: srv, Addr: srv.Addr().String(), Dir: cfg.DataDir, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(context.Background()) }()
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Stop closes the store, waits for it to stop serving and returns what Close returned; later
// calls return nil at once.
func (s *Store) Stop() error {
	var err error
	s.stop.Do(func() {
		err = s.Server.Close()
		<-s.done
	})
	return err
}
