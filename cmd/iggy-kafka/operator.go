package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// What the operator commands (inspect, claims, replay, drain, group, tail) share: the connection settings
// of the registry (Iggy and Kafka addresses, credentials, TLS, SASL), -o, and errors printed in
// the chosen format.

// operatorCmd declares the command's settings as flags, with -o as the shorthand of --output;
// a wrong positional argument exits 2.
func operatorCmd(cmd *cobra.Command, args cobra.PositionalArgs) *cobra.Command {
	return operatorCmdOf(cmd, cmd.Name(), args)
}

// operatorCmdOf is operatorCmd for a subcommand whose settings are registered under key.
func operatorCmdOf(cmd *cobra.Command, key string, args cobra.PositionalArgs) *cobra.Command {
	fs := pflag.NewFlagSet(cmd.Name(), pflag.ContinueOnError)
	settings.AddFlags(fs, key, false)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "output" {
			f.Shorthand = "o"
		}
		cmd.Flags().AddFlag(f)
	})
	completeSettings(cmd)
	cmd.Args = func(c *cobra.Command, a []string) error {
		err := args(c, a)
		var ue *config.UsageError
		if err != nil && !errors.As(err, &ue) {
			return usageError(err)
		}
		return err
	}
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

// iggyAddrs are the Iggy addresses of an operator command; without --iggy the address an
// embedded store of `serve` or `store` listens on by default.
func (a *app) iggyAddrs() []string {
	if addrs := a.values.List("operator-iggy"); len(addrs) > 0 {
		return addrs
	}
	return []string{"127.0.0.1:8090"}
}

// iggyConfig is the Iggy connection of an operator command.
func (a *app) iggyConfig() (iggy.Config, error) {
	v := a.values
	cfg := iggy.Config{Addrs: a.iggyAddrs(), Username: v.String("operator-iggy-username"), Password: v.String("operator-iggy-password"), PoolSize: 2, RequestTimeout: v.Duration("request-timeout")}
	tc, err := clientTLS(v, "operator-iggy-tls")
	cfg.TLS = tc
	return cfg, err
}

// iggyError says, for an error of reaching the store, where the command looked and how to
// point it elsewhere.
func (a *app) iggyError(err error) error {
	if err == nil || !errors.Is(err, iggy.ErrUnavailable) && !errors.Is(err, iggy.ErrConnectionLost) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w\nno answer from the store at %s: is '%s serve' (embedded store) or '%s store' running there? --iggy (%s) sets the address",
		err, strings.Join(a.iggyAddrs(), ","), programName, programName, a.envOf("operator-iggy"))
}

// defaultKafka is where the operator commands look for a gateway when neither --kafka-bootstrap
// nor an announcement names one: where `serve` listens by default.
const defaultKafka = "localhost:9092"

// dial is dial.DialGateways with the command's settings: --kafka-bootstrap (its environment
// variable or config key) when set, else the addresses the nodes announce, else defaultKafka.
func (a *app) dial(nodes []fleet.Node) dial.Gateways {
	return dial.DialGateways(a.values.List("kafka-bootstrap"), nodes, []string{defaultKafka})
}

// gateways are the gateways a command that has not loaded the fleet dials: it reads the
// announcements (from log, or a connection of its own when log is nil) only when
// --kafka-bootstrap is not set.
func (a *app) gateways(ctx context.Context, log *logread.Log) (dial.Gateways, error) {
	if len(a.values.List("kafka-bootstrap")) > 0 {
		return a.dial(nil), nil
	}
	if log == nil {
		l, closeLog, err := a.openLog(ctx)
		if err != nil {
			return dial.Gateways{}, err
		}
		defer closeLog()
		log = l
	}
	v, err := log.FleetView(ctx)
	if err != nil {
		return dial.Gateways{}, a.iggyError(err)
	}
	return a.dial(v.Nodes(now())), nil
}

// kafkaError says, for an error of reaching the gateways, what each address answered when asked
// alone, and how to point the command elsewhere.
func (a *app) kafkaError(ctx context.Context, gws dial.Gateways, err error) error {
	if err == nil || !errors.Is(err, livegroups.ErrNoGateway) {
		return err
	}
	hint := fmt.Sprintf("is '%s serve' running there? --kafka-bootstrap (%s) sets the addresses", programName, a.envOf("kafka-bootstrap"))
	if gws.Announced {
		hint = fmt.Sprintf("the addresses are those the gateways announce in the log; --kafka-bootstrap (%s) sets others", a.envOf("kafka-bootstrap"))
	}
	opts, oerr := a.kafkaOpts(gws)
	if oerr != nil {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	pctx, cancel := context.WithTimeout(ctx, a.values.Duration("request-timeout"))
	defer cancel()
	reach, perr := dial.ProbeGateways(pctx, gws, opts)
	if perr != nil {
		return fmt.Errorf("%w\n%s", err, hint)
	}
	return fmt.Errorf("%w\n%s", &dial.GatewaysError{Err: err, Gateways: gws, Reach: reach}, hint)
}

func (a *app) envOf(name string) string {
	s, _ := settings.Lookup(name)
	return s.Env()
}

// openLogClient connects to Iggy and returns the coordinator log reader, the client (for
// commands that write) and a closer.
func (a *app) openLogClient(ctx context.Context) (*logread.Log, *iggy.Client, func(), error) {
	cfg, err := a.iggyConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, a.values.Duration("request-timeout"))
	defer cancel()
	c, err := iggy.Dial(dctx, cfg)
	if err != nil {
		return nil, nil, nil, a.iggyError(fmt.Errorf("connect to Iggy at %s: %w", strings.Join(cfg.Addrs, ","), err))
	}
	return logread.NewLog(c, a.values.String("operator-stream"), nil), c, func() { _ = c.Close() }, nil
}

// openLog connects to Iggy and returns the coordinator log reader with a closer.
func (a *app) openLog(ctx context.Context) (*logread.Log, func(), error) {
	log, _, closer, err := a.openLogClient(ctx)
	return log, closer, err
}

// kafkaOpts are the kgo options of the gateways: their addresses, TLS, SASL, timeouts.
func (a *app) kafkaOpts(gws dial.Gateways) ([]kgo.Opt, error) {
	v := a.values
	opts := []kgo.Opt{kgo.SeedBrokers(gws.Addrs()...), kgo.RequestTimeoutOverhead(v.Duration("request-timeout")), kgo.RetryTimeout(v.Duration("request-timeout"))}
	tc, err := clientTLS(v, "kafka-tls")
	if err != nil {
		return nil, err
	}
	if tc != nil {
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if u := v.String("kafka-sasl-username"); u != "" {
		opts = append(opts, kgo.SASL(plain.Auth{User: u, Pass: v.String("kafka-sasl-password")}.AsMechanism()))
	}
	return opts, nil
}

// kafkaAdmin is a kadm client on the gateways.
func (a *app) kafkaAdmin(gws dial.Gateways) (*kadm.Client, func(), error) {
	opts, err := a.kafkaOpts(gws)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// kafkaLive is what DescribeGroup asks of the gateways.
func (a *app) kafkaLive(gws dial.Gateways) (livegroups.KafkaLive, func(), error) {
	opts, err := a.kafkaOpts(gws)
	if err != nil {
		return livegroups.KafkaLive{}, nil, err
	}
	adm, closer, err := a.kafkaAdmin(gws)
	if err != nil {
		return livegroups.KafkaLive{}, nil, err
	}
	return livegroups.KafkaLive{Admin: adm, Opts: opts}, closer, nil
}

// contradictions refuses, with exit status 2, any two flags of a pair set together.
func contradictions(fl *pflag.FlagSet, pairs [][2]string) error {
	for _, p := range pairs {
		if fl.Changed(p[0]) && fl.Changed(p[1]) {
			return usageError(fmt.Errorf("--%s and --%s do not go together: choose one", p[0], p[1]))
		}
	}
	return nil
}

// noArgs refuses positional arguments with exit status 2.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("%s takes no arguments, got %q; see '%s --help'", cmd.CommandPath(), strings.Join(args, " "), cmd.CommandPath()))
	}
	return nil
}

// completePartitions completes a coordinator log partition: 0 to 15.
func completePartitions(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	out := make([]string, 0, fleet.Partitions)
	for p := range fleet.Partitions {
		out = append(out, strconv.Itoa(p))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// isTerminal reports whether w (stdout or stdin) is a terminal, where views draw instead of
// printing lines.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// now is the operator commands' clock for ages and "held for".
var now = time.Now
