package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iggy-kafka/iggy-kafka/config"
	"github.com/iggy-kafka/iggy-kafka/logfmt"
)

// app carries what the root command resolved to the command that runs.
type app struct {
	environ []string
	values  *config.Values
}

func newRootCmd(environ []string) *cobra.Command {
	a := &app{environ: environ}
	root := &cobra.Command{
		Use:   programName,
		Short: "Run Kafka clients on Apache Iggy",
		Long: `iggy-kafka lets Kafka clients produce and consume through a Kafka-protocol gateway
whose data lives in Apache Iggy, one Kafka record per Iggy message at the same offset.

Settings come from flags, then IGGY_KAFKA_* environment variables, then the config file, then
defaults; every flag's environment variable is shown in its help.`,
		Example: `  # a Kafka endpoint on localhost:9092 backed by an embedded store in ./data
  iggy-kafka serve

  # a shared store for a local fleet, and two gateways in front of it
  iggy-kafka store --listen 127.0.0.1:8090 --data /var/lib/iggy
  iggy-kafka serve --iggy 127.0.0.1:8090 --node-id 1 --bind :9092 --brokers 1@localhost:9092,2@localhost:9093
  iggy-kafka serve --iggy 127.0.0.1:8090 --node-id 2 --bind :9093 --brokers 1@localhost:9092,2@localhost:9093`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unknown command %q%s; see '%s --help'", args[0], didYouMean(args[0], commandNames(cmd)), programName))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			vals, err := settings.Load(settingsKey(cmd), cmd.Flags(), a.environ)
			if err != nil {
				return err
			}
			a.values = vals
			return nil
		},
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// A mistyped command followed by its flags reaches the root's flags first.
		if args := cmd.Flags().Args(); !cmd.HasParent() && len(args) > 0 {
			if s := didYouMean(args[0], commandNames(cmd)); s != "" {
				return usageError(fmt.Errorf("unknown command %q%s; see '%s --help'", args[0], s, programName))
			}
		}
		return usageError(fmt.Errorf("%v%s; see '%s --help'", err, flagSuggestion(cmd, err), cmd.CommandPath()))
	})
	settings.AddFlags(root.PersistentFlags(), "", true)
	root.AddCommand(
		newServeCmd(a),
		newStoreCmd(a),
		newInspectCmd(a),
		newClaimsCmd(a),
		newReplayCmd(a),
		newDrainCmd(a),
		newGroupCmd(a),
		newTailCmd(a),
		newTransactionsCmd(a),
		newVersionCmd(a),
		newCompletionCmd(),
	)
	completeArguments(root, a)
	return root
}

// settingsKey is the name a command's settings are registered under: its own, or for a
// subcommand (group seek) its parent's.
func settingsKey(cmd *cobra.Command) string {
	if p := cmd.Parent(); p != nil && p.HasParent() {
		return p.Name()
	}
	return cmd.Name()
}

// withSettings declares the command's own settings as flags.
func withSettings(cmd *cobra.Command) *cobra.Command {
	settings.AddFlags(cmd.Flags(), cmd.Name(), false)
	completeSettings(cmd)
	cmd.Args = noArgs
	return cmd
}

func commandNames(root *cobra.Command) []string {
	var out []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			out = append(out, c.Name())
		}
	}
	return out
}

// didYouMean is ` (did you mean "x"?)` for the candidate nearest a typo, or "".
func didYouMean(typo string, candidates []string) string {
	if near := config.Closest(typo, candidates); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// flagSuggestion names the flag of cmd nearest an unknown one.
func flagSuggestion(cmd *cobra.Command, err error) string {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return ""
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if near := config.Closest(name, names); near != "" {
		return " (did you mean --" + near + "?)"
	}
	return ""
}

// logger builds the logger of a long-running command from --log-format and --log-level.
func (a *app) logger(cmd *cobra.Command) (*slog.Logger, error) {
	level, err := logfmt.ParseLevel(a.values.String("log-level"))
	if err != nil {
		return nil, a.values.Invalid("log-level", "%v", err)
	}
	return logfmt.NewLogger(cmd.ErrOrStderr(), a.values.String("log-format"), level)
}

// printConfig writes the effective configuration: every setting of the command, its value with
// secrets redacted, and where the value came from.
func (a *app) printConfig(cmd *cobra.Command) {
	w := cmd.OutOrStdout()
	if a.values.File != "" {
		fmt.Fprintf(w, "# config file: %s\n", a.values.File)
	}
	rows := [][3]string{{"SETTING", "VALUE", "SOURCE"}}
	for _, v := range a.values.All() {
		if v.Setting.Name == "print-config" {
			continue
		}
		shown := v.Shown()
		if shown == "" {
			shown = "-"
		}
		rows = append(rows, [3]string{v.Setting.Name, shown, v.Source.String()})
	}
	writeTable(w, rows)
}
