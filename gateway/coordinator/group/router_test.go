package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// twoWay serves groups starting with "here" from one manager and answers NOT_COORDINATOR for
// the others; FindCoordinator knows only "here" keys.
type twoWay struct{ m *Manager }

func (d twoWay) Manager(g string) (*Manager, int16) {
	if len(g) >= 4 && g[:4] == "here" {
		return d.m, 0
	}
	return nil, kerr.NotCoordinator.Code
}
func (d twoWay) Managers() []*Manager { return []*Manager{d.m} }
func (d twoWay) Coordinator(key string, _ int8) (int32, string, int32, int16) {
	if len(key) >= 4 && key[:4] == "here" {
		return 3, "h3", 9093, 0
	}
	return 0, "", 0, kerr.CoordinatorNotAvailable.Code
}

func TestRouterSplitsRequests(t *testing.T) {
	e := newEnv(t, nil)
	r := NewRouter(twoWay{e.m})
	for _, g := range []string{"here-a", "here-b"} {
		e.m.CommitOffsets(ctx(t), testID, commitReq(g, "", -1, "t1", 1, 11))
	}

	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKey = 3, "here-a"
	if resp, _ := r.FindCoordinator(ctx(t), testID, fc); resp.ErrorCode != 0 || resp.NodeID != 3 || resp.Host != "h3" || resp.Port != 9093 {
		t.Fatalf("find v3: %+v", resp)
	}
	fc.Version, fc.CoordinatorKeys = 4, []string{"here-a", "there"}
	resp, _ := r.FindCoordinator(ctx(t), testID, fc)
	if len(resp.Coordinators) != 2 || resp.Coordinators[0].NodeID != 3 || resp.Coordinators[1].ErrorCode != kerr.CoordinatorNotAvailable.Code || resp.Coordinators[1].NodeID != -1 {
		t.Fatalf("find v4: %+v", resp.Coordinators)
	}

	// OffsetFetch v1 (topics listed), v3 (all topics), v8 (several groups).
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 1, "here-a"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t1", Partitions: []int32{1, 2}}}
	fr, _ := r.OffsetFetch(ctx(t), testID, of)
	if p := fr.Topics[0].Partitions; len(p) != 2 || p[0].Offset != 11 || p[1].Offset != -1 {
		t.Fatalf("fetch v1: %+v", fr.Topics)
	}
	of.Version, of.Topics = 3, nil
	fr, _ = r.OffsetFetch(ctx(t), testID, of)
	if len(fr.Topics) != 1 || fr.Topics[0].Partitions[0].Offset != 11 || fr.ErrorCode != 0 {
		t.Fatalf("fetch v3 all: %+v", fr)
	}
	of.Group = "there"
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t1", Partitions: []int32{1}}}
	if fr, _ = r.OffsetFetch(ctx(t), testID, of); fr.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("fetch v3 elsewhere: %+v", fr)
	}
	of.Version = 1
	if fr, _ = r.OffsetFetch(ctx(t), testID, of); fr.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("fetch v1 elsewhere: %+v", fr)
	}
	of.Version = 8
	of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "here-a"}, {Group: "there"}, {Group: "here-b", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t1", Partitions: []int32{1}}}}}
	fr, _ = r.OffsetFetch(ctx(t), testID, of)
	if len(fr.Groups) != 3 || fr.Groups[0].Topics[0].Partitions[0].Offset != 11 || fr.Groups[1].ErrorCode != kerr.NotCoordinator.Code ||
		fr.Groups[2].Topics[0].Partitions[0].Offset != 11 {
		t.Fatalf("fetch v8: %+v", fr.Groups)
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"here-a", "there"}
	dr, _ := r.DescribeGroups(ctx(t), testID, dg)
	if len(dr.Groups) != 2 || dr.Groups[0].State != "Empty" || dr.Groups[1].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("describe: %+v", dr.Groups)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version = 4
	if lr, _ := r.ListGroups(ctx(t), testID, lg); len(lr.Groups) != 2 {
		t.Fatalf("list: %+v", lr.Groups)
	}
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"here-a", "there"}
	delr, _ := r.DeleteGroups(ctx(t), testID, del)
	if delr.Groups[0].ErrorCode != 0 || delr.Groups[1].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("delete: %+v", delr.Groups)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group = "there"
	if h, _ := r.Heartbeat(ctx(t), testID, hb); h.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("heartbeat elsewhere: %d", h.ErrorCode)
	}
	oc := commitReq("there", "", -1, "t1", 0, 1)
	if c, _ := r.OffsetCommit(ctx(t), testID, oc); c.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("commit elsewhere: %+v", c)
	}
	jg := joinReq("there", "")
	if j, _ := r.JoinGroup(ctx(t), testID, jg); j.ErrorCode != kerr.NotCoordinator.Code || j.Generation != -1 {
		t.Fatalf("join elsewhere: %+v", j)
	}
}
