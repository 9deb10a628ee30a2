package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
)

// offsetMarkers is the txn.Markers of a coordinator: the data partitions' markers of the
// gateway's own Markers, then the marker of every coordinator log partition holding a group the
// transaction added (AddOffsetsToTxn, or a TxnOffsetCommit v5 its log partition), as Kafka's transaction coordinator writes one on each
// __consumer_offsets partition of its groups: the group coordinator there commits or drops what
// the producer committed to those groups with TxnOffsetCommit (group.Manager.EndTxnOffsets). A
// partition served here is ended here; another gateway's is sent a WriteTxnMarkers at the
// address it announced. Any failure (the partition moving, its gateway unreachable) fails the
// end, which the transaction manager tries again until every marker is durable and only then
// appends the Complete record; a marker written twice ends nothing twice.
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
	commit := t.State == record.TxnPrepareCommit
	var parts []int
	for _, g := range t.Groups {
		if p := record.Partition(g); !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	// A TxnOffsetCommit v5 (transactions v2) added its group's log partition itself.
	for _, tp := range t.Partitions {
		if tp.Topic != txn.GroupsTopic {
			continue
		}
		for _, p := range tp.Partitions {
			if !slices.Contains(parts, int(p)) {
				parts = append(parts, int(p))
			}
		}
	}
	slices.Sort(parts)
	for _, p := range parts {
		if err := m.endGroups(ctx, t, p, commit); err != nil {
			return err
		}
	}
	if commit && len(t.Offsets) > 0 {
		return m.commitLegacy(t)
	}
	return nil
}

// endGroups writes t's marker on log partition p: here when this gateway serves it, else at the
// gateway that does. The marker names the epoch the offsets were staged at (StagedEpoch), not
// the one a transactions-v2 end bumped to: a group's coordinator commits only the offsets staged
// at a commit marker's epoch (older ones are stages that landed after their transaction's end),
// and a gateway of the previous release reads the marker the same way.
func (m offsetMarkers) endGroups(ctx context.Context, t record.Transaction, p int, commit bool) error {
	d := directory{m.c}
	if gm, code := d.LogPartition(p); gm != nil {
		if err := gm.EndTxnOffsets(t.ProducerID, t.StagedEpoch(), commit); err != nil {
			return fmt.Errorf("ending the offsets of transaction %q on log partition %d: %w", t.ID, p, err)
		}
		return nil
	} else if code != kerr.NotCoordinator.Code {
		return fmt.Errorf("ending the offsets of transaction %q: log partition %d: %w", t.ID, p, kerr.ErrorForCode(code))
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed = t.ProducerID, t.StagedEpoch(), commit
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = txn.GroupsTopic, []int32{int32(p)}
	mk.Topics = append(mk.Topics, rt)
	req.Markers = append(req.Markers, mk)
	raw, err := d.Peer(ctx, p, req)
	if err != nil {
		return fmt.Errorf("ending the offsets of transaction %q on log partition %d: %w", t.ID, p, err)
	}
	resp, ok := raw.(*kmsg.WriteTxnMarkersResponse)
	if !ok {
		return fmt.Errorf("ending the offsets of transaction %q: answer of type %T", t.ID, raw)
	}
	for _, rm := range resp.Markers {
		for _, rt := range rm.Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == txn.GroupsTopic && rp.Partition == int32(p) {
					if rp.ErrorCode != 0 {
						return fmt.Errorf("ending the offsets of transaction %q on log partition %d: %w", t.ID, p, kerr.ErrorForCode(rp.ErrorCode))
					}
					return nil
				}
			}
		}
	}
	return fmt.Errorf("ending the offsets of transaction %q: log partition %d left out of the answer", t.ID, p)
}

// commitLegacy commits the offsets an earlier release staged in the transaction record itself,
// to their groups' managers here (that release staged them only where both were served).
func (m offsetMarkers) commitLegacy(t record.Transaction) error {
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
