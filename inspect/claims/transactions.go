package claims

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
)

// TxnRow is one transactional id as `claims --transactions` lists it: where its state lives,
// who coordinates it (the partition's newest claim), and its transaction. JSON field names are an
// interface.
type TxnRow struct {
	TransactionalID string `json:"transactional_id"`
	Partition       int    `json:"partition"`
	// Coordinator is the node of the partition's newest claim; nil when none claimed it.
	Coordinator *int32 `json:"coordinator"`
	State       string `json:"state"`
	ProducerID  int64  `json:"producer_id"`
	Epoch       int16  `json:"epoch"`
	TimeoutMs   int64  `json:"timeout_ms"`
	// AgeSeconds is how long the open transaction has run (since its first add); nil when none
	// is open.
	AgeSeconds *float64 `json:"age_seconds"`
	// Hanging says the transaction has run longer than its timeout (its coordinator should have
	// aborted it) or than HangingAfter: what an operator may have to abort.
	Hanging bool `json:"hanging"`
	// Partitions are the transaction's data partitions, "topic[0,1] other[2]".
	Partitions string   `json:"partitions"`
	Groups     []string `json:"groups"`
}

// HangingAfter is how long a transaction may run, whatever its timeout, before it is said to
// hang: Kafka's own bound on a transaction's timeout (transaction.max.timeout.ms, 15 minutes),
// which kafka-transactions find-hanging takes as its default too.
const HangingAfter = 15 * time.Minute

// hanging is the rule of TxnRow.Hanging: open longer than its timeout or than HangingAfter.
func hanging(age, timeout time.Duration) bool {
	return age > timeout || age > HangingAfter
}

func (TxnRow) Columns() []string {
	return []string{"TRANSACTIONAL-ID", "PARTITION", "COORDINATOR", "STATE", "PRODUCER-ID", "EPOCH", "TIMEOUT", "AGE", "HANGING", "PARTITIONS", "GROUPS"}
}

func (r TxnRow) Cells() []string {
	coord, age, hang, parts, groups := "-", "-", "-", r.Partitions, strings.Join(r.Groups, ",")
	if r.Coordinator != nil {
		coord = strconv.Itoa(int(*r.Coordinator))
	}
	if r.AgeSeconds != nil {
		age = output.Seconds(*r.AgeSeconds)
	}
	if r.Hanging {
		hang = "yes"
	}
	if parts == "" {
		parts = "-"
	}
	if groups == "" {
		groups = "-"
	}
	return []string{r.TransactionalID, strconv.Itoa(r.Partition), coord, r.State, strconv.FormatInt(r.ProducerID, 10),
		strconv.Itoa(int(r.Epoch)), output.Seconds(float64(r.TimeoutMs) / 1000), age, hang, parts, groups}
}

// Transactions lists the transactional ids the log holds, by id; with open only those with a
// transaction open or ending (Ongoing, PrepareCommit, PrepareAbort), the ones that can hang.
func (f *Model) Transactions(now time.Time, open bool) []TxnRow {
	out := []TxnRow{}
	for _, t := range f.Parts {
		var coord *int32
		if cl := t.State.Claim(); cl.Number != 0 {
			n := cl.Node
			coord = &n
		}
		for _, x := range t.State.Transactions() {
			live := x.State == record.TxnOngoing || x.State == record.TxnPrepareCommit || x.State == record.TxnPrepareAbort
			if open && !live {
				continue
			}
			r := TxnRow{TransactionalID: x.ID, Partition: t.Partition, Coordinator: coord, State: x.State.String(),
				ProducerID: x.ProducerID, Epoch: x.Epoch, TimeoutMs: x.Timeout.Milliseconds(), Groups: x.Groups}
			if r.Groups == nil {
				r.Groups = []string{}
			}
			if !x.Started.IsZero() {
				age := now.Sub(x.Started)
				secs := age.Seconds()
				r.AgeSeconds, r.Hanging = &secs, live && hanging(age, x.Timeout)
			}
			var b strings.Builder
			for i, tp := range x.Partitions {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(tp.Topic)
				b.WriteByte('[')
				for j, p := range tp.Partitions {
					if j > 0 {
						b.WriteByte(',')
					}
					b.WriteString(strconv.Itoa(int(p)))
				}
				b.WriteByte(']')
			}
			r.Partitions = b.String()
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b TxnRow) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return out
}
