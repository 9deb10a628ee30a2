package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka (KIP-227) treats session epoch 0 (INITIAL) and -1 (FINAL) as full fetches whatever the
// session id says: -1 closes the named session and serves a sessionless fetch, 0 opens a new
// one. Only an incremental fetch (epoch > 0) of a session the broker does not hold is refused.
// The gateway keeps no sessions, so it answers every full fetch with session id 0 ("no session
// was created"), which makes clients go on with full fetches.
func TestFetchSessionEpochs(t *testing.T) {
	ts := startServer(t, nil)
	cl := ts.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	createTopic(t, cl, "sessions", 1)
	if err := cl.ProduceSync(testCtx(t), &kgo.Record{Topic: "sessions", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	conn := dialRaw(t, ts.addr)
	fetch := func(version int16, id, epoch int32) *kmsg.FetchResponse {
		req := longPoll("sessions", 0)
		req.Version = version
		req.SessionID, req.SessionEpoch = id, epoch
		return conn.roundTrip(t, req).(*kmsg.FetchResponse)
	}
	for _, version := range []int16{7, 11, 12} {
		for _, c := range []struct{ id, epoch int32 }{{-1, -1}, {0, -1}, {0, 0}, {7, -1}, {7, 0}} {
			resp := fetch(version, c.id, c.epoch)
			if resp.ErrorCode != 0 || resp.SessionID != 0 {
				t.Fatalf("v%d session %d epoch %d: error %d, session %d; want a full fetch without a session", version, c.id, c.epoch, resp.ErrorCode, resp.SessionID)
			}
			if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].HighWatermark != 1 ||
				len(resp.Topics[0].Partitions[0].RecordBatches) == 0 {
				t.Fatalf("v%d session %d epoch %d: answered %+v, want the partition's record", version, c.id, c.epoch, resp.Topics)
			}
		}
		for _, c := range []struct{ id, epoch int32 }{{7, 1}, {0, 3}} {
			resp := fetch(version, c.id, c.epoch)
			if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code || len(resp.Topics) != 0 {
				t.Fatalf("v%d incremental fetch of unknown session %d epoch %d: error %d, %d topics; want FETCH_SESSION_ID_NOT_FOUND and none",
					version, c.id, c.epoch, resp.ErrorCode, len(resp.Topics))
			}
		}
	}
}
