package main

import (
	"context"
	"errors"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/groupadmin"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/drainplan"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/clock"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/tail"
	"github.com/iggy-kafka/iggy-kafka/topics"
	"github.com/iggy-kafka/iggy-kafka/tui"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

func newClaimsCmd(a *app) *cobra.Command {
	var (
		group    string
		history  int
		watch    bool
		nodes    bool
		readOnly bool
		txns     bool
	)
	cmd := &cobra.Command{
		Use:   "claims",
		Short: "Show which gateway coordinates each coordinator log partition; --watch is the live console",
		Long: `First the gateways: every node the log and Iggy know, its state (serving, draining, drained, or
gone: no announcement within the live bound, a leaving announcement, or its lease membership
ended), address, coordinator partitions and groups held, age of its last announcement, since
when it is drained, and its version; the controller (owner of partition 0) is starred.
--nodes prints that table alone.

Then, for each of the 16 coordinator log partitions: the owner node and address (from the
newest valid claim in the log), claim number, when it was claimed and for how long, groups
held, log end offset, last checkpoint (offset, age, records since), owner lag, and the node
whose lease holds it (rendezvous hashing with bounded loads over the kafka-gateways members). FLAGS marks
disagreements between the log, the lease and the owners topic, and partitions without an owner.

--group G says which partition and gateway coordinate G and whether FindCoordinator agrees,
then what G's coordinator answers: state, protocol, members with their assignment, and per
partition the committed offset, the log end, the lag in records and in time (the age of the
oldest unread record). It exits 1 when the log or the gateways cannot be reached, saying what
each gateway's address answered. The gateways are asked at the addresses they announce in the
log unless --kafka-bootstrap is set.
--history P lists every claim of partition P and how long each owner held it.
--transactions lists the open transactions (Ongoing, PrepareCommit, PrepareAbort) the log holds:
transactional id, log partition, coordinating node, state, producer id and epoch, timeout, how
long the transaction has run, whether it hangs (open past its timeout or 15 minutes), its
partitions and groups.

--watch is the live console: the nodes, the partitions and the recent handovers (why: drain,
stop, crash, lease; and how long the partition went unserved), kept current as the log grows.
Keys: arrows or j/k move, tab switches pane, enter lists a partition's groups and then a
group's members and lag, esc goes back, s/S sort, / filters, d drains the selected node (the
plan is shown first, y confirms, anything else cancels), u undoes a drain, ? lists every key,
q quits. On a group's page, o moves its committed offsets: type the target as 'group seek' takes
it (to earliest, to-time 10m, shift -100, to-commit-at T, ...), see the plan, y moves, anything
else cancels; the page marks a seek that can be undone, and U undoes it the same way. Drains
and seeks from the view are the same requests as 'drain' and 'group seek' and refused by the
same rules; --read-only turns them off, and the transactions screen's abort too. One partition
cannot be moved alone (m): the lease decides each partition's owner, so a partition moves only
with its node's drain. t shows the
Kafka topics (per partition: end offset, size, records and bytes per second in and out, the
groups reading it, their largest lag); enter on a partition (or on a topic's row, for all its
partitions) tails its records live, as 'tail' prints them: p pauses and resumes, : jumps to an
offset or a time, / searches the keys, headers and values loaded (n, N move between matches),
x shows values as hex, enter shows a record whole. T shows the open transactions, oldest first,
the hanging ones marked !; a aborts the selected one as 'transactions abort' does (the plan first,
y aborts, anything else cancels). When the store or the
gateways stop answering, a banner says so within 2 s, the rows stay as they were (marked ?),
and the console retries with backoff until the store answers again. Without a terminal --watch
prints one line per change instead (NDJSON with -o json).`,
		Example: `  iggy-kafka claims
  iggy-kafka claims --nodes -o json
  iggy-kafka claims --group orders -o yaml
  iggy-kafka claims --history 7 -o json
  iggy-kafka claims --transactions
  iggy-kafka claims --watch
  iggy-kafka claims --watch --read-only`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			f := a.format()
			fl := cmd.Flags()
			if err := contradictions(fl, [][2]string{
				{"nodes", "group"}, {"nodes", "history"}, {"nodes", "watch"},
				{"history", "group"}, {"watch", "group"}, {"watch", "history"},
				{"transactions", "nodes"}, {"transactions", "group"}, {"transactions", "history"}, {"transactions", "watch"},
			}); err != nil {
				return a.fail(err)
			}
			if readOnly && !watch {
				return a.fail(usageError(errors.New("--read-only goes with --watch: only the console drains")))
			}
			if fl.Changed("history") {
				if err := logread.CheckPartition(history); err != nil {
					return a.fail(usageError(err))
				}
			}
			log, c, closeLog, err := a.openLogClient(ctx)
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			model, err := claims.LoadModel(ctx, log)
			if err != nil {
				return a.fail(a.iggyError(err))
			}
			w := cmd.OutOrStdout()
			switch {
			case fl.Changed("history"):
				return a.fail(output.List(w, f, "claims.history", model.Parts[history].History(now())))
			case group != "":
				d, err := a.describeGroup(ctx, model, group)
				if err != nil {
					return a.fail(err)
				}
				return a.fail(output.Print(w, f, "claims.group", render.Groups{d}))
			case watch && f == output.Text && isTerminal(w):
				gws := a.dial(model.View.Nodes(now()))
				live, closeLive, err := a.kafkaLive(gws)
				if err != nil {
					return a.fail(err)
				}
				defer closeLive()
				prober, err := dial.NewProber(live.Opts)
				if err != nil {
					return a.fail(err)
				}
				defer prober.Close()
				con := &console.Console{Log: log, Store: strings.Join(a.iggyAddrs(), ","), Live: live, Dial: a.dial, Probe: prober.Probe}
				if !readOnly {
					con.Drainer = drainplan.IggyDrainer{Log: log, Writer: c}
				}
				act := consoleActions{Console: con, seeker: groupadmin.Seeker{Admin: live.Admin, Log: log, Now: now}, live: live,
					topics: &topics.Sampler{Iggy: c, Stream: a.values.String("operator-stream"), Commits: con.GroupOffsets}}
				return a.fail(watchView(ctx, con, act, model, readOnly))
			case watch:
				s := output.NewStream[claims.Change](w, f, "claims.change", true)
				if watchLoaded != nil {
					watchLoaded()
				}
				err := claims.Watch(ctx, log, model, func(u claims.Update) error {
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
				return a.fail(a.iggyError(err))
			}
			if nodes {
				return a.fail(output.List(w, f, "claims.nodes", model.Nodes(now())))
			}
			if txns {
				return a.fail(output.List(w, f, "claims.transactions", model.Transactions(now(), true)))
			}
			return a.fail(output.Print(w, f, "claims", render.Fleet(model.Tables(now()))))
		},
	}
	operatorCmd(cmd, noArgs)
	fl := cmd.Flags()
	fl.StringVar(&group, "group", "", "which partition and gateway coordinate this consumer group, its members and lag")
	fl.IntVar(&history, "history", 0, "every claim of this log partition")
	fl.BoolVar(&watch, "watch", false, "the live console (lines without a terminal)")
	fl.BoolVar(&nodes, "nodes", false, "only the node table")
	fl.BoolVar(&txns, "transactions", false, "the open transactions: state, age, partitions, coordinator")
	fl.BoolVar(&readOnly, "read-only", false, "with --watch: no drain or undo from the console")
	_ = cmd.RegisterFlagCompletionFunc("history", completePartitions)
	_ = cmd.RegisterFlagCompletionFunc("group", cobra.NoFileCompletions)
	return cmd
}

// watchView runs the console until the operator quits or ctx ends; the engine feeds it
// snapshots as the records arrive and a status beat four times a second.
func watchView(ctx context.Context, con *console.Console, act tui.Actions, model *claims.Model, readOnly bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	first := console.Snapshot{At: now(), Nodes: model.Nodes(now()), Rows: model.Rows(now()), Status: con.Status()}
	p := tea.NewProgram(tui.NewConsole(first, act, readOnly), tea.WithAltScreen(), tea.WithContext(ctx))
	errc := make(chan error, 1)
	go func() { errc <- con.Run(ctx, model, programSink{p}) }()
	final, err := p.Run()
	if c, ok := final.(tui.Console); ok {
		c.Close()
	}
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

// consoleActions are the console's actions: the engine's (drains, groups) and the seeks of a
// group's offsets, which go through the gateways and read the coordinator log's history.
type consoleActions struct {
	*console.Console
	seeker groupadmin.Seeker
	live   livegroups.KafkaLive
	topics *topics.Sampler
}

func (c consoleActions) Topics(ctx context.Context) (topics.Snapshot, error) {
	return c.topics.Sample(ctx)
}

// Tail is `tail TOPIC[:P] --from FROM` in the console's tail pane: the same reader, following.
func (c consoleActions) Tail(_ context.Context, topic string, parts []int32, from string) (tui.RecordStream, error) {
	o := tail.Options{Topic: topic, Partitions: parts, Follow: true, Last: tui.TailBacklog}
	if from != "" {
		var err error
		if o.From, o.FromEnd, err = inspect.ParseFrom(from, now()); err != nil {
			return nil, err
		}
	}
	return tail.Open(c.live.Admin, c.live.Opts, o), nil
}

// PlanAbort is `transactions abort ID`'s plan, from the gateways the console asks.
func (c consoleActions) PlanAbort(ctx context.Context, id string) (txnadmin.Plan, error) {
	return txnadmin.PlanAbort(ctx, c.live.Admin, id, now())
}

// Abort is `transactions abort ID --yes` on the plan the operator confirmed, through a client of
// its own (closed when the abort is done), as the command does.
func (c consoleActions) Abort(ctx context.Context, p txnadmin.Plan) (txnadmin.Summary, error) {
	cl, err := kgo.NewClient(c.live.Opts...)
	if err != nil {
		return txnadmin.Summary{}, err
	}
	defer cl.Close()
	return txnadmin.Abort(ctx, cl, c.live.Admin, clock.Real, p)
}

func (c consoleActions) PlanSeek(ctx context.Context, group, name, value string) (groupadmin.Plan, []string, error) {
	t, err := groupadmin.ParseTarget(name, value, now())
	if err != nil {
		return groupadmin.Plan{}, nil, err
	}
	return c.seeker.Plan(ctx, group, t, nil)
}

func (c consoleActions) Seek(ctx context.Context, p groupadmin.Plan) error {
	return c.seeker.Seek(ctx, p)
}

func (c consoleActions) Undoable(ctx context.Context, group string) (string, error) {
	return groupadmin.Undoable(ctx, c.seeker.Log, group)
}

// programSink hands the engine's messages to the program.
type programSink struct{ p *tea.Program }

func (s programSink) Snapshot(snap console.Snapshot) { s.p.Send(tui.SnapshotMsg(snap)) }
func (s programSink) Status(st console.Status)       { s.p.Send(tui.StatusMsg(st)) }

// watchLoaded, when set by a test, is called once claims --watch has read the fleet and starts
// following the log, so the test writes the record it expects as a change only after that.
var watchLoaded func()
