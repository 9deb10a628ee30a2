package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/drainwatch"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/console"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// Problems are the sentences of the console's banner, one per source that does not answer.
func Problems(s console.Status) []string {
	var out []string
	if !s.StoreOK() {
		msg := "no answer from the store at " + s.Store + " for " + output.Seconds(s.At.Sub(s.StoreAnswered).Seconds())
		if !s.NextRetry.IsZero() {
			msg += " (retry " + strconv.Itoa(s.Retry) + " in " + output.Seconds(max(0, s.NextRetry.Sub(s.At).Seconds())) + ")"
		}
		if s.StoreError != "" {
			msg += ": " + s.StoreError
		}
		out = append(out, msg+"; the rows are as of "+s.StoreAnswered.UTC().Format("15:04:05"))
	}
	for _, r := range s.Unreachable {
		out = append(out, NoAnswer(r))
	}
	return out
}

// NoAnswer says that a probed gateway does not answer, and why.
func NoAnswer(r dial.Reach) string {
	return "no answer from " + r.Gateway.String() + ": " + r.Err.Error()
}

// Drain says where a drain or an undo started from the console stands.
func Drain(d console.DrainStatus) string {
	who := drainwatch.Who(d.Nodes)
	served := 0
	for _, e := range d.Events {
		if e.Phase == drainwatch.PhaseServed {
			served++
		}
	}
	switch {
	case d.Error != "":
		return "the request for " + who + " failed: " + d.Error
	case d.Undo && d.Done:
		return who + " serving again"
	case d.Undo:
		return "asked " + who + " to come back; waiting until it serves"
	case d.Undone:
		return "the drain of " + who + " was undone meanwhile"
	case d.Done:
		differ := 0
		for _, m := range d.Moves {
			if !m.Planned {
				differ++
			}
		}
		if differ > 0 {
			return fmt.Sprintf("%s drained, but %d move(s) differ from the plan", who, differ)
		}
		return who + " drained: every partition is claimed and served elsewhere"
	}
	return fmt.Sprintf("draining %s: %d of %d partition(s) served elsewhere", who, served, len(d.Plan.Steps))
}

// Handover is a handover as one sentence, for logs and the watch view's pane.
func Handover(h claims.Handover) string {
	var b strings.Builder
	b.WriteString("partition " + strconv.Itoa(h.Partition) + ": ")
	if h.From == nil {
		b.WriteString("claimed by node " + strconv.Itoa(int(h.To)))
	} else {
		b.WriteString("node " + strconv.Itoa(int(*h.From)) + " -> node " + strconv.Itoa(int(h.To)))
	}
	b.WriteString(" (claim " + strconv.FormatUint(h.Claim, 10) + ")")
	if h.HeldSeconds != nil {
		b.WriteString(", held " + output.Seconds(*h.HeldSeconds))
	}
	return b.String()
}

// VerifyVerdict is a verify's summary with its sentence (output.Summary): the value is the
// envelope's "summary", String ends the text output.
type VerifyVerdict struct{ verify.Summary }

// String is the verdict's sentence: "34 records, 1 finding".
func (v VerifyVerdict) String() string {
	s := v.Summary
	return output.Plural(int(s.Records), "record") + ", " + output.Plural(s.Findings, "finding")
}

// LiveDiffVerdict is replay --diff-live's summary with its sentence (output.Summary): the value
// is the envelope's "summary", String ends the text output.
type LiveDiffVerdict struct{ livegroups.Summary }

// String is the verdict's sentence: "partition 7: the log and the gateways agree (2 groups)", or
// how many differences there are in how many groups.
func (v LiveDiffVerdict) String() string {
	s := v.Summary
	if s.Agree {
		return fmt.Sprintf("partition %d: the log and the gateways agree (%s)", s.Partition, output.Plural(s.Groups, "group"))
	}
	return fmt.Sprintf("partition %d: %s in %s between the log and the gateways", s.Partition, output.Plural(s.Differences, "difference"), output.Plural(s.GroupsDiffering, "group"))
}

// TxnAbort is an abort's summary with its sentence (output.Summary), as `transactions abort`
// ends and the console's transactions screen says it: the value is the envelope's "summary".
type TxnAbort struct{ txnadmin.Summary }

// String says what the abort would do (a plan) or did.
func (v TxnAbort) String() string {
	s := v.Summary
	if !s.Done {
		return fmt.Sprintf("transaction %s would be aborted: its producer fenced, abort markers on %d partition(s), its staged offsets dropped",
			s.TransactionalID, s.Partitions)
	}
	return fmt.Sprintf("transaction %s aborted: abort markers on %d partition(s); the id is %s at producer id %d epoch %d, and its former producer is fenced",
		s.TransactionalID, s.Partitions, s.State, s.ProducerID, s.Epoch)
}
