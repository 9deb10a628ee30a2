package consumergroup

import (
	"reflect"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// The member epochs a heartbeat may carry besides a member's own: 0 joins (or rejoins), -1
// leaves, -2 leaves for now (static members).
const (
	JoinEpoch  = 0
	LeaveEpoch = -1
)

// Client is who sent a heartbeat.
type Client struct {
	ID, Host string
}

// Outcome is what a heartbeat or a timeout did.
type Outcome struct {
	// Resp is the answer; the caller sets the heartbeat interval.
	Resp *kmsg.ConsumerGroupHeartbeatResponse
	// Next is the group after the change and Change the record that makes it durable; both nil
	// when nothing changed. The answer may be given only once Change is in the log.
	Next   *Group
	Change *record.ConsumerGroup
	// Alive is the member whose session the heartbeat keeps alive, "" when none (an error or a
	// leave).
	Alive string
}

func fail(resp *kmsg.ConsumerGroupHeartbeatResponse, e *kerr.Error, msg string) Outcome {
	resp.ErrorCode = e.Code
	if msg != "" {
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return Outcome{Resp: resp}
}

// Validate is Kafka's check of a ConsumerGroupHeartbeat before it reaches a group: nil when the
// request may go on, else the error and its message. From v1 the member id is the client's own
// (KIP-1082) and must be sent when joining too; v0 joins without one and is given one.
func Validate(req *kmsg.ConsumerGroupHeartbeatRequest) (*kerr.Error, string) {
	empty := func(s *string) bool { return s != nil && *s == "" }
	switch {
	case req.Group == "":
		return kerr.InvalidRequest, "GroupId can't be empty."
	case empty(req.InstanceID):
		return kerr.InvalidRequest, "InstanceId can't be empty."
	case empty(req.RackID):
		return kerr.InvalidRequest, "RackId can't be empty."
	}
	switch e := req.MemberEpoch; {
	case e > 0 || e == LeaveEpoch:
		if req.MemberID == "" {
			return kerr.InvalidRequest, "MemberId can't be empty."
		}
	case e == JoinEpoch:
		switch {
		case req.Version >= 1 && req.MemberID == "":
			return kerr.InvalidRequest, "MemberId can't be empty."
		case req.RebalanceTimeoutMillis == -1:
			return kerr.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		case req.Topics == nil || len(req.Topics) > 0:
			return kerr.InvalidRequest, "TopicPartitions must be empty when (re-)joining."
		case len(req.SubscribedTopicNames) == 0 && (req.SubscribedTopicRegex == nil || *req.SubscribedTopicRegex == ""):
			return kerr.InvalidRequest, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request."
		}
	case e == LeftStatic:
		if req.MemberID == "" {
			return kerr.InvalidRequest, "MemberId can't be empty."
		}
		if req.InstanceID == nil {
			return kerr.InvalidRequest, "InstanceId can't be null."
		}
	default:
		return kerr.InvalidRequest, "MemberEpoch is invalid."
	}
	if re := req.SubscribedTopicRegex; re != nil && *re != "" {
		if _, err := compile(*re); err != nil {
			return kerr.InvalidRegularExpression, "SubscribedTopicRegex " + *re + " is not a valid regular expression: " + err.Error()
		}
	}
	if a := req.ServerAssignor; a != nil && !knownAssignor(*a) {
		return kerr.UnsupportedAssignor, "ServerAssignor " + *a + " is not supported. Supported assignors: uniform, range."
	}
	return nil, ""
}

// fullRequest is Kafka's test of a heartbeat that carries the member's whole state (a join, or
// a heartbeat after an error): its answer always carries the assignment.
func fullRequest(req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	return req.MemberEpoch == JoinEpoch || req.RebalanceTimeoutMillis != -1 &&
		(req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil
}

// Heartbeat serves one ConsumerGroupHeartbeat that passed Validate, with a member id (the
// caller gives a v0 join one). topics is every topic there is (name, id, partitions) as the
// caller last read them, nil when it has none: the group then keeps the topics it resolved
// before. It follows Kafka's GroupMetadataManager.consumerGroupHeartbeat:
//
//  1. find or create the member, checking its epoch (ahead or behind: FENCED_MEMBER_EPOCH, save
//     a member one epoch behind that owns no more than its assignment, whose answer was lost),
//     and for a static member its instance (UNRELEASED_INSTANCE_ID while another member holds
//     it, FENCED_INSTANCE_ID for a stale member id);
//  2. take its new subscription and settings; a new member, a changed subscription, or a change
//     of the subscribed topics bumps the group epoch;
//  3. compute a new target assignment when the group epoch is ahead of it;
//  4. move the member toward its target (reconcile).
//
// A heartbeat with epoch 0 from a member already in the group rejoins it in place (KIP-848, as
// Kafka answers since KAFKA-19233): it keeps its epoch and assignment and gets them in full.
func (g *Group) Heartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, c Client, topics []record.TopicMeta) Outcome {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	if req.MemberEpoch == LeaveEpoch || req.MemberEpoch == LeftStatic {
		return g.leave(req, resp)
	}
	n := g.clone()
	owned := fromOwned(req.Topics)
	joining := req.MemberEpoch == JoinEpoch
	instance := ""
	if req.InstanceID != nil {
		instance = *req.InstanceID
	}

	m, known := n.members[req.MemberID]
	var replaced string // the member id a rejoining static member takes over from
	switch {
	case instance != "" && joining:
		if holder, ok := n.static[instance]; ok && holder != req.MemberID {
			prev := n.members[holder]
			if prev.Epoch != LeftStatic {
				return fail(resp, kerr.UnreleasedInstanceID, "Static member "+req.MemberID+" with instance id "+instance+
					" cannot join the group because the instance id is owned by "+holder+" member.")
			}
			// The restarted instance takes the old member's place: its target and what it
			// was assigned, under the new member id, from epoch 0.
			m = prev
			m.MemberID = req.MemberID
			m.Epoch, m.PreviousEpoch = 0, 0
			replaced = holder
			known = true
		}
	case instance != "":
		holder, ok := n.static[instance]
		if !ok {
			return fail(resp, kerr.UnknownMemberID, "Instance id "+instance+" is unknown.")
		}
		if holder != req.MemberID {
			return fail(resp, kerr.FencedInstanceID, "Static member "+req.MemberID+" with instance id "+instance+" was fenced by member "+holder+".")
		}
	}
	if !known && !joining {
		return fail(resp, kerr.UnknownMemberID, "Member "+req.MemberID+" is not a member of group "+g.name+".")
	}
	if known && !joining && replaced == "" {
		switch {
		case req.MemberEpoch > m.Epoch:
			return fail(resp, kerr.FencedMemberEpoch, "The consumer group member has a greater member epoch than the one known by the group coordinator. The member must abandon all its partitions and rejoin.")
		case req.MemberEpoch < m.Epoch && (req.MemberEpoch != m.PreviousEpoch || !subset(owned, m.Assigned)):
			return fail(resp, kerr.FencedMemberEpoch, "The consumer group member has a smaller member epoch than the one known by the group coordinator. The member must abandon all its partitions and rejoin.")
		}
	}
	before := m
	if !known {
		m = record.ConsumerMember{MemberID: req.MemberID}
	}

	// 2. The member's settings and subscription; a field not sent is unchanged.
	if req.InstanceID != nil {
		m.InstanceID = instance
	}
	if req.RackID != nil {
		m.RackID = *req.RackID
	}
	if req.RebalanceTimeoutMillis > 0 {
		m.RebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.ServerAssignor != nil {
		m.ServerAssignor = *req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		m.SubscribedTopics = slices.Compact(names)
		if len(m.SubscribedTopics) == 0 {
			m.SubscribedTopics = nil
		}
	}
	if req.SubscribedTopicRegex != nil {
		m.SubscribedRegex = *req.SubscribedTopicRegex
	}
	m.ClientID, m.ClientHost = c.ID, c.Host
	bump := !known || !slices.Equal(m.SubscribedTopics, before.SubscribedTopics) || m.SubscribedRegex != before.SubscribedRegex
	if replaced != "" {
		n.remove(replaced)
	}
	n.put(m)
	if topics == nil {
		topics = n.topics
	}
	if resolved := n.resolve(sortTopics(topics)); !reflect.DeepEqual(resolved, n.topics) {
		n.topics = resolved
		bump = true
	}
	if bump {
		n.epoch++
	}

	// 3. The target assignment.
	if n.epoch > n.assignmentEpoch {
		n.assign()
		m = n.members[req.MemberID]
	}

	// 4. Reconcile the member toward its target.
	if !reconciled(m, n.assignmentEpoch) {
		m = reconcile(m, n.assignmentEpoch, n.heldByOthers(m.MemberID), owned)
		n.members[m.MemberID] = m
	}

	resp.MemberID = kmsg.StringPtr(m.MemberID)
	resp.MemberEpoch = m.Epoch
	if fullRequest(req) || !reflect.DeepEqual(m.Assigned, before.Assigned) || replaced != "" {
		resp.Assignment = toHeartbeat(m.Assigned)
	}
	out := Outcome{Resp: resp, Alive: m.MemberID}
	if ch := g.change(n); ch != nil {
		out.Next, out.Change = n, ch
	}
	return out
}

// leave serves a heartbeat with epoch -1 (the member leaves) or -2 (a static member leaves for
// now, keeping its partitions for the instance's next member).
func (g *Group) leave(req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) Outcome {
	resp.MemberID = kmsg.StringPtr(req.MemberID)
	resp.MemberEpoch = req.MemberEpoch
	id := req.MemberID
	if req.InstanceID != nil {
		holder, ok := g.static[*req.InstanceID]
		if !ok {
			return fail(resp, kerr.UnknownMemberID, "Instance id "+*req.InstanceID+" is unknown.")
		}
		if holder != req.MemberID {
			return fail(resp, kerr.FencedInstanceID, "Static member "+req.MemberID+" with instance id "+*req.InstanceID+" was fenced by member "+holder+".")
		}
	}
	m, ok := g.members[id]
	if !ok {
		return fail(resp, kerr.UnknownMemberID, "Member "+id+" is not a member of group "+g.name+".")
	}
	if req.MemberEpoch == LeftStatic {
		n := g.clone()
		m.Epoch = LeftStatic
		m.PendingRevocation = nil
		n.members[id] = m
		out := Outcome{Resp: resp}
		if ch := g.change(n); ch != nil {
			out.Next, out.Change = n, ch
		}
		return out
	}
	next, ch := g.Fence(id, nil)
	return Outcome{Resp: resp, Next: next, Change: ch}
}

// Fence removes a member (it left, or its session or rebalance timeout passed) and bumps the
// group epoch, so that the others are assigned its partitions on their next heartbeat; the
// topics the group resolved lose those only it subscribed to. With epoch set, it fences only a
// member still at that epoch (a rebalance timeout armed at it). nil when there is nothing to do.
func (g *Group) Fence(memberID string, epoch *int32) (*Group, *record.ConsumerGroup) {
	m, ok := g.members[memberID]
	if !ok || epoch != nil && m.Epoch != *epoch {
		return nil, nil
	}
	n := g.clone()
	n.remove(memberID)
	n.topics = n.resolve(n.topics)
	n.epoch++
	if len(n.members) == 0 {
		// Nothing is left to assign: the target is as new as the group (KAFKA-20442).
		n.assignmentEpoch = n.epoch
	}
	return n, g.change(n)
}
