package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

func newDrainCmd(a *app) *cobra.Command {
	var (
		dryRun, yes, wait, undo bool
		timeout                 time.Duration
	)
	cmd := &cobra.Command{
		Use:   "drain node N [N...]",
		Short: "Hand gateways' coordinator partitions to the others",
		Long: `Hand all of the named nodes' coordinator log partitions to the other gateways, with their groups,
members and offsets (no rebalance), and take the nodes out of Metadata leadership; they keep
serving produce and fetch for the clients still connected to them. Several nodes are planned
and drained together.

drain prints the plan (every partition that will move, from which node to which, collateral
moves included), stops there with --dry-run, asks for confirmation unless --yes, then asks the
nodes to drain and follows each partition as sentences: released, claimed by M, served by M.
It says "drained" only once every partition is claimed and served elsewhere, then lists the
moves that happened. --wait makes that the exit status without a terminal: 0 when drained as
planned, 1 on --timeout, when the drain was undone meanwhile, or when the moves differ from the
plan. --undo brings the nodes back (with --wait, until each claims partitions again).

A drain that would leave no gateway serving the coordinator log is refused, --dry-run included;
so is a drain of an unknown, gone or already drained node, and an undo of a node that is not
drained.

The request is a message on <stream>.meta/` + fleet.DrainsTopic + `: it lasts across a restart of the
node, shows in 'claims' (state draining or drained), and needs Iggy credentials allowed to send
to the meta stream.`,
		Example: `  iggy-kafka drain node 2 --dry-run
  iggy-kafka drain node 2 3 --yes --wait --timeout 30s
  iggy-kafka drain node 2 --undo --wait`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := contradictions(cmd.Flags(), [][2]string{{"dry-run", "yes"}, {"dry-run", "wait"}, {"dry-run", "undo"}}); err != nil {
				return a.fail(err)
			}
			var nodes []int32
			for _, arg := range args[1:] {
				n, err := strconv.ParseInt(arg, 10, 32)
				if err != nil || n < 0 {
					return a.fail(usageError(fmt.Errorf("node %q is not a node id", arg)))
				}
				if !slices.Contains(nodes, int32(n)) {
					nodes = append(nodes, int32(n))
				}
			}
			ctx := cmd.Context()
			log, c, closeLog, err := a.openLogClient(ctx)
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			d := drainplan.IggyDrainer{Log: log, Writer: c}
			return a.fail(runDrain(ctx, drainRun{
				log: log, drainer: d, nodes: nodes, f: a.format(),
				dryRun: dryRun, yes: yes, undo: undo, wait: wait,
				follow:  wait || isTerminal(cmd.OutOrStdout()),
				timeout: timeout, in: cmd.InOrStdin(), inTerminal: isTerminal(cmd.InOrStdin()),
				out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(),
			}))
		},
	}
	operatorCmd(cmd, func(cmd *cobra.Command, args []string) error {
		if len(args) < 2 || args[0] != "node" {
			return usageError(fmt.Errorf("usage: %s drain node N [N...]", programName))
		}
		return nil
	})
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false, "print the plan and stop")
	fl.BoolVar(&yes, "yes", false, "do not ask for confirmation")
	fl.BoolVar(&wait, "wait", false, "follow the drain to its end; exit 0 when drained as planned, 1 otherwise")
	fl.BoolVar(&undo, "undo", false, "bring the nodes back")
	fl.DurationVar(&timeout, "timeout", time.Minute, "how long to follow the drain")
	return cmd
}

type drainRun struct {
	log     *logread.Log
	drainer drainplan.Drainer
	nodes   []int32
	f       output.Format

	dryRun, yes, undo, wait, follow bool
	timeout                         time.Duration
	in                              io.Reader
	inTerminal                      bool
	out, errw                       io.Writer
}

func (r drainRun) who() string { return drainwatch.Who(r.nodes) }

func runDrain(ctx context.Context, r drainRun) error {
	model, err := claims.LoadModel(ctx, r.log)
	if err != nil {
		return err
	}
	if r.undo {
		return runUndo(ctx, r, model)
	}
	plan, err := drainplan.Plan(model, r.nodes, time.Now())
	if err != nil {
		return undoHint(err)
	}
	if r.f == output.Text || r.dryRun {
		if err := output.List(r.out, r.f, "drain.plan", plan.Steps); err != nil {
			return err
		}
	}
	fmt.Fprintln(r.errw, plan.Summary())
	if r.dryRun {
		return nil
	}
	if !r.yes {
		if !r.inTerminal {
			return usageError(errors.New("drain changes the fleet: confirm with --yes when stdin is not a terminal"))
		}
		fmt.Fprintf(r.errw, "Drain %s? [y/N] ", r.who())
		answer, _ := bufio.NewReader(r.in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("drain cancelled")
		}
	}
	w := drainwatch.Drain(plan)
	if err := r.request(ctx, w, false); err != nil {
		return err
	}
	if !r.follow {
		fmt.Fprintf(r.errw, "drain of %s requested; follow it with '%s claims --watch'\n", r.who(), programName)
		return nil
	}
	s := output.NewStream[drainwatch.Event](r.out, r.f, "drain.event", true)
	err = r.watch(ctx, model, w, func(evs []drainwatch.Event) error {
		for _, e := range evs {
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
		return nil
	})
	switch {
	case err != nil:
		return err
	case w.Undone():
		return fmt.Errorf("the drain of %s was undone meanwhile", r.who())
	case !w.Done():
		return fmt.Errorf("%s not drained within %v; the drain stays requested: '%s drain node %s --undo' cancels it",
			r.who(), r.timeout, programName, drainwatch.JoinNodes(r.nodes))
	}
	differ := 0
	for _, m := range plan.Moves(model.Snapshot()) {
		fmt.Fprintln(r.errw, m.Sentence())
		if !m.Planned {
			differ++
		}
	}
	if differ > 0 && r.wait {
		return fmt.Errorf("%s drained, but %d move(s) differ from the plan", r.who(), differ)
	}
	fmt.Fprintf(r.errw, "%s drained: every partition is claimed and served elsewhere\n", r.who())
	return nil
}

// request writes w's request for every node and tells w where each landed.
func (r drainRun) request(ctx context.Context, w *drainwatch.Watch, undo bool) error {
	for _, n := range r.nodes {
		off, err := r.drainer.RequestDrain(ctx, n, undo)
		if err != nil {
			return err
		}
		w.Requested(n, off)
	}
	return nil
}

// watch feeds w the model as it follows the log, within --timeout, until w is done or undone;
// each round's events go to show.
func (r drainRun) watch(ctx context.Context, model *claims.Model, w *drainwatch.Watch, show func([]drainwatch.Event) error) error {
	fctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	step := func() error {
		if err := show(w.Observe(model.Snapshot(), time.Now())); err != nil {
			return err
		}
		if w.Done() || w.Undone() {
			return logread.ErrStop
		}
		return nil
	}
	err := step()
	if err == nil {
		err = claims.FollowModel(fctx, r.log, model, func([]claims.Handover) error { return step() })
	}
	if errors.Is(err, logread.ErrStop) {
		return nil
	}
	return err
}

// runUndo asks drained nodes back; with --wait it follows until each is serving again.
func runUndo(ctx context.Context, r drainRun, model *claims.Model) error {
	if err := drainplan.CheckUndo(model, r.nodes, time.Now()); err != nil {
		return err
	}
	w := drainwatch.Undo(r.nodes)
	if err := r.request(ctx, w, true); err != nil {
		return err
	}
	fmt.Fprintf(r.errw, "asked %s to come back; each takes back its share of the coordinator partitions\n", r.who())
	if !r.wait {
		return nil
	}
	err := r.watch(ctx, model, w, func([]drainwatch.Event) error { return nil })
	switch {
	case err != nil:
		return err
	case w.Undone():
		return fmt.Errorf("%s drained again meanwhile", r.who())
	case !w.Done():
		return fmt.Errorf("%s not serving again within %v; the undo stays requested", r.who(), r.timeout)
	}
	for _, nd := range model.Nodes(time.Now()) {
		if slices.Contains(r.nodes, nd.Node) {
			fmt.Fprintf(r.errw, "node %d serving again: %d partition(s)\n", nd.Node, len(nd.Partitions))
		}
	}
	return nil
}

// undoHint adds to a drain refused because a node is already drained the command that undoes
// that drain.
func undoHint(err error) error {
	var r *drainplan.Refused
	if !errors.As(err, &r) || len(r.Drained) == 0 {
		return err
	}
	return &drainplan.Refused{Reason: fmt.Sprintf("%s; undo it with '%s drain node %s --undo'", r.Reason, programName, drainwatch.JoinNodes(r.Drained)), Drained: r.Drained}
}
