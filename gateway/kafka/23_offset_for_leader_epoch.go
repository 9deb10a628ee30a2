package kafka

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetForLeaderEpoch: v0-4
//
// Behavior:
//   - Every partition has had one leader epoch, 0, since it was created, and its log is never
//     truncated, so any epoch a client asks about is answered as epoch 0 ending at the high
//     watermark: a client validating its position never detects a truncation.
//
// Not implemented:
// * Follower requests (ReplicaID >= 0) are answered like consumer requests.
// * CurrentLeaderEpoch fencing: there is only epoch 0.
func init() { regKey(offsetForLeaderEpochKey, 0, 4) }

func (c *conn) handleOffsetForLeaderEpoch(req *request) (kmsg.Response, error) {
	oreq := req.kreq.(*kmsg.OffsetForLeaderEpochRequest)
	resp := oreq.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range oreq.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			_, hw, err := req.storage.Offsets(req.ctx, rt.Topic, rp.Partition)
			switch {
			case err != nil:
				sp.ErrorCode = errCode(err)
			default:
				sp.LeaderEpoch, sp.EndOffset = 0, hw
			}
			req.setErr(sp.ErrorCode)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
