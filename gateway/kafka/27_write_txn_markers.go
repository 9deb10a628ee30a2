package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// WriteTxnMarkers: v0-2
//
// Behavior:
//   - Served by Config.Txns and authorized as CLUSTER_ACTION on the cluster, as Kafka authorizes
//     it (else every partition is CLUSTER_AUTHORIZATION_FAILED, nothing written). Kafka's
//     transaction coordinator sends it to the leaders of a transaction's partitions; a gateway
//     coordinating a transaction sends it to the gateway coordinating each group the
//     transaction added, and an administrator sends it to abort a hanging transaction
//     (kafka-transactions.sh abort).
//   - Topic __consumer_offsets, partition N: coordinator log partition N. The offsets the
//     producer committed in the transaction to the groups of that partition (TxnOffsetCommit)
//     are committed or dropped, once the log holds the records that say so. A partition this
//     gateway does not coordinate is NOT_LEADER_OR_FOLLOWER, as at a Kafka broker that does not
//     lead it; a producer with nothing pending there ends nothing and is answered 0, so a
//     marker sent again is harmless; a marker at an epoch older than the offsets staged is
//     INVALID_PRODUCER_EPOCH, nothing ended.
//   - Any other topic: a commit or abort marker is written to the partition (any gateway
//     writes any partition); a topic or partition that does not exist is
//     UNKNOWN_TOPIC_OR_PARTITION, a marker at an epoch older than the producer's on the
//     partition (as this gateway knows it) INVALID_PRODUCER_EPOCH, nothing written.
//   - A producer id or epoch below 0 is INVALID_PRODUCER_ID_MAPPING / INVALID_PRODUCER_EPOCH.
//   - v2 (KIP-1228) adds each marker's TransactionVersion, which changes nothing here: a
//     marker's epoch is checked the same way whether the transaction bumped it (v2) or not.
//
// Not implemented:
//   - CoordinatorEpoch is not checked (TRANSACTION_COORDINATOR_FENCED is never answered), and
//     the markers a gateway writes carry coordinator epoch 0. The coordinator log's claims fence
//     a transaction coordinator that lost its partition before its next log record, but not a
//     marker it is already writing: docs/transactions.md says what is left open and what the
//     check would take.
func init() { regTxnKey(writeTxnMarkersKey, 0, 2) }

func (c *conn) handleWriteTxnMarkers(req *request) (kmsg.Response, error) {
	wreq := req.kreq.(*kmsg.WriteTxnMarkersRequest)
	if code := c.clusterCode(req, kmsg.ACLOperationClusterAction); code != 0 {
		req.setErr(code)
		return WriteTxnMarkersAnswer(wreq, func(kmsg.WriteTxnMarkersRequestMarker, string, int32) int16 { return code }), nil
	}
	resp, err := c.s.cfg.Txns.WriteTxnMarkers(req.ctx, c.identity(req), wreq)
	if err == nil {
		for _, m := range resp.Markers {
			for _, t := range m.Topics {
				for _, p := range t.Partitions {
					req.setErr(p.ErrorCode)
				}
			}
		}
	}
	return resp, err
}

// WriteTxnMarkersAnswer is the answer to req, one entry per marker, topic and partition in the
// request's order, with the code code gives each partition: the one builder of a WriteTxnMarkers
// answer, for the handler's refusals and the transaction coordinator's work alike.
func WriteTxnMarkersAnswer(req *kmsg.WriteTxnMarkersRequest, code func(m kmsg.WriteTxnMarkersRequestMarker, topic string, partition int32) int16) *kmsg.WriteTxnMarkersResponse {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, code(m, t.Topic, p)
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}
