package logfmt_test

import (
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/iggy-kafka/iggy-kafka/logfmt"
)

func Example() {
	// Dropping the time keeps the example's output stable.
	noTime := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && groups == nil {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(logfmt.New(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	logger = logger.With("gateway", "gw-1").WithGroup("group")
	logger.Info("member joined", "id", "consumer 1", "generation", 3, "took", 1500*time.Microsecond)
	logger.Error("commit failed", "err", errors.New(`offset "7" out of range`))
	// Output:
	// level=INFO msg="member joined" gateway=gw-1 group.id="consumer 1" group.generation=3 group.took=1.5ms
	// level=ERROR msg="commit failed" gateway=gw-1 group.err="offset \"7\" out of range"
}

func ExampleNewLogger() {
	level, err := logfmt.ParseLevel("WARN")
	if err != nil {
		panic(err)
	}
	logger, err := logfmt.NewLogger(os.Stdout, "json", level)
	if err != nil {
		panic(err)
	}
	logger.Info("not shown")
	_, err = logfmt.ParseLevel("verbose")
	os.Stdout.WriteString(err.Error() + "\n")
	// Output:
	// unknown log level "verbose": want one of debug, info, warn, error
}
