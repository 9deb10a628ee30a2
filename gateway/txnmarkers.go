package gateway

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/bridge"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
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
		for _, p := range tp.Partitions {
			_, err := m.b.WriteMarker(ctx, m.c, tp.Topic, p, t.ProducerID, t.Epoch, commit)
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				// The topic was deleted since it was added: nothing there to end.
				continue
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}
