package txn

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

type oneManager struct{ m *Manager }

func (d oneManager) Txns(string) (*Manager, int16) {
	if d.m == nil {
		return nil, kerr.NotCoordinator.Code
	}
	return d.m, 0
}

// The router answers PRODUCER_FENCED as INVALID_PRODUCER_EPOCH to versions that predate the
// code, the directory's code when the id is not served here, and refuses a bad id before any
// manager is asked.
func TestRouterCodes(t *testing.T) {
	f := newFixture(t)
	r := NewRouter(oneManager{f.m})
	ctx := context.Background()
	id := "r"
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 4, &id, 1000
	resp, _ := r.InitProducerID(ctx, kafka.Identity{}, init)
	if resp.ErrorCode != 0 {
		t.Fatalf("InitProducerId: code %d", resp.ErrorCode)
	}
	_, _, _ = f.m.InitProducerID(id, time.Second, NoProducer, NoProducer) // the epoch moves on: resp's is fenced
	for _, c := range []struct {
		version int16
		want    *kerr.Error
	}{{0, kerr.InvalidProducerEpoch}, {1, kerr.InvalidProducerEpoch}, {2, kerr.ProducerFenced}, {3, kerr.ProducerFenced}} {
		end := kmsg.NewPtrEndTxnRequest()
		end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch = c.version, id, resp.ProducerID, resp.ProducerEpoch
		eresp, _ := r.EndTxn(ctx, kafka.Identity{}, end)
		if eresp.ErrorCode != c.want.Code {
			t.Errorf("EndTxn v%d by a fenced epoch: code %d, want %s", c.version, eresp.ErrorCode, c.want.Message)
		}
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = c.version, id, resp.ProducerID, resp.ProducerEpoch, "g"
		aresp, _ := r.AddOffsetsToTxn(ctx, kafka.Identity{}, add)
		if aresp.ErrorCode != c.want.Code {
			t.Errorf("AddOffsetsToTxn v%d by a fenced epoch: code %d, want %s", c.version, aresp.ErrorCode, c.want.Message)
		}
	}
	for v, want := range map[int16]*kerr.Error{3: kerr.InvalidProducerEpoch, 4: kerr.ProducerFenced} {
		again := kmsg.NewPtrInitProducerIDRequest()
		again.Version, again.TransactionalID, again.TransactionTimeoutMillis = v, &id, 1000
		again.ProducerID, again.ProducerEpoch = resp.ProducerID, resp.ProducerEpoch
		if got, _ := r.InitProducerID(ctx, kafka.Identity{}, again); got.ErrorCode != want.Code || got.ProducerID != -1 {
			t.Errorf("InitProducerId v%d naming a fenced pair: code %d id %d, want %s", v, got.ErrorCode, got.ProducerID, want.Message)
		}
	}
	empty := ""
	bad := kmsg.NewPtrInitProducerIDRequest()
	bad.TransactionalID, bad.TransactionTimeoutMillis = &empty, 1000
	if got, _ := NewRouter(oneManager{}).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.InvalidRequest.Code {
		t.Errorf("empty transactional id: code %d", got.ErrorCode)
	}
	bad.TransactionalID = &id
	if got, _ := NewRouter(oneManager{}).InitProducerID(ctx, kafka.Identity{}, bad); got.ErrorCode != kerr.NotCoordinator.Code {
		t.Errorf("an id served elsewhere: code %d", got.ErrorCode)
	}
}
