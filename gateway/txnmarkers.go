package gateway

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/txn"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
)

// txnMarkers is the txn.Markers of a gateway: the end of a transaction is a marker message on
// each of its data partitions (bridge.WriteMarker), written as the gateway's own Iggy user. The
// offsets a transaction staged for its groups are committed after these markers by the
// coordinator, which wraps this Markers.
type txnMarkers struct {
	b *bridge.Bridge
	c *iggy.Client
}

func (m txnMarkers) End(ctx context.Context, t record.Transaction) error {
	commit := t.State == record.TxnPrepareCommit
	for _, tp := range t.Partitions {
		if tp.Topic == txn.GroupsTopic {
			// The log partitions of the transaction's groups (a TxnOffsetCommit v5 adds them):
			// the coordinator ends those.
			continue
		}
		for _, p := range tp.Partitions {
			err := m.Mark(ctx, tp.Topic, p, t.ProducerID, t.Epoch, commit)
			if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.InvalidProducerEpoch) {
				// The topic was deleted since it was added, or the producer wrote there at a
				// newer epoch since (which it gets only once this end is complete): nothing there
				// to end.
				continue
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// Mark writes one marker on one data partition (WriteTxnMarkers' data partitions as well).
func (m txnMarkers) Mark(ctx context.Context, topic string, partition int32, producerID int64, epoch int16, commit bool) error {
	_, err := m.b.WriteMarker(ctx, m.c, topic, partition, producerID, epoch, commit)
	return err
}
