package coordinator

import (
	"context"
	"fmt"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
)

// offsetMarkers is the txn.Markers of a coordinator: the data partitions' markers of the
// gateway's own Markers, then, for a commit, the offsets the transaction staged committed to
// their groups by the group managers serving them here. An abort drops them: they were only ever
// in the transaction record. A group whose log partition is not served here fails the end, which
// the transaction manager retries until the partition is (TxnOffsetCommit stages offsets only
// where both are served, so this lasts only while a partition moves).
type offsetMarkers struct {
	next txn.Markers
	c    *Coordinator
}

func (m offsetMarkers) End(ctx context.Context, t record.Transaction) error {
	if m.next != nil {
		if err := m.next.End(ctx, t); err != nil {
			return err
		}
	}
	if t.State != record.TxnPrepareCommit || len(t.Offsets) == 0 {
		return nil
	}
	for i := 0; i < len(t.Offsets); {
		j := i
		for j < len(t.Offsets) && t.Offsets[j].Group == t.Offsets[i].Group {
			j++
		}
		name := t.Offsets[i].Group
		gm, code := directory{m.c}.Manager(name)
		if gm == nil {
			return fmt.Errorf("committing the offsets of transaction %q: group %q not served here (code %d)", t.ID, name, code)
		}
		if err := gm.CommitStaged(t.Offsets[i:j]); err != nil {
			return fmt.Errorf("committing the offsets of transaction %q to group %q: %w", t.ID, name, err)
		}
		i = j
	}
	return nil
}

// unstable says whether a transaction coordinated here holds staged offsets of the group's
// partition that it has not ended (OffsetFetch's RequireStable).
func (c *Coordinator) unstable(group, topic string, partition int32) bool {
	for _, m := range (directory{c}).AllTxns() {
		if m.Pending(group, topic, partition) {
			return true
		}
	}
	return false
}
