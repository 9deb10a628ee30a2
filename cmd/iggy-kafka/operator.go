package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// What the operator commands (inspect, claims, replay, drain) share: the connection settings
// of the registry (Iggy and Kafka addresses, credentials, TLS, SASL), -o, and errors printed in
// the chosen format.

// operatorCmd declares the command's settings as flags, with -o as the shorthand of --output.
func operatorCmd(cmd *cobra.Command, args cobra.PositionalArgs) *cobra.Command {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	settings.AddFlags(fs, cmd.Name(), false)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "output" {
			f.Shorthand = "o"
		}
		cmd.Flags().AddFlag(f)
	})
	cmd.Args = args
	return cmd
}

// formatError carries the output format to the error printer, so that -o json failures are
// JSON on stderr.
type formatError struct {
	f   output.Format
	err error
}

func (e *formatError) Error() string { return e.err.Error() }
func (e *formatError) Unwrap() error { return e.err }

// writeError prints a failed command's error on stderr.
func writeError(stderr io.Writer, err error, code int) {
	f := output.Text
	var fe *formatError
	if errors.As(err, &fe) {
		f = fe.f
	}
	output.WriteError(stderr, f, programName, err, code)
}

// findingsError fails a command that ran to the end but found problems (exit 1, like fsck).
type findingsError struct{ msg string }

func (e *findingsError) Error() string { return e.msg }

// format is the command's -o.
func (a *app) format() output.Format {
	f, _ := output.ParseFormat(a.values.String("output"))
	return f
}

// fail wraps a command's error with its output format.
func (a *app) fail(err error) error {
	if err == nil {
		return nil
	}
	return &formatError{f: a.format(), err: err}
}

// iggyConfig is the Iggy connection of an operator command; without --iggy it is the address an
// embedded store of `serve` or `store` listens on by default.
func (a *app) iggyConfig() (iggy.Config, error) {
	v := a.values
	cfg := iggy.Config{Addrs: v.List("iggy"), Username: v.String("iggy-username"), Password: v.String("iggy-password"), PoolSize: 2, RequestTimeout: v.Duration("request-timeout")}
	if len(cfg.Addrs) == 0 {
		cfg.Addrs = []string{"127.0.0.1:8090"}
	}
	if v.Bool("iggy-tls") {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: v.String("iggy-tls-server-name")}
		if ca := v.String("iggy-tls-ca"); ca != "" {
			pool, err := caPool(ca)
			if err != nil {
				return cfg, v.Invalid("iggy-tls-ca", "%v", err)
			}
			tc.RootCAs = pool
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

// openLog connects to Iggy and returns the coordinator log reader with a closer.
func (a *app) openLog(ctx context.Context) (*inspect.Log, func(), error) {
	cfg, err := a.iggyConfig()
	if err != nil {
		return nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, a.values.Duration("request-timeout"))
	defer cancel()
	c, err := iggy.Dial(dctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to Iggy at %v: %w", cfg.Addrs, err)
	}
	return inspect.NewLog(c, a.values.String("stream"), nil), func() { _ = c.Close() }, nil
}

// kafkaAdmin is a kadm client on --kafka-bootstrap.
func (a *app) kafkaAdmin() (*kadm.Client, func(), error) {
	v := a.values
	opts := []kgo.Opt{kgo.SeedBrokers(v.List("kafka-bootstrap")...), kgo.RequestTimeoutOverhead(v.Duration("request-timeout")), kgo.RetryTimeout(v.Duration("request-timeout"))}
	if v.Bool("kafka-tls") {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: v.String("kafka-tls-server-name")}
		if ca := v.String("kafka-tls-ca"); ca != "" {
			pool, err := caPool(ca)
			if err != nil {
				return nil, nil, v.Invalid("kafka-tls-ca", "%v", err)
			}
			tc.RootCAs = pool
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if u := v.String("kafka-sasl-username"); u != "" {
		opts = append(opts, kgo.SASL(plain.Auth{User: u, Pass: v.String("kafka-sasl-password")}.AsMechanism()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// isTerminal reports whether w (stdout or stdin) is a terminal, where views draw instead of
// printing lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// now is the operator commands' clock for ages and "held for".
var now = time.Now

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
