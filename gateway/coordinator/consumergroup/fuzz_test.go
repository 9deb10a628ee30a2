package consumergroup

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzHeartbeat feeds heartbeat bodies a client could send (the version in the first byte) to a
// group with members: whatever they hold, Heartbeat answers with a code, never panics, never
// lets two members hold one partition, and every change it returns folds to the group it
// returns and restores from the log as the same group.
func FuzzHeartbeat(f *testing.F) {
	seed := func(edit func(*kmsg.ConsumerGroupHeartbeatRequest)) {
		c := newClient(nil, "A", "a")
		r := c.req()
		edit(r)
		f.Add(append([]byte{byte(r.Version)}, r.AppendTo(nil)...))
	}
	seed(func(*kmsg.ConsumerGroupHeartbeatRequest) {})
	seed(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberID, r.MemberEpoch = "B", 2 })
	seed(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.MemberEpoch = -1 })
	seed(func(r *kmsg.ConsumerGroupHeartbeatRequest) { r.InstanceID, r.MemberEpoch = kmsg.StringPtr("i"), -2 })
	seed(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.SubscribedTopicNames, r.SubscribedTopicRegex = nil, kmsg.StringPtr("a|b")
	})
	seed(func(r *kmsg.ConsumerGroupHeartbeatRequest) {
		r.MemberID, r.MemberEpoch = "B", 1
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: tid(1), Partitions: []int32{0, 1, 2, 3}}}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Version = int16(data[0] % 2)
		if req.ReadFrom(data[1:]) != nil {
			return
		}
		w := newWorld(t, topic("a", 1, 4), topic("b", 2, 2))
		b, s := newClient(t, "B", "a", "b"), newClient(t, "S", "b")
		s.instance = "i"
		w.beat(b)
		w.beat(s)
		w.beat(b)
		if e, _ := Validate(req); e != nil {
			return
		}
		if req.MemberID == "" {
			req.MemberID = "generated"
		}
		o := w.apply(w.g.Heartbeat(req, Client{ID: "c", Host: "h"}, w.topics))
		if o.Resp == nil {
			t.Fatal("no answer")
		}
		if o.Resp.ErrorCode != 0 && o.Change != nil {
			t.Fatalf("an error answer (%d) with a change", o.Resp.ErrorCode)
		}
		if o.Next != nil {
			if got := FromRecord(o.Next.Record()); !reflect.DeepEqual(got.Record(), o.Next.Record()) {
				t.Fatal("restoring changed the group")
			}
		}
	})
}
