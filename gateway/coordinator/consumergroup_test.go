package coordinator

import (
	"context"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// topicList is a Storage that only lists topics, all a consumer group asks of it.
type topicList struct {
	kafka.Storage
	topics []kafka.TopicInfo
}

func (s *topicList) ListTopics(context.Context) ([]kafka.TopicInfo, error) { return s.topics, nil }

var ordersTopic = kafka.TopicInfo{Name: "orders", ID: [16]byte{0x80, 7}, Partitions: 6}

// cgMember heartbeats a KIP-848 group through a coordinator's router as a client would, owning
// what it was last assigned.
type cgMember struct {
	id    string
	epoch int32
	owned []int32
}

func (m *cgMember) beat(t *testing.T, c *Coordinator, group string, full bool) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	r.Version = 1
	r.Group, r.MemberID, r.MemberEpoch = group, m.id, m.epoch
	r.RebalanceTimeoutMillis = -1
	if full {
		r.RebalanceTimeoutMillis = 30000
		r.SubscribedTopicNames = []string{"orders"}
		r.ServerAssignor = kmsg.StringPtr("uniform")
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if m.epoch > 0 && len(m.owned) > 0 {
			r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{{TopicID: ordersTopic.ID, Partitions: m.owned}}
		}
	}
	id := kafkaIdentity()
	id.Storage = &topicList{topics: []kafka.TopicInfo{ordersTopic}}
	resp, err := c.Groups().ConsumerGroupHeartbeat(ctxT(t), id, r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode == 0 {
		m.epoch = resp.MemberEpoch
		if resp.Assignment != nil {
			m.owned = nil
			for _, tp := range resp.Assignment.Topics {
				m.owned = append(m.owned, tp.Partitions...)
			}
		}
	}
	return resp
}

func describeCG(t *testing.T, c *Coordinator, group string) kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := c.Groups().ConsumerGroupDescribe(ctxT(t), kafkaIdentity(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Groups[0]
}

// A KIP-848 group keeps its group epoch, its target assignment and every member's epoch and
// partitions when its coordinator hands it over (a SIGTERM's Leave): the members heartbeat on at
// the new owner with the epochs they had, are answered without an error, and nothing moves. The
// partition's checkpoints hold the consumer group, and a rebuild from the checkpoint has it.
func TestConsumerGroupSurvivesHandover(t *testing.T) {
	s := newStore(t)
	a := start(t, s, 1, func(c *Config) { c.CheckpointEvery = 3 })
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	const p = 9
	group := groupIn(p, "kip848")
	ms := []*cgMember{{id: "m1"}, {id: "m2"}, {id: "m3"}}
	for range 6 {
		for _, m := range ms {
			if r := m.beat(t, a, group, true); r.ErrorCode != 0 {
				t.Fatalf("%s at a: %v", m.id, kerr.ErrorForCode(r.ErrorCode))
			}
		}
	}
	before := describeCG(t, a, group)
	if before.ErrorCode != 0 || before.State != "Stable" || len(before.Members) != 3 {
		t.Fatalf("at a: %+v", before)
	}
	epochs := make([]int32, len(ms))
	owned := make([][]int32, len(ms))
	for i, m := range ms {
		epochs[i], owned[i] = m.epoch, m.owned
		if len(m.owned) != 2 {
			t.Fatalf("%s owns %v", m.id, m.owned)
		}
	}

	b := start(t, s, 2, func(c *Config) { c.CheckpointEvery = 3 })
	waitServing(t, "b sees a live", func() error { return checkfor.True(len(b.Fleet().View().Live) == 2, "%v", b.Fleet().View().Live) })
	if err := a.Leave(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitServing(t, "b serves the group", func() error { return checkfor.True(answers(b, group), "b does not answer for %s", group) })
	for range 3 {
		for i, m := range ms {
			for _, full := range []bool{false, true} {
				r := m.beat(t, b, group, full)
				if r.ErrorCode != 0 || m.epoch != epochs[i] || !reflect.DeepEqual(m.owned, owned[i]) {
					t.Fatalf("%s at b (full %v): %v, epoch %d (had %d), owns %v (had %v)", m.id, full, kerr.ErrorForCode(r.ErrorCode), m.epoch, epochs[i], m.owned, owned[i])
				}
			}
		}
	}
	after := describeCG(t, b, group)
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("described at b\n%+v\nat a\n%+v", after, before)
	}

	// The checkpoint b's load started from, or the one written since, holds the group whole.
	ctx := ctxT(t)
	off, ok, err := b.cfg.Client.GetOffset(ctx, checkpointConsumer, b.meta, b.topic, p)
	if err != nil || !ok {
		t.Fatalf("checkpoint offset: %v %v", ok, err)
	}
	cp, ok := part(b, p).readCheckpoint(ctx, off.StoredOffset)
	if !ok || len(cp.Checkpoint.ConsumerGroups) != 1 || cp.Checkpoint.ConsumerGroups[0].Name != group {
		t.Fatalf("checkpoint %+v", cp.Checkpoint)
	}
	full := fullReplay(t, b.cfg.Client, b, p)
	fromCP := newPartition(b, p, b.clk.Now())
	if err := fromCP.rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	want, _ := full.ConsumerGroup(group)
	got, _ := fromCP.st.ConsumerGroup(group)
	if len(want.Members) != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilt from the checkpoint\n%+v\nfull replay\n%+v", got, want)
	}
	if fromCP.st.Counts().Applied >= full.Counts().Applied {
		t.Fatalf("the rebuild applied %d records, the full replay %d: no checkpoint used", fromCP.st.Counts().Applied, full.Counts().Applied)
	}
}
