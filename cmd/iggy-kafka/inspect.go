package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
)

// inspectMemoryLimit is the heap inspect lets grow before it collects; its resident size stays
// under the 64 MiB docs/operations.md promises ("Performance of the operator commands").
const inspectMemoryLimit = 40 << 20

// followCaughtUp, when set, is called each time inspect has read to the end of the log: a test
// of a follow from the end waits on it, as the follower prints nothing until a record comes.
var followCaughtUp func()

func newInspectCmd(a *app) *cobra.Command {
	var (
		partitions       []int
		group, from, to  string
		follow, doVerify bool
	)
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Decode the coordinator log",
		Long: `Decode the coordinator log (Iggy stream <stream>.meta, topic coordinators) straight from Iggy:
every record with its partition, offset, writer time, claim, whether it is valid or void (written
under a claim that is not the newest at its place in the log), type and decoded fields.

--verify checks the log like an fsck and exits 1 on any finding: void records of fenced owners,
duplicate or decreasing claim numbers, offset gaps, undecodable records, checkpoints that
disagree with the records they cover. It ends with its verdict, "34 records, 1 finding" (under
"summary" with -o json or yaml).

--follow prints the records appended from now on, as tail -f does; --from says to start earlier
(--from beginning for every record, --from 10m for the last ten minutes).

--from and --to take an offset, an RFC 3339 time or a duration ago (10m); times are the writers'.
--from also takes beginning (or start) and end, as kcat's -o does.
Without --iggy the commands connect to 127.0.0.1:8090, where serve's embedded store listens.`,
		Example: `  iggy-kafka inspect --partition 3 --from 10m
  iggy-kafka inspect --group orders -o json
  iggy-kafka inspect --follow
  iggy-kafka inspect --follow --from beginning
  iggy-kafka inspect --verify`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := a.format()
			q := inspect.Query{Partitions: partitions, Group: group, Follow: follow}
			var err error
			if q.From, q.FromEnd, err = inspect.ParseFrom(from, now()); err != nil {
				return a.fail(usageError(fmt.Errorf("--from: %w", err)))
			}
			if q.To, err = logread.ParsePosition(to, now()); err != nil {
				return a.fail(usageError(fmt.Errorf("--to: %w", err)))
			}
			for _, p := range partitions {
				if err := logread.CheckPartition(p); err != nil {
					return a.fail(usageError(err))
				}
			}
			if doVerify && (follow || from != "" || to != "") {
				return a.fail(usageError(fmt.Errorf("--verify reads whole partitions: it takes no --follow, --from or --to")))
			}
			log, closeLog, err := a.openLog(cmd.Context())
			if err != nil {
				return a.fail(err)
			}
			defer closeLog()
			w := cmd.OutOrStdout()
			if doVerify {
				if group != "" {
					partitions = []int{record.Partition(group)}
				}
				s := output.NewStream[verify.Finding](w, f, "inspect.findings", false)
				sum, err := verify.Verify(cmd.Context(), log, partitions, s.Add)
				if err != nil {
					_ = s.Close()
					return a.fail(err)
				}
				if err := s.CloseSummary(render.VerifyVerdict{Summary: sum}); err != nil {
					return a.fail(err)
				}
				if sum.Findings > 0 {
					return a.fail(&findingsError{fmt.Sprintf("verify: %d finding(s) in the coordinator log", sum.Findings)})
				}
				return nil
			}
			// inspect holds almost nothing live while it streams millions of short-lived rows:
			// collect when the heap nears a fixed budget instead of every few megabytes.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(inspectMemoryLimit))
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			s := output.NewStream[inspect.RecordRow](w, f, "inspect.records", follow).WithJSON(inspect.RecordRow.AppendJSON)
			err = inspect.Inspect(cmd.Context(), log, q, s.Add, func() {
				_ = s.Flush()
				if followCaughtUp != nil {
					followCaughtUp()
				}
			})
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			return a.fail(err)
		},
	}
	operatorCmd(cmd, cobra.NoArgs)
	fl := cmd.Flags()
	fl.IntSliceVar(&partitions, "partition", nil, "log partitions to read, 0..15 (default all)")
	fl.StringVar(&group, "group", "", "only the records of this consumer group (in its partition)")
	fl.StringVar(&from, "from", "", "first record: an offset, an RFC 3339 time, a duration ago, beginning or end (default beginning, end with --follow)")
	fl.StringVar(&to, "to", "", "last record: an offset, an RFC 3339 time or a duration ago")
	fl.BoolVar(&follow, "follow", false, "print records as they are appended, from now on unless --from (NDJSON with -o json)")
	fl.BoolVar(&doVerify, "verify", false, "check the log and exit 1 on any finding")
	return cmd
}
