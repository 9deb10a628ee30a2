package kafka

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// answeringGroups answers every group request with its empty response, counting the calls: a
// refused request must not reach it.
type answeringGroups struct{ calls int }

func (g *answeringGroups) FindCoordinator(_ context.Context, _ Identity, r *kmsg.FindCoordinatorRequest) (*kmsg.FindCoordinatorResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.FindCoordinatorResponse), nil
}
func (g *answeringGroups) JoinGroup(_ context.Context, _ Identity, r *kmsg.JoinGroupRequest) (*kmsg.JoinGroupResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.JoinGroupResponse), nil
}
func (g *answeringGroups) SyncGroup(_ context.Context, _ Identity, r *kmsg.SyncGroupRequest) (*kmsg.SyncGroupResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.SyncGroupResponse), nil
}
func (g *answeringGroups) Heartbeat(_ context.Context, _ Identity, r *kmsg.HeartbeatRequest) (*kmsg.HeartbeatResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.HeartbeatResponse), nil
}
func (g *answeringGroups) LeaveGroup(_ context.Context, _ Identity, r *kmsg.LeaveGroupRequest) (*kmsg.LeaveGroupResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.LeaveGroupResponse), nil
}
func (g *answeringGroups) OffsetCommit(_ context.Context, _ Identity, r *kmsg.OffsetCommitRequest) (*kmsg.OffsetCommitResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.OffsetCommitResponse), nil
}
func (g *answeringGroups) OffsetFetch(_ context.Context, _ Identity, r *kmsg.OffsetFetchRequest) (*kmsg.OffsetFetchResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.OffsetFetchResponse), nil
}
func (g *answeringGroups) ListGroups(_ context.Context, _ Identity, r *kmsg.ListGroupsRequest) (*kmsg.ListGroupsResponse, error) {
	g.calls++
	resp := r.ResponseKind().(*kmsg.ListGroupsResponse)
	lg := kmsg.NewListGroupsResponseGroup()
	lg.Group = "g"
	resp.Groups = append(resp.Groups, lg)
	return resp, nil
}
func (g *answeringGroups) DescribeGroups(_ context.Context, _ Identity, r *kmsg.DescribeGroupsRequest) (*kmsg.DescribeGroupsResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.DescribeGroupsResponse), nil
}
func (g *answeringGroups) DeleteGroups(_ context.Context, _ Identity, r *kmsg.DeleteGroupsRequest) (*kmsg.DeleteGroupsResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.DeleteGroupsResponse), nil
}
func (g *answeringGroups) OffsetDelete(_ context.Context, _ Identity, r *kmsg.OffsetDeleteRequest) (*kmsg.OffsetDeleteResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.OffsetDeleteResponse), nil
}
func (g *answeringGroups) ConsumerGroupHeartbeat(_ context.Context, _ Identity, r *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse), nil
}
func (g *answeringGroups) ConsumerGroupDescribe(_ context.Context, _ Identity, r *kmsg.ConsumerGroupDescribeRequest) (*kmsg.ConsumerGroupDescribeResponse, error) {
	g.calls++
	return r.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse), nil
}

// Each request the gateway authorizes itself, allowed and refused: refused, it answers the
// resource's authorization error where Kafka puts it and never reaches the coordinator;
// allowed, it does not answer that error. The ACL asked is the table's (authorize.go).
func TestAuthorizationPerOperation(t *testing.T) {
	topicParts := func() []kmsg.OffsetCommitRequestTopic {
		tp := kmsg.NewOffsetCommitRequestTopic()
		tp.Topic = "t"
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		tp.Partitions = append(tp.Partitions, p)
		return []kmsg.OffsetCommitRequestTopic{tp}
	}
	group := kmsg.ACLResourceTypeGroup
	cluster := kmsg.ACLResourceTypeCluster
	for _, c := range []struct {
		name  string
		res   kmsg.ACLResourceType
		op    kmsg.ACLOperation
		req   func() kmsg.Request
		code  func(kmsg.Response) int16
		group bool // answered by the coordinator when allowed
	}{
		{"JoinGroup", group, kmsg.ACLOperationRead, func() kmsg.Request { r := kmsg.NewPtrJoinGroupRequest(); r.Group = "g"; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.JoinGroupResponse).ErrorCode }, true},
		{"SyncGroup", group, kmsg.ACLOperationRead, func() kmsg.Request { r := kmsg.NewPtrSyncGroupRequest(); r.Group = "g"; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.SyncGroupResponse).ErrorCode }, true},
		{"Heartbeat", group, kmsg.ACLOperationRead, func() kmsg.Request { r := kmsg.NewPtrHeartbeatRequest(); r.Group = "g"; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.HeartbeatResponse).ErrorCode }, true},
		{"LeaveGroup", group, kmsg.ACLOperationRead, func() kmsg.Request { r := kmsg.NewPtrLeaveGroupRequest(); r.Group = "g"; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.LeaveGroupResponse).ErrorCode }, true},
		{"OffsetCommit", group, kmsg.ACLOperationRead, func() kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.Group, r.Topics = "g", topicParts()
			return r
		}, func(r kmsg.Response) int16 {
			t := r.(*kmsg.OffsetCommitResponse).Topics
			if len(t) == 0 {
				return 0
			}
			return t[0].Partitions[0].ErrorCode
		}, true},
		{"ConsumerGroupHeartbeat", group, kmsg.ACLOperationRead, func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			r.Group = "g"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode }, true},
		{"OffsetFetch", group, kmsg.ACLOperationDescribe, func() kmsg.Request {
			r := kmsg.NewPtrOffsetFetchRequest()
			r.Version, r.Group = 7, "g"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.OffsetFetchResponse).ErrorCode }, true},
		{"FindCoordinator", group, kmsg.ACLOperationDescribe, func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.Version, r.CoordinatorKey = 3, "g"
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.FindCoordinatorResponse).ErrorCode }, true},
		{"DescribeGroups", group, kmsg.ACLOperationDescribe, func() kmsg.Request {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) int16 {
			if g := r.(*kmsg.DescribeGroupsResponse).Groups; len(g) > 0 {
				return g[0].ErrorCode
			}
			return 0
		}, true},
		{"ConsumerGroupDescribe", group, kmsg.ACLOperationDescribe, func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) int16 {
			if g := r.(*kmsg.ConsumerGroupDescribeResponse).Groups; len(g) > 0 {
				return g[0].ErrorCode
			}
			return 0
		}, true},
		{"DeleteGroups", group, kmsg.ACLOperationDelete, func() kmsg.Request {
			r := kmsg.NewPtrDeleteGroupsRequest()
			r.Groups = []string{"g"}
			return r
		}, func(r kmsg.Response) int16 {
			if g := r.(*kmsg.DeleteGroupsResponse).Groups; len(g) > 0 {
				return g[0].ErrorCode
			}
			return 0
		}, true},
		{"OffsetDelete", group, kmsg.ACLOperationDelete, func() kmsg.Request { r := kmsg.NewPtrOffsetDeleteRequest(); r.Group = "g"; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.OffsetDeleteResponse).ErrorCode }, true},
		{"InitProducerId", cluster, kmsg.ACLOperationIdempotentWrite, func() kmsg.Request { return kmsg.NewPtrInitProducerIDRequest() },
			func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }, false},
		{"ElectLeaders", cluster, kmsg.ACLOperationAlter, func() kmsg.Request { r := kmsg.NewPtrElectLeadersRequest(); r.Version = 2; return r },
			func(r kmsg.Response) int16 { return r.(*kmsg.ElectLeadersResponse).ErrorCode }, false},
		{"AlterPartitionReassignments", cluster, kmsg.ACLOperationAlter, func() kmsg.Request { return kmsg.NewPtrAlterPartitionAssignmentsRequest() },
			func(r kmsg.Response) int16 { return r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode }, false},
		{"ListPartitionReassignments", cluster, kmsg.ACLOperationDescribe, func() kmsg.Request { return kmsg.NewPtrListPartitionReassignmentsRequest() },
			func(r kmsg.Response) int16 { return r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode }, false},
		{"DescribeConfigs of the broker", cluster, kmsg.ACLOperationDescribeConfigs, func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			res := kmsg.NewDescribeConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
			r.Resources = append(r.Resources, res)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode }, false},
		{"IncrementalAlterConfigs of the broker", cluster, kmsg.ACLOperationAlterConfigs, func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			res := kmsg.NewIncrementalAlterConfigsRequestResource()
			res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
			r.Resources = append(r.Resources, res)
			return r
		}, func(r kmsg.Response) int16 { return r.(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := authFailed(c.res).Code
			for _, refuse := range []bool{false, true} {
				fg := &answeringGroups{}
				var asked []authz.ACL
				ts := startServer(t, func(cfg *Config) { cfg.Groups = fg })
				ts.storage.refused = func(acl authz.ACL) bool {
					asked = append(asked, acl)
					return refuse
				}
				resp := dialRaw(t, ts.addr).roundTrip(t, c.req())
				got := c.code(resp)
				switch {
				case refuse && got != want:
					t.Errorf("refused: code %d, want %d (%s)", got, want, kerr.ErrorForCode(want))
				case !refuse && got == want:
					t.Errorf("allowed: answered %s", kerr.ErrorForCode(got))
				case refuse && fg.calls != 0:
					t.Errorf("refused: the coordinator was asked")
				case !refuse && c.group && fg.calls != 1:
					t.Errorf("allowed: the coordinator was asked %d times", fg.calls)
				}
				if len(asked) != 1 || asked[0].Resource != c.res || asked[0].Op != c.op {
					t.Errorf("asked %v, want one %s %s", asked, c.res, c.op)
				}
			}
		})
	}
	// ListGroups lists nothing to a user that may not describe groups, without an error.
	for _, refuse := range []bool{false, true} {
		ts := startServer(t, func(cfg *Config) { cfg.Groups = &answeringGroups{} })
		ts.storage.refused = func(authz.ACL) bool { return refuse }
		resp := dialRaw(t, ts.addr).roundTrip(t, kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		if resp.ErrorCode != 0 || (len(resp.Groups) == 0) != refuse {
			t.Errorf("ListGroups refused=%v: %+v", refuse, resp)
		}
	}
}
