package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

func newTransactionsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "transactions",
		Short: "Abort a hanging transaction",
		Long: `Kafka transactions the gateways coordinate (serve --transactions). 'claims --transactions' lists
the open ones from the coordinator log; 'transactions abort ID' ends one that hangs.

The gateways are asked at the addresses they announce in the coordinator log (read from Iggy,
--iggy) unless --kafka-bootstrap is set.`,
		Example: `  iggy-kafka claims --transactions
  iggy-kafka transactions abort etl-7 --dry-run
  iggy-kafka transactions abort etl-7 --yes`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unknown command %q for %s%s; see '%s --help'", args[0], cmd.CommandPath(), didYouMean(args[0], commandNames(cmd)), cmd.CommandPath()))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newTransactionsAbortCmd(a))
	return cmd
}

func newTransactionsAbortCmd(a *app) *cobra.Command {
	var dryRun, yesAsk bool
	cmd := &cobra.Command{
		Use:   "abort TRANSACTIONAL-ID",
		Short: "Abort a transaction that hangs, fencing its producer",
		Long: `Abort the open transaction of a transactional id, as a Kafka application does when it starts again
with the same transactional.id: the gateway coordinating the id fences the producer holding it
(its next request fails with PRODUCER_FENCED; it must start again), writes abort markers on every
partition the transaction added, so READ_COMMITTED readers go past its records, and drops the
group offsets it staged. Everything is written on the coordinator log first, so a handover in
the middle finishes the abort.

abort prints the plan: the transaction's coordinator, state, producer, age and partitions;
--dry-run stops there. Otherwise it asks for confirmation (--yes when stdin is not a terminal).
Only an open (Ongoing) transaction is aborted: an unknown id, an id with no open transaction, and
one its coordinator is ending already are refused, and nothing is written then.`,
		Example: `  iggy-kafka transactions abort etl-7 --dry-run
  iggy-kafka transactions abort etl-7 --yes -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := contradictions(cmd.Flags(), [][2]string{{"dry-run", "yes"}}); err != nil {
				return a.fail(err)
			}
			id := args[0]
			gws, err := a.gateways(ctx, nil)
			if err != nil {
				return a.fail(err)
			}
			opts, err := a.kafkaOpts(gws)
			if err != nil {
				return a.fail(err)
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				return a.fail(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			plan, err := txnadmin.PlanAbort(ctx, adm, id, now())
			if err != nil {
				if errors.Is(err, txnadmin.ErrUnknown) || errors.Is(err, txnadmin.ErrNotOpen) || errors.Is(err, txnadmin.ErrEnding) {
					return a.fail(err)
				}
				return a.fail(a.kafkaError(ctx, gws, err))
			}
			w, f := cmd.OutOrStdout(), a.format()
			rows, sum := []txnadmin.Plan{plan}, render.TxnAbort{Summary: plan.Summary()}
			if dryRun {
				return a.fail(output.ListSummary(w, f, "transactions.abort", rows, sum))
			}
			if f == output.Text {
				if err := output.List(w, f, "transactions.abort", rows); err != nil {
					return a.fail(err)
				}
			}
			if !yesAsk {
				if !isTerminal(cmd.InOrStdin()) {
					return a.fail(usageError(errors.New("transactions abort fences the producer of " + id + ": confirm with --yes when stdin is not a terminal, or see the plan with --dry-run")))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s.\nAbort it? [y/N] ", sum)
				answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if s := strings.ToLower(strings.TrimSpace(answer)); s != "y" && s != "yes" {
					return a.fail(errors.New("abort cancelled: nothing was written"))
				}
			}
			actx, cancel := context.WithTimeout(ctx, a.values.Duration("request-timeout"))
			defer cancel()
			done, err := txnadmin.Abort(actx, cl, adm, clock.Real, plan)
			if err != nil {
				return a.fail(a.kafkaError(ctx, gws, err))
			}
			if f == output.Text {
				_, err := fmt.Fprintf(w, "\n%s\n", render.TxnAbort{Summary: done})
				return a.fail(err)
			}
			return a.fail(output.ListSummary(w, f, "transactions.abort", rows, render.TxnAbort{Summary: done}))
		},
	}
	operatorCmdOf(cmd, "transactions", cobra.ExactArgs(1))
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print the plan and stop")
	fl.BoolVar(&yesAsk, "yes", false, "do not ask for confirmation")
	return cmd
}
