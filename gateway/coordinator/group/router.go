package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// Directory tells a Router who serves what.
type Directory interface {
	// Manager returns the manager serving group here, or the code to answer for it
	// (NOT_COORDINATOR when another gateway owns its log partition).
	Manager(group string) (*Manager, int16)
	// Managers lists every manager serving here (ListGroups asks each).
	Managers() []*Manager
	// Coordinator answers FindCoordinator for one key.
	Coordinator(key string, keyType int8) (node int32, host string, port int32, code int16)
}

// Router is a gateway's kafka.GroupCoordinator over a Directory.
type Router struct {
	d Directory
}

var _ kafka.GroupCoordinator = (*Router)(nil)

// NewRouter returns the group coordinator that routes every group to its Manager.
func NewRouter(d Directory) kafka.GroupCoordinator { return &Router{d: d} }

// FindCoordinator answers every key of the request (one before v4, a batch from v4).
func (r *Router) FindCoordinator(ctx context.Context, id kafka.Identity, req *kmsg.FindCoordinatorRequest) (*kmsg.FindCoordinatorResponse, error) {
	resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
	if req.Version < 4 {
		resp.NodeID, resp.Host, resp.Port, resp.ErrorCode = r.d.Coordinator(req.CoordinatorKey, req.CoordinatorType)
		if resp.ErrorCode != 0 {
			resp.NodeID, resp.Host, resp.Port = -1, "", -1
		}
		return resp, nil
	}
	for _, key := range req.CoordinatorKeys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		c.NodeID, c.Host, c.Port, c.ErrorCode = r.d.Coordinator(key, req.CoordinatorType)
		if c.ErrorCode != 0 {
			c.NodeID, c.Host, c.Port = -1, "", -1
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	return resp, nil
}

func (r *Router) JoinGroup(ctx context.Context, id kafka.Identity, req *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.MemberID, resp.Generation = code, req.MemberID, -1
		return resp, nil
	}
	return m.Join(ctx, id, req)
}

func (r *Router) SyncGroup(ctx context.Context, id kafka.Identity, req *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return m.Sync(ctx, id, req)
}

func (r *Router) Heartbeat(ctx context.Context, id kafka.Identity, req *kmsg.HeartbeatRequest) (*kmsg.HeartbeatResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return m.Heartbeat(ctx, id, req), nil
}

func (r *Router) LeaveGroup(ctx context.Context, id kafka.Identity, req *kmsg.LeaveGroupRequest) (*kmsg.LeaveGroupResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return m.Leave(ctx, id, req), nil
}

func (r *Router) OffsetCommit(ctx context.Context, id kafka.Identity, req *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	return m.CommitOffsets(ctx, id, req), nil
}

// OffsetFetch answers one group (v0-7) or every group of the request (v8+).
func (r *Router) OffsetFetch(ctx context.Context, id kafka.Identity, req *kmsg.OffsetFetchRequest) (*kmsg.OffsetFetchResponse, error) {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			resp.Groups = append(resp.Groups, r.fetchGroup(ctx, id, rg.Group, rg.Topics, req.RequireStable, rg.MemberID, rg.MemberEpoch))
		}
		return resp, nil
	}
	var topics []kmsg.OffsetFetchRequestGroupTopic
	if req.Topics != nil || req.Version < 2 {
		topics = make([]kmsg.OffsetFetchRequestGroupTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic, gt.Partitions = t.Topic, t.Partitions
			topics = append(topics, gt)
		}
	}
	g := r.fetchGroup(ctx, id, req.Group, topics, req.RequireStable, nil, -1)
	if g.ErrorCode != 0 {
		if req.Version >= 2 {
			resp.ErrorCode = g.ErrorCode
		}
		// Before v2 the group's error travels in every partition.
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetFetchResponseTopicPartition()
				rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, g.ErrorCode
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil
	}
	for _, t := range g.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, p.Metadata, p.ErrorCode
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (r *Router) fetchGroup(ctx context.Context, id kafka.Identity, group string, topics []kmsg.OffsetFetchRequestGroupTopic, stable bool, memberID *string, memberEpoch int32) kmsg.OffsetFetchResponseGroup {
	m, code := r.d.Manager(group)
	if m == nil {
		g := kmsg.NewOffsetFetchResponseGroup()
		g.Group, g.ErrorCode = group, code
		return g
	}
	return m.FetchOffsets(ctx, id, group, topics, stable, memberID, memberEpoch)
}

// ListGroups lists the groups of every manager serving here.
func (r *Router) ListGroups(ctx context.Context, id kafka.Identity, req *kmsg.ListGroupsRequest) (*kmsg.ListGroupsResponse, error) {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	for _, m := range r.d.Managers() {
		resp.Groups = append(resp.Groups, m.List(req.StatesFilter, req.TypesFilter)...)
	}
	return resp, nil
}

func (r *Router) DescribeGroups(ctx context.Context, id kafka.Identity, req *kmsg.DescribeGroupsRequest) (*kmsg.DescribeGroupsResponse, error) {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, name := range req.Groups {
		m, code := r.d.Manager(name)
		if m == nil {
			dg := kmsg.NewDescribeGroupsResponseGroup()
			dg.Group, dg.ErrorCode = name, code
			resp.Groups = append(resp.Groups, dg)
			continue
		}
		resp.Groups = append(resp.Groups, m.Describe(req.Version, name))
	}
	return resp, nil
}

func (r *Router) DeleteGroups(ctx context.Context, id kafka.Identity, req *kmsg.DeleteGroupsRequest) (*kmsg.DeleteGroupsResponse, error) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, name := range req.Groups {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group = name
		m, code := r.d.Manager(name)
		if m == nil {
			dg.ErrorCode = code
		} else {
			dg.ErrorCode = m.Delete(ctx, name)
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp, nil
}

// ConsumerGroupHeartbeat routes one KIP-848 heartbeat to the manager serving its group.
func (r *Router) ConsumerGroupHeartbeat(ctx context.Context, id kafka.Identity, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return m.ConsumerHeartbeat(ctx, id, req), nil
}

// ConsumerGroupDescribe answers every group of the request from the manager serving it.
func (r *Router) ConsumerGroupDescribe(ctx context.Context, id kafka.Identity, req *kmsg.ConsumerGroupDescribeRequest) (*kmsg.ConsumerGroupDescribeResponse, error) {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, name := range req.Groups {
		if name == "" {
			d := kmsg.NewConsumerGroupDescribeResponseGroup()
			d.ErrorCode = kerr.InvalidGroupID.Code
			resp.Groups = append(resp.Groups, d)
			continue
		}
		m, code := r.d.Manager(name)
		if m == nil {
			d := kmsg.NewConsumerGroupDescribeResponseGroup()
			d.Group, d.ErrorCode = name, code
			resp.Groups = append(resp.Groups, d)
			continue
		}
		resp.Groups = append(resp.Groups, m.ConsumerDescribe(name))
	}
	return resp, nil
}

func (r *Router) OffsetDelete(ctx context.Context, id kafka.Identity, req *kmsg.OffsetDeleteRequest) (*kmsg.OffsetDeleteResponse, error) {
	m, code := r.d.Manager(req.Group)
	if m == nil {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return m.DeleteOffsets(ctx, id, req), nil
}
