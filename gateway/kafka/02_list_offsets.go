package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListOffsets: v0-9
//
// Behavior:
//   - Timestamp -2 is the log start offset, -1 the high watermark, -3 the offset and timestamp
//     of the record with the largest timestamp (the first of them on a tie, wherever it lies in
//     the partition), -4 (earliest local) equals -2; any other timestamp is the first offset
//     whose record timestamp is at or after it.
//   - v0 answers OldStyleOffsets with that single offset.
//   - The internal __consumer_offsets answers as empty partitions (internal.go).
//   - Every partition is at leader epoch 0.
//   - READ_COMMITTED (v2+): -1 is the last stable offset (Storage.Stable), and a timestamp
//     lookup that lands at or past it finds nothing (-1), as Kafka answers.
//
// Not implemented:
// * -5 (latest tiered offset) answers -1: nothing is tiered.
// * v10+ (remote storage timeouts, -6).
func init() { regKey(listOffsetsKey, 0, 9) }

func (c *conn) handleListOffsets(req *request) (kmsg.Response, error) {
	lreq := req.kreq.(*kmsg.ListOffsetsRequest)
	resp := lreq.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range lreq.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		seen := make(map[int32]int, len(rt.Partitions))
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			if prev, dup := seen[rp.Partition]; dup {
				st.Partitions[prev].ErrorCode = kerr.InvalidRequest.Code
				sp.ErrorCode = kerr.InvalidRequest.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			seen[rp.Partition] = len(st.Partitions)
			c.listOffset(req, lreq.Version, lreq.IsolationLevel == 1 && lreq.Version >= 2, rt.Topic, rp, &sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			req.setErr(p.ErrorCode)
		}
	}
	return resp, nil
}

func (c *conn) listOffset(req *request, version int16, committed bool, topic string, rp kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	ts := rp.Timestamp
	listOffset := req.storage.ListOffset
	if reservedTopic(topic) {
		listOffset = consumerOffsetsListOffset
	}
	switch {
	case ts == -4 && version >= 8:
		ts = -2
	case ts == -5 && version >= 9:
		if _, _, err := listOffset(req.ctx, topic, rp.Partition, -1); err != nil {
			sp.ErrorCode = errCode(err)
			return
		}
		sp.Offset, sp.Timestamp, sp.LeaderEpoch = -1, -1, 0
		return
	case ts == -3 && version < 7, ts < -3:
		sp.ErrorCode = kerr.UnsupportedVersion.Code
		return
	}
	offset, at, err := listOffset(req.ctx, topic, rp.Partition, ts)
	if err != nil {
		sp.ErrorCode = errCode(err)
		return
	}
	if committed && ts != -2 && !reservedTopic(topic) {
		_, hw, err := req.storage.Offsets(req.ctx, topic, rp.Partition)
		if err == nil {
			var lso int64
			lso, _, err = req.storage.Stable(req.ctx, topic, rp.Partition, hw, hw)
			switch {
			case err != nil:
			case ts == -1:
				offset = lso
			case offset >= lso:
				offset, at = -1, -1
			}
		}
		if err != nil {
			sp.ErrorCode = errCode(err)
			return
		}
	}
	sp.LeaderEpoch = 0
	if version == 0 {
		if rp.MaxNumOffsets > 0 && offset >= 0 {
			sp.OldStyleOffsets = []int64{offset}
		}
		return
	}
	sp.Offset, sp.Timestamp = offset, at
}
