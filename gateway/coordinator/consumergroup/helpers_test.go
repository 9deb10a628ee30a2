package consumergroup

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

func tid(n byte) [16]byte { return [16]byte{0x80, n} }

func topic(name string, n byte, partitions int32) record.TopicMeta {
	return record.TopicMeta{Name: name, ID: tid(n), Partitions: partitions}
}

// client is a consumer as the protocol expects it to behave: it owns what its last answer
// assigned (dropping revoked partitions at once), heartbeats with its epoch and what it owns.
type client struct {
	t        *testing.T
	id       string
	instance string
	epoch    int32
	owned    map[[16]byte][]int32
	topics   []string
	regex    string
	assignor string
}

func newClient(t *testing.T, id string, topics ...string) *client {
	return &client{t: t, id: id, topics: topics, assignor: Uniform}
}

func (c *client) ownedTopics() []kmsg.ConsumerGroupHeartbeatRequestTopic {
	out := []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, id := range slices.SortedFunc(maps.Keys(c.owned), func(a, b [16]byte) int { return slices.Compare(a[:], b[:]) }) {
		t := kmsg.NewConsumerGroupHeartbeatRequestTopic()
		t.TopicID, t.Partitions = id, slices.Clone(c.owned[id])
		out = append(out, t)
	}
	return out
}

// req is the heartbeat the client sends now: a full one (what it subscribes to and owns).
func (c *client) req() *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group = "g"
	r.MemberID = c.id
	r.MemberEpoch = c.epoch
	if c.instance != "" {
		r.InstanceID = kmsg.StringPtr(c.instance)
	}
	r.RebalanceTimeoutMillis = 60000
	if c.regex != "" {
		r.SubscribedTopicRegex = kmsg.StringPtr(c.regex)
	} else {
		r.SubscribedTopicNames = slices.Clone(c.topics)
	}
	r.ServerAssignor = kmsg.StringPtr(c.assignor)
	r.Topics = c.ownedTopics()
	if c.epoch == 0 {
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	}
	return r
}

// keepalive is a heartbeat with nothing but the member's id and epoch.
func (c *client) keepalive() *kmsg.ConsumerGroupHeartbeatRequest {
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group = "g"
	r.MemberID = c.id
	r.MemberEpoch = c.epoch
	r.RebalanceTimeoutMillis = -1
	return r
}

// take applies an answer as a client does.
func (c *client) take(o Outcome) {
	c.t.Helper()
	if o.Resp.ErrorCode != 0 {
		c.t.Fatalf("%s: heartbeat error %v", c.id, kerr.ErrorForCode(o.Resp.ErrorCode))
	}
	c.epoch = o.Resp.MemberEpoch
	if a := o.Resp.Assignment; a != nil {
		c.owned = make(map[[16]byte][]int32)
		for _, t := range a.Topics {
			c.owned[t.TopicID] = slices.Clone(t.Partitions)
		}
	}
}

func (c *client) count() int {
	n := 0
	for _, ps := range c.owned {
		n += len(ps)
	}
	return n
}

// world is a group under test with the log beside it: every change is folded as the log's
// readers fold it, and must give the group the coordinator keeps in memory.
type world struct {
	t      *testing.T
	g      *Group
	log    *record.ConsumerGroup
	topics []record.TopicMeta
}

func newWorld(t *testing.T, topics ...record.TopicMeta) *world {
	return &world{t: t, g: New("g"), topics: topics}
}

func (w *world) apply(o Outcome) Outcome {
	w.t.Helper()
	if (o.Next == nil) != (o.Change == nil) {
		w.t.Fatalf("Next %v with Change %v", o.Next != nil, o.Change != nil)
	}
	if o.Next != nil {
		w.log = record.MergeConsumerGroup(w.log, o.Change)
		w.g = o.Next
		// The change is exactly what the log needs: folding it gives the group in memory.
		if got, want := *w.log, w.g.Record(); !reflect.DeepEqual(got, want) {
			w.t.Fatalf("log fold\n%+v\nin memory\n%+v", got, want)
		}
		// And a group restored from the log is the same group.
		if got := FromRecord(*w.log).Record(); !reflect.DeepEqual(got, w.g.Record()) {
			w.t.Fatal("FromRecord changed the group")
		}
	}
	w.checkOwners()
	return o
}

// checkOwners is the protocol's promise: no partition in two members' assigned or pending
// revocation sets; and every assigned partition has the epoch it was given at, no later than the
// member's.
func (w *world) checkOwners() {
	w.t.Helper()
	seen := make(map[string]string)
	for _, id := range w.g.MemberIDs() {
		m, _ := w.g.Member(id)
		for _, tp := range m.Assigned {
			if len(tp.Epochs) != len(tp.Partitions) {
				w.t.Fatalf("%s: assigned %v with epochs %v", id, tp.Partitions, tp.Epochs)
			}
			for _, e := range tp.Epochs {
				if m.Epoch >= 0 && e > m.Epoch {
					w.t.Fatalf("%s at epoch %d holds a partition given at %d", id, m.Epoch, e)
				}
			}
		}
		for _, a := range []record.Assignment{m.PendingRevocation, m.Target} {
			for _, tp := range a {
				if tp.Epochs != nil {
					w.t.Fatalf("%s: epochs outside its assigned partitions: %+v", id, tp)
				}
			}
		}
		for _, a := range []record.Assignment{m.Assigned, m.PendingRevocation} {
			for _, tp := range a {
				for _, p := range tp.Partitions {
					k := fmt.Sprintf("%x/%d", tp.TopicID, p)
					if other, ok := seen[k]; ok {
						w.t.Fatalf("partition %s held by %s and %s", k, other, id)
					}
					seen[k] = id
				}
			}
		}
	}
}

func (w *world) beat(c *client) Outcome {
	w.t.Helper()
	r := c.req()
	if e, msg := Validate(r); e != nil {
		w.t.Fatalf("%s: invalid request: %v %s", c.id, e, msg)
	}
	o := w.apply(w.g.Heartbeat(r, Client{ID: "cl", Host: "h"}, w.topics))
	c.take(o)
	return o
}

// clientsDisjoint checks that no two clients own one partition at once.
func clientsDisjoint(t *testing.T, cs ...*client) {
	t.Helper()
	seen := make(map[string]string)
	for _, c := range cs {
		for id, ps := range c.owned {
			for _, p := range ps {
				k := fmt.Sprintf("%x/%d", id, p)
				if other, ok := seen[k]; ok {
					t.Fatalf("clients %s and %s both own %s", other, c.id, k)
				}
				seen[k] = c.id
			}
		}
	}
}
