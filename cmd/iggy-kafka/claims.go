package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/tui"
)

func newClaimsCmd(a *app) *cobra.Command {
	var (
		group   string
		history int
		watch   bool
		nodes   bool
	)
	cmd := &cobra.Command{
		Use:   "claims",
		Short: "Show which gateway coordinates each coordinator log partition",
		Long: `First the gateways: every node the log and Iggy know, its state (serving, draining, drained, or
gone: no announcement within the live bound, a leaving announcement, or its lease membership
ended), address, coordinator partitions and groups held, age of its last announcement, since
when it is drained, and its version; the controller (owner of partition 0) is starred.
--nodes prints that table alone.

Then, for each of the 16 coordinator log partitions: the owner node and address (from the
newest valid claim in the log), claim number, when it was claimed and for how long, groups
held, log end offset, last checkpoint (offset, age, records since), owner lag, and the node
whose lease holds it (rendezvous hashing over the kafka-gateways members). FLAGS marks
disagreements between the log, the lease and the owners topic, and partitions without an owner.

--group G says which partition and gateway coordinate G and whether FindCoordinator agrees.
--history P lists every claim of partition P and how long each owner held it.
--watch follows the log in a live view (q quits, ? help, / filter); without a terminal it prints
one line per change (NDJSON with -o json).`,
		Example: `  iggy-kafka claims
  iggy-kafka claims --nodes -o json
  iggy-kafka claims --group orders
  iggy-kafka claims --history 7 -o json
  iggy-kafka claims --watch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			f := a.format()
			if nodes && (group != "" || cmd.Flags().Changed("history") || watch) {
				return a.fail(usageError(errors.New("--nodes prints the node table alone: it does not go with --group, --history or --watch")))
			}
			if cmd.Flags().Changed("history") {
				if err := inspect.CheckPartition(history); err != nil {
					return a.fail(usageError(err))
				}
			}
			log, closeLog, err := a.openLog(ctx)
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			fleet, err := inspect.LoadModel(ctx, log)
			if err != nil {
				return a.fail(err)
			}
			w := cmd.OutOrStdout()
			switch {
			case cmd.Flags().Changed("history"):
				return a.fail(output.List(w, f, "claims.history", fleet.Parts[history].History(now())))
			case group != "":
				adm, closeAdm, err := a.kafkaAdmin()
				if err != nil {
					return a.fail(err)
				}
				defer closeAdm()
				var node int32
				var addr string
				fc := adm.FindGroupCoordinators(ctx, group)
				r, ok := fc[group]
				switch {
				case !ok:
					err = errors.New("no answer")
				case r.Err != nil:
					err = r.Err
				default:
					node, addr = r.NodeID, fmt.Sprintf("%s:%d", r.Host, r.Port)
				}
				return a.fail(output.List(w, f, "claims.group", []inspect.GroupCoordinator{fleet.CoordinatorOf(group, node, addr, err)}))
			case watch && f == output.Text && isTerminal(w):
				return a.fail(watchView(ctx, log, fleet))
			case watch:
				s := output.NewStream[inspect.Change](w, f, "claims.change", true)
				if watchLoaded != nil {
					watchLoaded()
				}
				err := inspect.Watch(ctx, log, fleet, func(u inspect.Update) error {
					for _, c := range u.Changes {
						if err := s.Add(c); err != nil {
							return err
						}
					}
					return s.Flush()
				})
				if cerr := s.Close(); err == nil {
					err = cerr
				}
				return a.fail(err)
			}
			if nodes {
				return a.fail(output.List(w, f, "claims.nodes", fleet.Nodes(now())))
			}
			return a.fail(output.Print(w, f, "claims", fleetDoc(fleet.Fleet(now()))))
		},
	}
	operatorCmd(cmd, cobra.NoArgs)
	fl := cmd.Flags()
	fl.StringVar(&group, "group", "", "which partition and gateway coordinate this consumer group")
	fl.IntVar(&history, "history", 0, "every claim of this log partition")
	fl.BoolVar(&watch, "watch", false, "follow the log in a live view (lines without a terminal)")
	fl.BoolVar(&nodes, "nodes", false, "only the node table")
	return cmd
}

// watchView runs the live claims view until the operator quits or ctx ends; the watcher feeds
// it each update as the records arrive.
func watchView(ctx context.Context, log *inspect.Log, fleet *inspect.Model) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := tui.NewClaims(fleet.Rows(now()), now)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx))
	errc := make(chan error, 1)
	go func() {
		errc <- inspect.Watch(ctx, log, fleet, func(u inspect.Update) error {
			p.Send(tui.UpdateMsg(u))
			return nil
		})
	}()
	_, err := p.Run()
	cancel()
	werr := <-errc
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled) {
		err = nil
	}
	if err == nil {
		err = werr
	}
	return err
}

// watchLoaded, when set by a test, is called once claims --watch has read the fleet and starts
// following the log, so the test writes the record it expects as a change only after that.
var watchLoaded func()

// fleetDoc is `claims`: the node table, a blank line, then the partition table; JSON and YAML
// hold both under "nodes" and "partitions".
type fleetDoc inspect.Fleet

func (d fleetDoc) Text(w io.Writer) error {
	if err := output.List(w, output.Text, "", d.Nodes); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return output.List(w, output.Text, "", d.Partitions)
}
