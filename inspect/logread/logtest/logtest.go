// Package logtest is a coordinator log in a test store with a reader of it (logread.Log), the
// starting point of the tests of the packages that read the log: inspect, claims, replay and
// verify. The store and the records written into it are internal/testlog's.
package logtest

import (
	"testing"

	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// Env is a store holding an empty coordinator log (testlog.Start) and Log, a reader of it.
type Env struct {
	*testlog.Env
	Log *logread.Log
}

// Start starts the store for t and creates the log; the store stops when t ends.
func Start(t testing.TB) *Env {
	t.Helper()
	e := testlog.Start(t)
	return &Env{Env: e, Log: logread.NewLog(e.Client, "kafka", nil)}
}
