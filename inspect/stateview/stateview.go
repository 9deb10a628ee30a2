package stateview

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/consumergroup"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClaimInfo is a claim as the rows show it.
type ClaimInfo struct {
	Number uint64 `json:"number"`
	Node   int32  `json:"node"`
	Addr   string `json:"addr"`
	Offset uint64 `json:"offset"`
}

// GroupView is one group of a replayed partition. A KIP-848 consumer group (Type "consumer") has
// its Kafka state (Empty, Assigning, Reconciling, Stable), its group epoch as Generation, its
// server assignor as Protocol, no classic Members, and Consumer.
type GroupView struct {
	Group        string       `json:"group"`
	Type         string       `json:"type"`
	State        string       `json:"state"`
	Generation   int32        `json:"generation"`
	ProtocolType string       `json:"protocol_type"`
	Protocol     string       `json:"protocol"`
	Leader       string       `json:"leader"`
	Members      []MemberView `json:"members"`
	Offsets      []OffsetView `json:"offsets"`
	// Consumer is what a consumer group holds beyond a classic one; absent for classic groups.
	Consumer *ConsumerView `json:"consumer,omitempty"`
}

// ConsumerView is a KIP-848 consumer group's epochs, assignor and members.
type ConsumerView struct {
	Epoch           int32                `json:"epoch"`
	AssignmentEpoch int32                `json:"assignment_epoch"`
	Assignor        string               `json:"assignor"`
	Members         []ConsumerMemberView `json:"members"`
}

// ConsumerMemberView is one member of a consumer group. Assignments are text, "topic[0,1]
// other[2]", topics the group no longer resolves shown by id.
type ConsumerMemberView struct {
	MemberID           string   `json:"member_id"`
	InstanceID         string   `json:"instance_id,omitempty"`
	RackID             string   `json:"rack_id,omitempty"`
	ClientID           string   `json:"client_id"`
	ClientHost         string   `json:"client_host"`
	RebalanceTimeoutMS int64    `json:"rebalance_timeout_ms"`
	SubscribedTopics   []string `json:"subscribed_topics"`
	SubscribedRegex    string   `json:"subscribed_regex,omitempty"`
	ServerAssignor     string   `json:"server_assignor,omitempty"`
	Epoch              int32    `json:"epoch"`
	PreviousEpoch      int32    `json:"previous_epoch"`
	State              string   `json:"state"`
	Assigned           string   `json:"assigned"`
	PendingRevocation  string   `json:"pending_revocation"`
	Target             string   `json:"target"`
}

// MemberView is one member of a group.
type MemberView struct {
	MemberID           string `json:"member_id"`
	InstanceID         string `json:"instance_id,omitempty"`
	ClientID           string `json:"client_id"`
	ClientHost         string `json:"client_host"`
	SessionTimeoutMS   int64  `json:"session_timeout_ms"`
	RebalanceTimeoutMS int64  `json:"rebalance_timeout_ms"`
	// Assignment is the member's partitions ("topic[0,1] other[2]") for the consumer protocol,
	// or the assignment's size for another protocol.
	Assignment string `json:"assignment"`
}

// OffsetView is one committed offset.
type OffsetView struct {
	Topic       string     `json:"topic"`
	Partition   int32      `json:"partition"`
	Offset      int64      `json:"offset"`
	LeaderEpoch int32      `json:"leader_epoch"`
	Metadata    string     `json:"metadata"`
	Expire      *time.Time `json:"expire"`
}

// GroupViews lists every group of a state with its members and offsets, sorted by name.
func GroupViews(st *record.State) []GroupView {
	out := []GroupView{}
	for _, name := range st.GroupNames() {
		v := GroupView{Group: name, Type: "classic", State: "Empty", Members: []MemberView{}, Offsets: []OffsetView{}}
		if g, ok := st.Group(name); ok {
			v.State, v.Generation, v.ProtocolType, v.Protocol, v.Leader = g.State, g.Generation, g.ProtocolType, g.Protocol, g.Leader
			v.Members = MemberViews(&g)
		}
		if cg, ok := st.ConsumerGroup(name); ok {
			cv := ConsumerGroupView(cg)
			v.Type, v.ProtocolType, v.Consumer = "consumer", "consumer", &cv
			v.State, v.Generation, v.Protocol = consumergroup.FromRecord(cg).State(), cg.Epoch, cv.Assignor
		}
		for _, o := range st.GroupOffsets(name) {
			v.Offsets = append(v.Offsets, NewOffsetView(&o))
		}
		out = append(out, v)
	}
	return out
}

// MemberViews lists a group's members as the rows show them.
func MemberViews(g *record.Group) []MemberView {
	out := make([]MemberView, 0, len(g.Members))
	for _, m := range g.Members {
		out = append(out, MemberView{
			MemberID: m.MemberID, InstanceID: m.InstanceID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			SessionTimeoutMS: m.SessionTimeout.Milliseconds(), RebalanceTimeoutMS: m.RebalanceTimeout.Milliseconds(),
			Assignment: AssignmentText(g.ProtocolType, m.Assignment),
		})
	}
	return out
}

// ConsumerGroupView is a consumer group as the rows show it; the state and assignor are the ones
// the gateways derive (package consumergroup).
func ConsumerGroupView(cg record.ConsumerGroup) ConsumerView {
	g := consumergroup.FromRecord(cg)
	v := ConsumerView{Epoch: cg.Epoch, AssignmentEpoch: cg.AssignmentEpoch, Assignor: g.Assignor(), Members: []ConsumerMemberView{}}
	for _, m := range cg.Members {
		subs := m.SubscribedTopics
		if subs == nil {
			subs = []string{}
		}
		v.Members = append(v.Members, ConsumerMemberView{
			MemberID: m.MemberID, InstanceID: m.InstanceID, RackID: m.RackID, ClientID: m.ClientID, ClientHost: m.ClientHost,
			RebalanceTimeoutMS: m.RebalanceTimeout.Milliseconds(), SubscribedTopics: subs, SubscribedRegex: m.SubscribedRegex,
			ServerAssignor: m.ServerAssignor, Epoch: m.Epoch, PreviousEpoch: m.PreviousEpoch, State: m.State.String(),
			Assigned: PartitionsText(cg.Topics, m.Assigned), PendingRevocation: PartitionsText(cg.Topics, m.PendingRevocation),
			Target: PartitionsText(cg.Topics, m.Target),
		})
	}
	return v
}

// PartitionsText is a consumer group assignment as text, "other[2] topic[0,1]" by topic name,
// topics named from the group's resolved topics (by id, as a UUID, when it no longer has the
// topic).
func PartitionsText(topics []record.TopicMeta, a record.Assignment) string {
	parts := make([]string, 0, len(a))
	for _, tp := range a {
		name := ""
		for _, t := range topics {
			if t.ID == tp.TopicID {
				name = t.Name
				break
			}
		}
		if name == "" {
			name = UUIDText(tp.TopicID)
		}
		ps := make([]string, len(tp.Partitions))
		for i, p := range tp.Partitions {
			ps[i] = strconv.Itoa(int(p))
		}
		parts = append(parts, name+"["+strings.Join(ps, ",")+"]")
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// UUIDText is a topic id as Kafka shows it: 8-4-4-4-12 hex digits.
func UUIDText(id [16]byte) string {
	h := hex.EncodeToString(id[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// offsetView is a committed offset as the rows show it.
func NewOffsetView(o *record.OffsetCommit) OffsetView {
	ov := OffsetView{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata}
	if !o.Expire.IsZero() {
		t := o.Expire.UTC()
		ov.Expire = &t
	}
	return ov
}

// AppendJSON encodes the offset as encoding/json would; inspect -o json writes one per offset
// commit record, a million of them.
func (o OffsetView) AppendJSON(b []byte) []byte {
	b = append(b, `{"topic":`...)
	b = output.AppendJSONString(b, o.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(o.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, o.Offset, 10)
	b = append(b, `,"leader_epoch":`...)
	b = strconv.AppendInt(b, int64(o.LeaderEpoch), 10)
	b = append(b, `,"metadata":`...)
	b = output.AppendJSONString(b, o.Metadata)
	if o.Expire == nil {
		b = append(b, `,"expire":null}`...)
		return b
	}
	b = append(b, `,"expire":"`...)
	b = o.Expire.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...)
}

// AssignmentText shows a member's assignment: its topics and partitions for the consumer
// protocol, else its size.
func AssignmentText(protocolType string, b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if protocolType == "consumer" {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(b); err == nil {
			var parts []string
			for _, t := range a.Topics {
				ps := make([]string, len(t.Partitions))
				for i, p := range t.Partitions {
					ps[i] = strconv.Itoa(int(p))
				}
				parts = append(parts, t.Topic+"["+strings.Join(ps, ",")+"]")
			}
			return strings.Join(parts, " ")
		}
	}
	return strconv.Itoa(len(b)) + " bytes"
}

// TransactionView is a transaction record's fields in JSON and YAML.
type TransactionView struct {
	TransactionalID string         `json:"transactional_id"`
	ProducerID      int64          `json:"producer_id"`
	Epoch           int16          `json:"epoch"`
	State           string         `json:"state"`
	TimeoutMs       int64          `json:"timeout_ms"`
	Partitions      []TxnTopicView `json:"partitions"`
	Groups          []string       `json:"groups"`
	Started         string         `json:"started"`
	Updated         string         `json:"updated"`
}

// TxnTopicView is one topic's partitions in a transaction.
type TxnTopicView struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}

// NewTransactionView is the view of one transaction's state.
func NewTransactionView(x record.Transaction) TransactionView {
	v := TransactionView{TransactionalID: x.ID, ProducerID: x.ProducerID, Epoch: x.Epoch, State: x.State.String(),
		TimeoutMs: x.Timeout.Milliseconds(), Partitions: []TxnTopicView{}, Groups: x.Groups}
	for _, tp := range x.Partitions {
		v.Partitions = append(v.Partitions, TxnTopicView{Topic: tp.Topic, Partitions: tp.Partitions})
	}
	if v.Groups == nil {
		v.Groups = []string{}
	}
	if !x.Started.IsZero() {
		v.Started = x.Started.UTC().Format(time.RFC3339Nano)
	}
	if !x.Updated.IsZero() {
		v.Updated = x.Updated.UTC().Format(time.RFC3339Nano)
	}
	return v
}

// RecordGroup is the consumer group a record is about, "" for claims and checkpoints.
func RecordGroup(r *record.Record) string {
	switch {
	case r.Group != nil:
		return r.Group.Name
	case r.OffsetCommit != nil:
		return r.OffsetCommit.Group
	case r.GroupDeleted != nil:
		return r.GroupDeleted.Group
	case r.OffsetDeleted != nil:
		return r.OffsetDeleted.Group
	case r.ConsumerGroup != nil:
		return r.ConsumerGroup.Name
	case r.TxnOffsets != nil:
		return r.TxnOffsets.Group
	}
	return ""
}
