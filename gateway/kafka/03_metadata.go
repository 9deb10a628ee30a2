package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Metadata: v0-12
//
// Behavior:
//
//   - Brokers are the live gateways of Config.Fleet, else the configured fleet (or this node
//     alone at its advertised address). Each partition's leader is chosen by partitionLeaders over
//     them less the gateways an operator drained (see brokerView in fleet.go); it is also the
//     only replica and in-sync replica. Every partition is at leader epoch 0. One request takes
//     one view of the fleet (Fleet.View), which the coordinator keeps current in the background:
//     Metadata reads nothing from Iggy about the fleet.
//
//   - The controller is the fleet's (the owner of coordinator log partition 0, -1 while none is
//     known); without a Fleet it is this node and any gateway accepts topic changes.
//
//   - Null topics (v1+), or an empty list at v0, lists every topic.
//
//   - __consumer_offsets is listed as an internal topic of 16 partitions (see internal.go).
//
//   - A missing topic is created when the gateway allows auto-creation and the request does
//     (AllowAutoTopicCreation, v4+; always at v0-3).
//
//   - A gateway that cannot read the fleet's log in the store while a gateway of its fleet
//     does not answer its dials at all (FleetView.StoreLost and reach.go: split off, not a store
//     outage) names no leader: every partition is LEADER_NOT_AVAILABLE with leader -1, so
//     clients keep the leaders the other side names (Kafka clients keep a partition's last
//     leader on a partition error) instead of sending to gateways that cannot write.
//
//   - While the store cannot be reached a topic keeps its last known partitions
//     (TopicInfo.Offline), each with its leader as the fleet's view names it: every gateway
//     serves every partition once the store is back, so clients keep their leaders and
//     connections, and their produces are answered NOT_LEADER_OR_FOLLOWER meanwhile, which they
//     retry. A topic this gateway never saw is LEADER_NOT_AVAILABLE, retriable as well.
//
//   - Topic IDs (v10+) are the Storage's (TopicInfo.ID, never zero); a topic asked for by ID
//     alone is looked up among all topics, UNKNOWN_TOPIC_ID when none has it.
//
// Not implemented:
//   - Authorized operations (KIP-430): left unset.
//   - v13 (top-level error code).
func init() { regKey(metadataKey, 0, 12) }

func (c *conn) handleMetadata(req *request) (kmsg.Response, error) {
	mreq := req.kreq.(*kmsg.MetadataRequest)
	resp := mreq.ResponseKind().(*kmsg.MetadataResponse)

	view := c.s.brokerView()
	for _, b := range view.listed {
		sb := kmsg.NewMetadataResponseBroker()
		sb.NodeID, sb.Host, sb.Port = b.NodeID, b.Host, b.Port
		resp.Brokers = append(resp.Brokers, sb)
	}
	clusterID := c.s.cfg.ClusterID
	resp.ClusterID = &clusterID
	resp.ControllerID = view.controller

	all := mreq.Topics == nil || (mreq.Version == 0 && len(mreq.Topics) == 0)
	if all {
		topics, err := req.storage.ListTopics(req.ctx)
		if err != nil {
			return nil, err
		}
		resp.Topics = append(resp.Topics, metadataTopic(consumerOffsetsInfo(), view))
		for _, t := range topics {
			if !reservedTopic(t.Name) {
				resp.Topics = append(resp.Topics, metadataTopic(t, view))
			}
		}
		return resp, nil
	}
	autoCreate := c.s.cfg.AutoCreateTopics && (mreq.Version < 4 || mreq.AllowAutoTopicCreation)
	for _, rt := range mreq.Topics {
		if rt.Topic == nil {
			info, err := c.topicByID(req, rt.TopicID)
			if err == nil {
				resp.Topics = append(resp.Topics, metadataTopic(info, view))
				continue
			}
			st := kmsg.NewMetadataResponseTopic()
			st.TopicID = rt.TopicID
			st.ErrorCode = errCode(err)
			req.setErr(st.ErrorCode)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		if reservedTopic(*rt.Topic) {
			resp.Topics = append(resp.Topics, metadataTopic(consumerOffsetsInfo(), view))
			continue
		}
		info, err := req.storage.Topic(req.ctx, *rt.Topic, autoCreate)
		if err != nil {
			st := kmsg.NewMetadataResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = errCode(err)
			// A topic that already exists (created by a racing request) is simply looked up.
			if errors.Is(err, kerr.TopicAlreadyExists) {
				if info, err = req.storage.Topic(req.ctx, *rt.Topic, false); err == nil {
					resp.Topics = append(resp.Topics, metadataTopic(info, view))
					continue
				}
				st.ErrorCode = errCode(err)
			}
			req.setErr(st.ErrorCode)
			resp.Topics = append(resp.Topics, st)
			continue
		}
		resp.Topics = append(resp.Topics, metadataTopic(info, view))
	}
	return resp, nil
}

func metadataTopic(t TopicInfo, view brokerView) kmsg.MetadataResponseTopic {
	st := kmsg.NewMetadataResponseTopic()
	name := t.Name
	st.Topic = &name
	st.TopicID = t.ID
	st.IsInternal = t.Internal
	st.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, t.Partitions)
	leaders := view.leadersOf(t.Name, t.Partitions)
	for p := range t.Partitions {
		sp := kmsg.NewMetadataResponseTopicPartition()
		sp.Partition = p
		if int(p) >= len(leaders) {
			// No leader to name (a gateway split off from its store and fleet): retriable,
			// and clients keep the leader they last knew.
			sp.ErrorCode, sp.Leader = kerr.LeaderNotAvailable.Code, -1
			sp.Replicas, sp.ISR = []int32{}, []int32{}
			st.Partitions = append(st.Partitions, sp)
			continue
		}
		leader := leaders[p]
		sp.Leader = leader
		sp.LeaderEpoch = 0
		sp.Replicas = []int32{leader}
		sp.ISR = []int32{leader}
		st.Partitions = append(st.Partitions, sp)
	}
	return st
}

// topicByID finds the topic with id among every topic (__consumer_offsets included);
// kerr.UnknownTopicID when none has it.
func (c *conn) topicByID(req *request, id [16]byte) (TopicInfo, error) {
	if id == consumerOffsetsID {
		return consumerOffsetsInfo(), nil
	}
	if id != ([16]byte{}) {
		topics, err := req.storage.ListTopics(req.ctx)
		if err != nil {
			return TopicInfo{}, err
		}
		for _, t := range topics {
			if t.ID == id && !reservedTopic(t.Name) {
				return t, nil
			}
		}
	}
	return TopicInfo{}, kerr.UnknownTopicID
}
