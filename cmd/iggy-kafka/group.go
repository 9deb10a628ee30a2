package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
)

func newGroupCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List consumer groups, describe one, move its committed offsets",
		Long: `The consumer groups of the fleet, through the gateways: 'group list' lists them, 'group describe G'
shows one as the console's group page does, 'group seek G' moves its committed offsets.

The gateways are asked at the addresses they announce in the coordinator log (read from Iggy,
--iggy) unless --kafka-bootstrap is set.`,
		Example: `  iggy-kafka group list
  iggy-kafka group describe orders -o yaml
  iggy-kafka group seek orders --to-time 10m --dry-run`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unknown command %q for %s%s; see '%s --help'", args[0], cmd.CommandPath(), didYouMean(args[0], commandNames(cmd)), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newGroupListCmd(a), newGroupDescribeCmd(a), newGroupSeekCmd(a))
	return cmd
}

func newGroupListCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the consumer groups every gateway coordinates",
		Long: `List every consumer group the gateways coordinate: its coordinator node, type, state, protocol,
members, the topics it reads and its lag in records (the sum over its partitions).`,
		Example: `  iggy-kafka group list
  iggy-kafka group list -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			gws, adm, closeAdm, err := a.groupAdmin(ctx, nil)
			if err != nil {
				return a.fail(err)
			}
			defer closeAdm()
			rows, err := groupadmin.List(ctx, adm)
			if err != nil {
				return a.fail(a.kafkaError(ctx, gws, err))
			}
			return a.fail(output.List(cmd.OutOrStdout(), a.format(), "group.list", rows))
		},
	}
	return operatorCmdOf(cmd, "group", noArgs)
}

func newGroupDescribeCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe GROUP",
		Short: "Show a group's coordinator, members, assignment, committed offsets and lag",
		Long: `Show what the console's group page shows (and 'claims --group'): which log partition and gateway
coordinate the group and whether FindCoordinator agrees, the group's state and protocol, its
members with their assignment, and per partition the committed offset, the log end, the lag in
records and in time (the age of the oldest unread record). A group that neither the log nor
its coordinator knows exits 1.`,
		Example: `  iggy-kafka group describe orders
  iggy-kafka group describe orders -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log, closeLog, err := a.openLog(ctx)
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			model, err := claims.LoadModel(ctx, log)
			if err != nil {
				return a.fail(a.iggyError(err))
			}
			d, err := a.describeGroup(ctx, model, args[0])
			if err != nil {
				return a.fail(err)
			}
			if !d.InLog && len(d.Members) == 0 && len(d.Lag) == 0 {
				return a.fail(fmt.Errorf("group %s is unknown: the log holds no such group and its coordinator knows none ('%s group list' lists the groups)", args[0], programName))
			}
			return a.fail(output.Print(cmd.OutOrStdout(), a.format(), "group.describe", render.Groups{d}))
		},
	}
	return operatorCmdOf(cmd, "group", groupArg)
}

// groupArg takes exactly one group name.
func groupArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError(fmt.Errorf("usage: %s %s GROUP", programName, cmd.CommandPath()[len(programName)+1:]))
	}
	return nil
}

// describeGroup is `claims --group G` and `group describe G`: livegroups.DescribeGroup on the loaded
// model, asking the gateways DialGateways picks.
func (a *app) describeGroup(ctx context.Context, model *claims.Model, group string) (livegroups.GroupDetail, error) {
	gws := a.dial(model.View.Nodes(now()))
	live, closeLive, err := a.kafkaLive(gws)
	if err != nil {
		return livegroups.GroupDetail{}, err
	}
	defer closeLive()
	d, err := livegroups.DescribeGroup(ctx, live, livegroups.ModelLog(model), group, now())
	if err != nil {
		return livegroups.GroupDetail{}, a.kafkaError(ctx, gws, err)
	}
	return d, nil
}

// groupAdmin is a kadm client on the gateways, for the commands that need no coordinator log
// beyond the announcements (read from log, or a connection of its own when log is nil).
func (a *app) groupAdmin(ctx context.Context, log *logread.Log) (dial.Gateways, *kadm.Client, func(), error) {
	gws, err := a.gateways(ctx, log)
	if err != nil {
		return gws, nil, nil, err
	}
	adm, closeAdm, err := a.kafkaAdmin(gws)
	return gws, adm, closeAdm, err
}
