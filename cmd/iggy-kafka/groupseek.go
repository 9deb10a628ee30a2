package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

func newGroupSeekCmd(a *app) *cobra.Command {
	var (
		to, toTime     string
		toCommitAt     string
		toOffset       int64
		shift          int64
		topics         []string
		dryRun, yesAsk bool
		undo           bool
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
			target, err := seekTarget(fl.Changed, to, toOffset, toTime, toCommitAt, shift)
			if err != nil {
				return a.fail(err)
			}
			only, err := groupadmin.ParseTopics(topics)
			if err != nil {
				return a.fail(usageError(fmt.Errorf("--topic: %w", err)))
			}
			var log *inspect.Log
			if target.Kind == groupadmin.CommitAt || target.Kind == groupadmin.Undo {
				l, closeLog, err := a.openLog(ctx)
				if err != nil {
					return a.fail(err)
				}
				defer closeLog()
				log = l
			}
			switch target.Kind {
			case groupadmin.CommitAt:
				if target.Commits, err = groupadmin.CommitsAt(ctx, log, group, target.Time); err != nil {
					return a.fail(a.iggyError(err))
				}
			case groupadmin.Undo:
				var missing []string
				target, missing, err = groupadmin.LastSeek(ctx, log, group)
				if err != nil {
					return a.fail(a.iggyError(err))
				}
				for _, m := range missing {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s had no commit before seek %s: left as it is\n", m, target.Seek)
				}
			}
			gws, adm, closeAdm, err := a.groupAdmin(ctx, log)
			if err != nil {
				return a.fail(err)
			}
			defer closeAdm()
			plan, err := groupadmin.Load(ctx, adm, group, target, only)
			if err != nil {
				return a.fail(a.kafkaError(ctx, gws, err))
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
			if err := groupadmin.Commit(ctx, adm, plan, now()); err != nil {
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
	fl.StringVar(&to, "to", "", "earliest or latest")
	fl.Int64Var(&toOffset, "to-offset", 0, "this offset on every partition")
	fl.StringVar(&toTime, "to-time", "", "the first record at or after this RFC 3339 time or duration ago (90m)")
	fl.Int64Var(&shift, "shift", 0, "this many records from the committed offset (negative: back)")
	fl.StringVar(&toCommitAt, "to-commit-at", "", "the offsets the group had committed at this RFC 3339 time or duration ago, from the coordinator log")
	fl.StringArrayVar(&topics, "topic", nil, "only this topic, T or T:P,P,... (repeatable; default: every topic the group committed to)")
	fl.BoolVar(&undo, "undo", false, "put back the offsets the newest seek replaced")
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

// seekTargets are the flags of which a seek takes exactly one.
var seekTargets = []string{"to", "to-offset", "to-time", "to-commit-at", "shift", "undo"}

// seekTarget reads the one target flag set; anything else is a usage error.
func seekTarget(changed func(string) bool, to string, toOffset int64, toTime, toCommitAt string, shift int64) (groupadmin.Target, error) {
	var set []string
	for _, name := range seekTargets {
		if changed(name) {
			set = append(set, "--"+name)
		}
	}
	switch len(set) {
	case 0:
		return groupadmin.Target{}, usageError(errors.New("say where to move the offsets: --to earliest|latest, --to-offset N, --to-time T, --to-commit-at T, --shift N or --undo"))
	case 1:
	default:
		return groupadmin.Target{}, usageError(fmt.Errorf("%s do not go together: choose one target", strings.Join(set, " and ")))
	}
	switch set[0] {
	case "--to":
		switch to {
		case "earliest":
			return groupadmin.Target{Kind: groupadmin.Earliest}, nil
		case "latest":
			return groupadmin.Target{Kind: groupadmin.Latest}, nil
		}
		return groupadmin.Target{}, usageError(fmt.Errorf("--to %q: want earliest or latest (--to-offset, --to-time and --shift take the others)", to))
	case "--to-offset":
		if toOffset < 0 {
			return groupadmin.Target{}, usageError(fmt.Errorf("--to-offset %d: an offset is 0 or more", toOffset))
		}
		return groupadmin.Target{Kind: groupadmin.Offset, Offset: toOffset}, nil
	case "--to-time":
		t, err := pastTime("to-time", toTime)
		return groupadmin.Target{Kind: groupadmin.Time, Time: t}, err
	case "--to-commit-at":
		t, err := pastTime("to-commit-at", toCommitAt)
		return groupadmin.Target{Kind: groupadmin.CommitAt, Time: t}, err
	case "--undo":
		return groupadmin.Target{Kind: groupadmin.Undo}, nil
	}
	return groupadmin.Target{Kind: groupadmin.Shift, Shift: shift}, nil
}

// pastTime reads flag's RFC 3339 time or duration ago, refusing one in the future.
func pastTime(flag, value string) (time.Time, error) {
	now := now()
	pos, err := inspect.ParsePosition(value, now)
	if err != nil || pos.HasOffset || !pos.Set() {
		return time.Time{}, usageError(fmt.Errorf("--%s %q is neither an RFC 3339 time nor a duration ago (90m)", flag, value))
	}
	if pos.Time.After(now) {
		return time.Time{}, usageError(fmt.Errorf("--%s %s is in the future", flag, pos.Time.UTC().Format(time.RFC3339)))
	}
	return pos.Time, nil
}
