package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

func newDrainCmd(a *app) *cobra.Command {
	var (
		dryRun, yes, wait, undo, force bool
		timeout                        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "drain node N",
		Short: "Hand a gateway's coordinator partitions to the others",
		Long: `Hand all of node N's coordinator log partitions to the other gateways, with their groups, members
and offsets (no rebalance), and take N out of Metadata leadership; N keeps serving produce and
fetch for the clients still connected to it.

drain checks that N is alive, prints the plan (partitions, groups, members), stops there with
--dry-run, asks for confirmation unless --yes, then asks N to drain and follows each partition
as sentences: released by N, claimed by M, served by M. It says "drained" only once every
partition is claimed and served elsewhere. --wait makes that the exit status without a
terminal: 0 when drained, 1 on --timeout or when the drain was undone meanwhile. --undo brings
N back.

The request is a message on <stream>.meta/` + inspect.DrainTopic + `: it lasts across a restart of N, shows in
'claims' (flag owner-draining), and needs Iggy credentials allowed to send to the meta stream.`,
		Example: `  iggy-kafka drain node 2 --dry-run
  iggy-kafka drain node 2 --yes --wait --timeout 30s
  iggy-kafka drain node 2 --undo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[1], 10, 32)
			if err != nil || n < 0 {
				return a.fail(usageError(fmt.Errorf("node %q is not a node id", args[1])))
			}
			node := int32(n)
			ctx := cmd.Context()
			log, c, closeLog, err := a.openLogClient(ctx)
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			d := inspect.IggyDrainer{Log: log, Writer: c}
			return a.fail(runDrain(ctx, drainRun{
				log: log, drainer: d, node: node, f: a.format(),
				dryRun: dryRun, yes: yes, undo: undo, force: force,
				follow:  wait || isTerminal(cmd.OutOrStdout()),
				timeout: timeout, in: cmd.InOrStdin(), inTerminal: isTerminal(cmd.InOrStdin()),
				out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(),
			}))
		},
	}
	operatorCmd(cmd, func(cmd *cobra.Command, args []string) error {
		if len(args) != 2 || args[0] != "node" {
			return usageError(fmt.Errorf("usage: %s drain node N", programName))
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print the plan and stop")
	fl.BoolVar(&yes, "yes", false, "do not ask for confirmation")
	fl.BoolVar(&wait, "wait", false, "follow the drain to its end; exit 0 when drained, 1 on --timeout or undo")
	fl.BoolVar(&undo, "undo", false, "bring the node back")
	fl.BoolVar(&force, "force", false, "drain even the last live gateway")
	fl.DurationVar(&timeout, "timeout", time.Minute, "how long to follow the drain")
	return cmd
}

// openLogClient is openLog that also hands out the client, for commands that write.
func (a *app) openLogClient(ctx context.Context) (*inspect.Log, *iggy.Client, func(), error) {
	cfg, err := a.iggyConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, a.values.Duration("request-timeout"))
	defer cancel()
	c, err := iggy.Dial(dctx, cfg)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connect to Iggy at %v: %w", cfg.Addrs, err)
	}
	return inspect.NewLog(c, a.values.String("stream"), nil), c, func() { _ = c.Close() }, nil
}

type drainRun struct {
	log     *inspect.Log
	drainer inspect.Drainer
	node    int32
	f       output.Format

	dryRun, yes, undo, force, follow bool
	timeout                          time.Duration
	in                               io.Reader
	inTerminal                       bool
	out, errw                        io.Writer
}

func runDrain(ctx context.Context, r drainRun) error {
	if r.undo {
		if err := r.drainer.RequestDrain(ctx, r.node, true); err != nil {
			return err
		}
		fmt.Fprintf(r.errw, "asked node %d to come back; it claims partitions again as Iggy assigns them\n", r.node)
		return nil
	}
	alive, err := r.drainer.Alive(ctx, r.node)
	if err != nil {
		return err
	}
	if !alive {
		return fmt.Errorf("node %d is not alive (no recent announcement on %s): its partitions move when Iggy ends its lease, there is nothing to drain", r.node, inspect.OwnersTopic)
	}
	fleet, err := inspect.LoadFleet(ctx, r.log)
	if err != nil {
		return err
	}
	plan, err := inspect.PlanDrain(fleet, r.node, r.force)
	if err != nil {
		return err
	}
	groups, members := 0, 0
	for _, s := range plan {
		groups += len(s.Groups)
		members += s.Members
	}
	summary := fmt.Sprintf("drain node %d: %d partition(s), %d group(s), %d member(s) move to the other gateways without a rebalance", r.node, len(plan), groups, members)
	if r.f == output.Text || r.dryRun {
		if err := output.List(r.out, r.f, "drain.plan", plan); err != nil {
			return err
		}
	}
	fmt.Fprintln(r.errw, summary)
	if r.dryRun {
		return nil
	}
	if !r.yes {
		if !r.inTerminal {
			return usageError(errors.New("drain changes the fleet: confirm with --yes when stdin is not a terminal"))
		}
		fmt.Fprintf(r.errw, "Drain node %d? [y/N] ", r.node)
		answer, _ := bufio.NewReader(r.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("drain cancelled")
		}
	}
	requested := time.Now()
	if err := r.drainer.RequestDrain(ctx, r.node, false); err != nil {
		return err
	}
	if !r.follow {
		fmt.Fprintf(r.errw, "drain of node %d requested; follow it with '%s drain node %d --wait' or '%s claims --watch'\n", r.node, programName, r.node, programName)
		return nil
	}
	prog := inspect.NewDrainProgress(r.node, plan)
	s := output.NewStream[inspect.DrainEvent](r.out, r.f, "drain.event", true)
	fctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	errUndone := errors.New("undone")
	done := func() error {
		for _, e := range prog.Observe(fleet, time.Now()) {
			var err error
			if r.f == output.Text {
				_, err = fmt.Fprintln(r.out, e.Sentence())
			} else {
				err = s.Add(e)
			}
			if err != nil {
				return err
			}
		}
		if prog.Done() {
			return inspect.ErrStop
		}
		if req, ok := fleet.Drains[r.node]; ok && req.Undo && req.Time.After(requested) {
			return errUndone
		}
		return nil
	}
	err = done()
	if err == nil {
		err = inspect.FollowFleet(fctx, r.log, fleet, func([]inspect.Handover) error { return done() })
	}
	switch {
	case errors.Is(err, inspect.ErrStop):
	case errors.Is(err, errUndone):
		return fmt.Errorf("the drain of node %d was undone meanwhile", r.node)
	case err != nil:
		return err
	}
	if !prog.Done() {
		return fmt.Errorf("node %d not drained within %v", r.node, r.timeout)
	}
	fmt.Fprintf(r.errw, "node %d drained: every partition is claimed and served elsewhere\n", r.node)
	return nil
}
