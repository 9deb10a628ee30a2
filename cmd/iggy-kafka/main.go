// Command iggy-kafka runs Kafka clients on Apache Iggy: a Kafka-protocol gateway, an embedded
// Iggy-compatible store, and the operator commands around them. Each command lives in its own
// file and only turns flags into a call of a library package and its result into output.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
)

// Set by the release build with -ldflags "-X main.version=... -X main.commit=... -X main.date=...".
var (
	version = ""
	commit  = ""
	date    = ""
)

// Exit statuses shared by every command.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	programName = "iggy-kafka"
)

func main() {
	if version != "" {
		// What the gateway and the operator commands announce to Iggy at login.
		wire.SDKVersion = version
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns its exit status.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	root := newRootCmd(environ)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	writeError(stderr, err, code)
	return code
}

func exitCode(err error) int {
	var ue *config.UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailed
}

// usageError makes err exit with status 2.
func usageError(err error) error { return &config.UsageError{Err: err} }
