package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// logEnv is a store holding an empty coordinator log (testlog.Start) and a reader of it.
type logEnv struct {
	*testlog.Env
	t    testing.TB
	ctx  context.Context
	log  *logread.Log
	base time.Time
}

func newLogEnv(t testing.TB) *logEnv {
	t.Helper()
	e := testlog.Start(t)
	return &logEnv{Env: e, t: t, ctx: e.Ctx, log: logread.NewLog(e.Client, "kafka", nil), base: e.Base}
}

func (e *logEnv) at(sec int) time.Time { return e.At(sec) }

var (
	claim     = testlog.Claim
	commit    = testlog.Commit
	groupSnap = testlog.GroupSnap
	groupIn   = testlog.GroupIn
)
