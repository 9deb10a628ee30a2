package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

func newGroupSeekCmd(a *app) *cobra.Command {
	var (
		topics         []string
		dryRun, yesAsk bool
	)
	cmd := &cobra.Command{
		Use:   "seek GROUP",
		Short: "Move a consumer group's committed offsets, with a plan first",
		Long: `Move a group's committed offsets to exactly one target:

  --to earliest       each partition's log start
  --to latest         each partition's end: nothing left to read
  --to-offset N       offset N on every partition
  --to-time T         the first record whose timestamp is at or after T (RFC 3339, or a duration
                      ago such as 90m); the end where no record is that recent
  --shift N           N records from the committed offset (negative: back)
  --to-commit-at T    the offsets the group had committed at T (RFC 3339 or a duration ago), from
                      the coordinator log's history; partitions it had not committed to then
                      are left as they are
  --undo              the offsets the newest seek not undone yet replaced (again: the seek
                      before it), from the coordinator log's history

over every topic the group has committed offsets for, or --topic T (every partition of T) or
--topic T:P,P,... (repeatable). A target before a partition's log start or past its end is
clamped to that bound, and the plan says so.

seek prints the plan: per partition the offset committed now, the new one, and how many records
the group will read again or skip; --dry-run stops there. Otherwise it asks for confirmation
(--yes when stdin is not a terminal) and commits the new offsets through the group's coordinator
as one OffsetCommit, so they land in the coordinator log as every commit does. Each partition's
commit carries the metadata "iggy-kafka seek <time>" (an undo's "iggy-kafka seek undo <time>"),
by which --undo finds the seek in the log.

As in Kafka, only a group without members can be moved: a group with live members is refused,
naming them, and a member that joins between the plan and the commit makes the coordinator refuse
the commit whole. An unknown group, topic or partition is refused; nothing is written then.`,
		Example: `  iggy-kafka group seek orders --to-time 2026-12-01T14:02:00Z --dry-run
  iggy-kafka group seek orders --to earliest --topic payments:0,1 --yes
  iggy-kafka group seek orders --shift -100 -o json --dry-run
  iggy-kafka group seek orders --to-commit-at 2026-12-01T14:00:00Z --dry-run
  iggy-kafka group seek orders --undo --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			fl := cmd.Flags()
			group := args[0]
			if err := contradictions(fl, [][2]string{{"dry-run", "yes"}}); err != nil {
				return a.fail(err)
			}
			target, err := seekTarget(fl)
			if err != nil {
				return a.fail(err)
			}
			only, err := groupadmin.ParseTopics(topics)
			if err != nil {
				return a.fail(usageError(fmt.Errorf("--topic: %w", err)))
			}
			var log *logread.Log
			if target.Kind == groupadmin.CommitAt || target.Kind == groupadmin.Undo {
				l, closeLog, err := a.openLog(ctx)
				if err != nil {
					return a.fail(err)
				}
				defer closeLog()
				log = l
			}
			gws, adm, closeAdm, err := a.groupAdmin(ctx, log)
			if err != nil {
				return a.fail(err)
			}
			defer closeAdm()
			seeker := groupadmin.Seeker{Admin: adm, Log: log, Now: now}
			plan, notes, err := seeker.Plan(ctx, group, target, only)
			if err != nil {
				return a.fail(a.iggyError(a.kafkaError(ctx, gws, err)))
			}
			for _, n := range notes {
				fmt.Fprintln(cmd.ErrOrStderr(), n)
			}
			w, f := cmd.OutOrStdout(), a.format()
			sum := plan.Summary()
			if dryRun {
				return a.fail(output.ListSummary(w, f, "group.seek", plan.Steps, sum))
			}
			if f == output.Text {
				if err := output.List(w, f, "group.seek", plan.Steps); err != nil {
					return a.fail(err)
				}
			}
			errw := cmd.ErrOrStderr()
			if !yesAsk {
				if !isTerminal(cmd.InOrStdin()) {
					return a.fail(usageError(errors.New("group seek moves the group's offsets: confirm with --yes when stdin is not a terminal, or see the plan with --dry-run")))
				}
				fmt.Fprintf(errw, "%s.\nMove them? [y/N] ", sum)
				answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if s := strings.ToLower(strings.TrimSpace(answer)); s != "y" && s != "yes" {
					return a.fail(errors.New("seek cancelled: nothing was moved"))
				}
			}
			if err := seeker.Seek(ctx, plan); err != nil {
				return a.fail(a.kafkaError(ctx, gws, err))
			}
			sum.Done = true
			if f == output.Text {
				_, err := fmt.Fprintf(w, "\n%s\n", sum)
				return a.fail(err)
			}
			return a.fail(output.ListSummary(w, f, "group.seek", plan.Steps, sum))
		},
	}
	operatorCmdOf(cmd, "group", groupArg)
	fl := cmd.Flags()
	fl.String("to", "", "earliest or latest")
	fl.String("to-offset", "", "this offset on every partition")
	fl.String("to-time", "", "the first record at or after this RFC 3339 time or duration ago (90m)")
	fl.String("shift", "", "this many records from the committed offset (negative: back)")
	fl.String("to-commit-at", "", "the offsets the group had committed at this RFC 3339 time or duration ago, from the coordinator log")
	fl.StringArrayVar(&topics, "topic", nil, "only this topic, T or T:P,P,... (repeatable; default: every topic the group committed to)")
	fl.Bool("undo", false, "put back the offsets the newest seek replaced")
	fl.BoolVar(&dryRun, "dry-run", false, "print the plan and stop")
	fl.BoolVar(&yesAsk, "yes", false, "do not ask for confirmation")
	_ = cmd.RegisterFlagCompletionFunc("to", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"earliest", "latest"}, cobra.ShellCompDirectiveNoFileComp
	})
	for _, name := range []string{"to-offset", "to-time", "to-commit-at", "shift", "topic"} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return cmd
}

// seekTarget reads the one target flag set (groupadmin.TargetNames); anything else is a usage
// error.
func seekTarget(fl *pflag.FlagSet) (groupadmin.Target, error) {
	var set []string
	for _, name := range groupadmin.TargetNames {
		if fl.Changed(name) {
			set = append(set, name)
		}
	}
	switch len(set) {
	case 0:
		return groupadmin.Target{}, usageError(errors.New("say where to move the offsets: --to earliest|latest, --to-offset N, --to-time T, --to-commit-at T, --shift N or --undo"))
	case 1:
	default:
		return groupadmin.Target{}, usageError(fmt.Errorf("--%s do not go together: choose one target", strings.Join(set, " and --")))
	}
	value := fl.Lookup(set[0]).Value.String()
	if set[0] == "undo" {
		if value != "true" {
			return groupadmin.Target{}, usageError(errors.New("--undo=false is no target: leave --undo out"))
		}
		value = ""
	}
	t, err := groupadmin.ParseTarget(set[0], value, now())
	if err != nil {
		return t, usageError(fmt.Errorf("--%w", err))
	}
	return t, nil
}
