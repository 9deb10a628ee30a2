package group

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/clock"
)

// FuzzRequests feeds request bodies a client could send (JoinGroup at the version the first byte
// names, then SyncGroup, OffsetCommit, OffsetDelete and ConsumerGroupHeartbeat from the same
// bytes) to a fresh manager: whatever they hold, the answers carry codes, nothing panics or
// blocks, and what the manager keeps survives State -> Restore -> State (and its consumer groups
// RestoreConsumerGroups) unchanged.
func FuzzRequests(f *testing.F) {
	for v := int16(0); v <= 9; v++ {
		r := joinReq("g", "", withVersion(v))
		if v >= 5 {
			r.InstanceID = kmsg.StringPtr("i")
		}
		f.Add(append([]byte{byte(v)}, r.AppendTo(nil)...))
	}
	for _, mb := range []*cgm{{id: "A"}, {id: "B", instance: "i"}} {
		f.Add(append([]byte{1}, mb.req("g").AppendTo(nil)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		version := int16(data[0] % 10)
		body := data[1:]
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		m := NewManager(Config{Clock: clock.NewFake(t0), Journal: &memJournal{}, MinSessionTimeout: time.Millisecond})
		defer m.Close()

		join := kmsg.NewPtrJoinGroupRequest()
		join.Version = version
		if join.ReadFrom(body) != nil {
			return
		}
		jr, err := m.Join(ctx, testID, join)
		if err != nil {
			t.Fatalf("join blocked: %v", err)
		}
		if jr.ErrorCode == 0 {
			sync := kmsg.NewPtrSyncGroupRequest()
			sync.Version = 5
			sync.Group, sync.MemberID, sync.Generation = join.Group, jr.MemberID, jr.Generation
			sync.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: jr.MemberID, MemberAssignment: body}}
			if _, err := m.Sync(ctx, testID, sync); err != nil {
				t.Fatalf("sync blocked: %v", err)
			}
		}
		commit := kmsg.NewPtrOffsetCommitRequest()
		commit.Version = int16(data[0]) % 10
		if commit.ReadFrom(body) == nil {
			m.CommitOffsets(ctx, testID, commit)
		}
		del := kmsg.NewPtrOffsetDeleteRequest()
		if del.ReadFrom(body) == nil {
			m.DeleteOffsets(ctx, testID, del)
		}
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Version = int16(data[0]) % 2
		if hb.ReadFrom(body) == nil {
			if r := m.ConsumerHeartbeat(ctx, cgID(), hb); r == nil {
				t.Fatal("no heartbeat answer")
			}
			m.ConsumerDescribe(hb.Group)
		}
		m.Describe(6, join.Group)
		m.List(nil, nil)

		cgs := m.ConsumerGroups()
		m3 := NewManager(Config{Clock: clock.NewFake(t0)})
		defer m3.Close()
		m3.RestoreConsumerGroups(cgs)
		if got := m3.ConsumerGroups(); !reflect.DeepEqual(got, cgs) {
			t.Fatalf("consumer groups changed through restore:\n%+v\n%+v", cgs, got)
		}
		groups, offsets := m.State()
		m2 := NewManager(Config{Clock: clock.NewFake(t0), MinSessionTimeout: time.Millisecond})
		defer m2.Close()
		m2.Restore(groups, offsets)
		g2, o2 := m2.State()
		if !reflect.DeepEqual(groups, g2) || !reflect.DeepEqual(offsets, o2) {
			t.Fatalf("state changed through restore:\n%+v %+v\n%+v %+v", groups, offsets, g2, o2)
		}
	})
}
