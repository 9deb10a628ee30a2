package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/tail"
)

func newTailCmd(a *app) *cobra.Command {
	var (
		from     string
		noFollow bool
		count    int
	)
	cmd := &cobra.Command{
		Use:   "tail TOPIC[:P,P...]",
		Short: "Print a topic's records and follow them, as tail -f does",
		Long: `Print the records of a topic (or of some of its partitions) through the gateways: partition,
offset, timestamp, key, headers and value, each shown as JSON when it is a JSON document, as
text when it is UTF-8 text, else as hex. It follows the records as they arrive, as tail -f
does, until interrupted; --no-follow stops at the end offsets seen when it started, --count N
after N records.

--from says where each partition starts: beginning (or start), end, an offset, or the first
record at or after an RFC 3339 time or a duration ago (by record timestamps); default: the end
when following, the log start with --no-follow.

In text, keys, headers and values are cut to a screen's width (a cut value says its size); with
-o json (one object per line) or -o yaml nothing is cut. The reader never joins a group nor
commits.`,
		Example: `  iggy-kafka tail orders
  iggy-kafka tail orders:0,2 --from 10m
  iggy-kafka tail orders --from beginning --no-follow -o json
  iggy-kafka tail orders --from 1500 --count 10`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			topic, parts, err := tailTarget(args[0])
			if err != nil {
				return a.fail(usageError(err))
			}
			o := tail.Options{Topic: topic, Partitions: parts, Follow: !noFollow, Count: count}
			if count < 0 {
				return a.fail(usageError(fmt.Errorf("--count %d: a count is 0 (no limit) or more", count)))
			}
			if from != "" {
				if o.From, o.FromEnd, err = inspect.ParseFrom(from, now()); err != nil {
					return a.fail(usageError(fmt.Errorf("--from: %w", err)))
				}
			}
			gws, err := a.gateways(ctx, nil)
			if err != nil {
				return a.fail(err)
			}
			opts, err := a.kafkaOpts(gws)
			if err != nil {
				return a.fail(err)
			}
			adm, closeAdm, err := a.kafkaAdmin(gws)
			if err != nil {
				return a.fail(err)
			}
			defer closeAdm()
			s := output.NewStream[tail.Record](cmd.OutOrStdout(), a.format(), "tail.record", true)
			printed := false
			err = tail.Run(ctx, adm, opts, o, func(r tail.Record) error {
				printed = true
				return s.Add(r)
			}, s.Flush)
			// A tail that failed before its first record prints nothing but the error.
			if err == nil || printed {
				if cerr := s.Close(); err == nil {
					err = cerr
				}
			}
			return a.fail(a.kafkaError(ctx, gws, err))
		},
	}
	operatorCmd(cmd, func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usageError(fmt.Errorf("usage: %s tail TOPIC[:P,P...]", programName))
		}
		return nil
	})
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "where each partition starts: beginning, end, an offset, an RFC 3339 time or a duration ago")
	fl.BoolVar(&noFollow, "no-follow", false, "stop at the end offsets seen at the start")
	fl.IntVar(&count, "count", 0, "stop after this many records (0: no limit)")
	_ = cmd.RegisterFlagCompletionFunc("from", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"beginning", "end", "10m", "1h"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// tailTarget reads TOPIC or TOPIC:P,P,...
func tailTarget(s string) (string, []int32, error) {
	topic, list, has := strings.Cut(s, ":")
	if topic == "" {
		return "", nil, fmt.Errorf("%q names no topic: want TOPIC or TOPIC:P,P", s)
	}
	if !has {
		return topic, nil, nil
	}
	var parts []int32
	for p := range strings.SplitSeq(list, ",") {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return "", nil, fmt.Errorf("%q: partition %q is not a partition number: want TOPIC or TOPIC:P,P", s, p)
		}
		parts = append(parts, int32(n))
	}
	return topic, parts, nil
}
