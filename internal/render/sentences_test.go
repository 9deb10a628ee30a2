package render_test

import (
	"encoding/json"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/txnadmin"
)

// A verdict's JSON is its summary's own: the envelope's "summary" fields do not move.
func TestVerdictJSONIsTheSummary(t *testing.T) {
	for _, c := range []struct{ verdict, summary any }{
		{render.VerifyVerdict{Summary: verify.Summary{Partitions: 16, Records: 34, Findings: 1}}, verify.Summary{Partitions: 16, Records: 34, Findings: 1}},
		{render.LiveDiffVerdict{Summary: livegroups.Summary{Partition: 7, Groups: 3, Differences: 2, GroupsDiffering: 1}}, livegroups.Summary{Partition: 7, Groups: 3, Differences: 2, GroupsDiffering: 1}},
	} {
		got, err1 := json.Marshal(c.verdict)
		want, err2 := json.Marshal(c.summary)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("verdict JSON %s, want %s (%v %v)", got, want, err1, err2)
		}
	}
	if got := (render.LiveDiffVerdict{Summary: livegroups.Summary{Partition: 7, Agree: true, Groups: 2}}).String(); got != "partition 7: the log and the gateways agree (2 groups)" {
		t.Errorf("agree: %q", got)
	}
	if got := (render.LiveDiffVerdict{Summary: livegroups.Summary{Partition: 7, Groups: 3, Differences: 2, GroupsDiffering: 1}}).String(); got != "partition 7: 2 differences in 1 group between the log and the gateways" {
		t.Errorf("differ: %q", got)
	}
}

func TestHandoverSentence(t *testing.T) {
	from, held := int32(2), 75.0
	for _, c := range []struct {
		h    claims.Handover
		want string
	}{
		{claims.Handover{Partition: 3, To: 1, Claim: 7}, "partition 3: claimed by node 1 (claim 7)"},
		{claims.Handover{Partition: 3, From: &from, To: 1, Claim: 8, HeldSeconds: &held}, "partition 3: node 2 -> node 1 (claim 8), held 1m15s"},
	} {
		if got := render.Handover(c.h); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// An abort's sentence, planned and done; its JSON is the summary's own.
func TestTxnAbortSentence(t *testing.T) {
	plan := txnadmin.Summary{TransactionalID: "etl-7", Partitions: 2}
	done := txnadmin.Summary{TransactionalID: "etl-7", Partitions: 2, Done: true, State: "Empty", ProducerID: 42, Epoch: 4}
	for _, c := range []struct {
		s    txnadmin.Summary
		want string
	}{
		{plan, "transaction etl-7 would be aborted: its producer fenced, abort markers on 2 partition(s), its staged offsets dropped"},
		{done, "transaction etl-7 aborted: abort markers on 2 partition(s); the id is Empty at producer id 42 epoch 4, and its former producer is fenced"},
	} {
		if got := (render.TxnAbort{Summary: c.s}).String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		got, err1 := json.Marshal(render.TxnAbort{Summary: c.s})
		want, err2 := json.Marshal(c.s)
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Errorf("JSON %s, want %s (%v %v)", got, want, err1, err2)
		}
	}
}
