package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
)

func newReplayCmd(a *app) *cobra.Command {
	var (
		fromStart, diffLive bool
		until               string
	)
	cmd := &cobra.Command{
		Use:   "replay partition N",
		Short: "Rebuild a coordinator log partition's groups and offsets",
		Long: `Rebuild one coordinator log partition's state the way a gateway taking it over does: from its last
valid checkpoint (or --from-start), up to the end (or --until an offset or a time: time travel),
and print every group (state, generation, protocol, leader, members with client id, host and
assignment) and its committed offsets, with the replay rate.

--diff-live asks the fleet (DescribeGroups, OffsetFetch; at the addresses the gateways announce
in the log, or --kafka-bootstrap), lists every
difference from the log and ends with its verdict: that the log and the gateways agree (exit 0),
or how many differences there are (exit 1); under "summary" with -o json or yaml.`,
		Example: `  iggy-kafka replay partition 7
  iggy-kafka replay partition 7 --until 2026-12-01T09:00:00Z -o yaml
  iggy-kafka replay partition 7 --diff-live`,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := strconv.Atoi(args[1])
			if err != nil {
				return a.fail(usageError(fmt.Errorf("partition %q is not a number", args[1])))
			}
			if err := logread.CheckPartition(p); err != nil {
				return a.fail(usageError(err))
			}
			opts := replay.Options{FromStart: fromStart}
			if opts.Until, err = logread.ParsePosition(until, now()); err != nil {
				return a.fail(usageError(fmt.Errorf("--until: %w", err)))
			}
			log, closeLog, err := a.openLog(cmd.Context())
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			res, err := replay.Run(cmd.Context(), log, p, opts)
			if err != nil {
				return a.fail(err)
			}
			w := cmd.OutOrStdout()
			if !diffLive {
				return a.fail(output.Print(w, a.format(), "replay", render.Replay{Result: res}))
			}
			gws, err := a.gateways(cmd.Context(), log)
			if err != nil {
				return a.fail(err)
			}
			adm, closeAdm, err := a.kafkaAdmin(gws)
			if err != nil {
				return a.fail(err)
			}
			defer closeAdm()
			diffs, sum, err := livegroups.CompareReplay(cmd.Context(), adm, res)
			if err != nil {
				return a.fail(a.kafkaError(cmd.Context(), gws, err))
			}
			if err := output.ListSummary(w, a.format(), "replay.differences", diffs, render.LiveDiffVerdict{Summary: sum}); err != nil {
				return a.fail(err)
			}
			if !sum.Agree {
				return a.fail(&findingsError{fmt.Sprintf("replay: %d difference(s) between the log and the fleet", len(diffs))})
			}
			return nil
		},
	}
	operatorCmd(cmd, func(cmd *cobra.Command, args []string) error {
		if len(args) != 2 || args[0] != "partition" {
			return usageError(fmt.Errorf("usage: %s replay partition N", programName))
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVar(&fromStart, "from-start", false, "fold from offset 0 instead of the last checkpoint")
	fl.StringVar(&until, "until", "", "stop after this offset, RFC 3339 time or duration ago")
	fl.BoolVar(&diffLive, "diff-live", false, "compare with what the gateways answer; exit 1 on a difference")
	return cmd
}
