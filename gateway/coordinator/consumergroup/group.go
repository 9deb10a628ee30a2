package consumergroup

import (
	"cmp"
	"maps"
	"reflect"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// LeftStatic is the member epoch of a static member that left for now (a heartbeat with epoch
// -2): it keeps its partitions until it comes back under a new member id or its session ends.
const LeftStatic = -2

// Group is one consumer group. Its methods never change it: a change returns the next Group and
// the record that makes it durable, and the caller keeps the next Group once the record is in the
// log, so what a gateway answers is always what the log holds.
type Group struct {
	name            string
	epoch           int32
	assignmentEpoch int32
	topics          []record.TopicMeta // by name
	members         map[string]record.ConsumerMember
	static          map[string]string // instance id -> member id
	regexps         map[string]*regexp.Regexp
}

// New returns an empty group.
func New(name string) *Group {
	return &Group{name: name, members: make(map[string]record.ConsumerMember), static: make(map[string]string), regexps: make(map[string]*regexp.Regexp)}
}

// FromRecord restores a group from the whole group the log holds (record.State.ConsumerGroup).
func FromRecord(r record.ConsumerGroup) *Group {
	g := New(r.Name)
	g.epoch, g.assignmentEpoch = r.Epoch, r.AssignmentEpoch
	g.topics = slices.Clone(r.Topics)
	for _, m := range r.Members {
		g.put(m)
	}
	return g
}

// Record is the whole group, as a checkpoint holds it.
func (g *Group) Record() record.ConsumerGroup {
	r := record.ConsumerGroup{Name: g.name, Epoch: g.epoch, AssignmentEpoch: g.assignmentEpoch, Topics: slices.Clone(g.topics)}
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		r.Members = append(r.Members, g.members[id])
	}
	return r
}

func (g *Group) clone() *Group {
	n := &Group{name: g.name, epoch: g.epoch, assignmentEpoch: g.assignmentEpoch, topics: g.topics,
		members: maps.Clone(g.members), static: maps.Clone(g.static), regexps: maps.Clone(g.regexps)}
	return n
}

// put adds or replaces a member and keeps the indexes.
func (g *Group) put(m record.ConsumerMember) {
	if old, ok := g.members[m.MemberID]; ok && old.InstanceID != "" && old.InstanceID != m.InstanceID && g.static[old.InstanceID] == m.MemberID {
		delete(g.static, old.InstanceID)
	}
	g.members[m.MemberID] = m
	if m.InstanceID != "" {
		g.static[m.InstanceID] = m.MemberID
	}
	if m.SubscribedRegex != "" && g.regexps[m.SubscribedRegex] == nil {
		if re, err := compile(m.SubscribedRegex); err == nil {
			g.regexps[m.SubscribedRegex] = re
		}
	}
}

func (g *Group) remove(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	delete(g.members, id)
	if m.InstanceID != "" && g.static[m.InstanceID] == id {
		delete(g.static, m.InstanceID)
	}
}

// compile is the subscription regex as Kafka applies it: RE2 syntax, matching a whole topic name.
func compile(re string) (*regexp.Regexp, error) { return regexp.Compile("^(?:" + re + ")$") }

// Name is the group id.
func (g *Group) Name() string { return g.name }

// Epoch and AssignmentEpoch are the group epoch and the epoch of its target assignment.
func (g *Group) Epoch() int32           { return g.epoch }
func (g *Group) AssignmentEpoch() int32 { return g.assignmentEpoch }

// Empty reports whether the group has no members.
func (g *Group) Empty() bool { return len(g.members) == 0 }

// Member returns a member by id.
func (g *Group) Member(id string) (record.ConsumerMember, bool) {
	m, ok := g.members[id]
	return m, ok
}

// MemberIDs lists the members, sorted.
func (g *Group) MemberIDs() []string { return slices.Sorted(maps.Keys(g.members)) }

// reconciled reports whether m owns what its target gives it at epoch.
func reconciled(m record.ConsumerMember, epoch int32) bool {
	return m.State == record.MemberStable && m.Epoch == epoch
}

// State is the group's state as Kafka names it: Empty without members, Assigning while the
// target assignment is older than the group epoch, Reconciling while a member is not yet at the
// target, else Stable.
func (g *Group) State() string {
	switch {
	case len(g.members) == 0:
		return "Empty"
	case g.epoch > g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if !reconciled(m, g.assignmentEpoch) {
			return "Reconciling"
		}
	}
	return "Stable"
}

// Assignor is the server assignor the group uses: the one most members ask for (the first in
// Assignors order on a tie), Uniform when none asks.
func (g *Group) Assignor() string {
	votes := make(map[string]int)
	for _, m := range g.members {
		if m.ServerAssignor != "" {
			votes[m.ServerAssignor]++
		}
	}
	best := Uniform
	for _, name := range Assignors {
		if votes[name] > votes[best] {
			best = name
		}
	}
	return best
}

// subscribed is the set of existing topics a member subscribes to, by name or by regex.
func (g *Group) subscribed(m record.ConsumerMember, topics []record.TopicMeta) map[string]bool {
	out := make(map[string]bool)
	re := g.regexps[m.SubscribedRegex]
	for _, t := range topics {
		if _, ok := slices.BinarySearch(m.SubscribedTopics, t.Name); ok || re != nil && re.MatchString(t.Name) {
			out[t.Name] = true
		}
	}
	return out
}

// resolve is the group's topic metadata against a list of every topic (by name): the topics some
// member subscribes to.
func (g *Group) resolve(all []record.TopicMeta) []record.TopicMeta {
	want := make(map[string]bool)
	for _, m := range g.members {
		maps.Copy(want, g.subscribed(m, all))
	}
	var out []record.TopicMeta
	for _, t := range all {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// assign computes the target assignment of every member at the group epoch with the group's
// assignor, and records the epoch it is of.
func (g *Group) assign() {
	specs := make([]spec, 0, len(g.members))
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		m := g.members[id]
		specs = append(specs, spec{id: id, instance: m.InstanceID, topics: g.subscribed(m, g.topics), previous: m.Target})
	}
	var targets map[string]parts
	if g.Assignor() == Range {
		targets = assignRange(specs, g.topics)
	} else {
		targets = assignUniform(specs, g.topics)
	}
	for id, t := range targets {
		m := g.members[id]
		m.Target = t.record()
		g.members[id] = m
	}
	g.assignmentEpoch = g.epoch
}

// heldByOthers reports, for member id, which partitions other members still own (assigned or
// pending revocation): those it may not be given yet.
func (g *Group) heldByOthers(id string) func([16]byte, int32) bool {
	held := make(parts)
	for mid, m := range g.members {
		if mid == id {
			continue
		}
		for _, a := range []record.Assignment{m.Assigned, m.PendingRevocation} {
			for _, tp := range a {
				for _, p := range tp.Partitions {
					held.add(tp.TopicID, p)
				}
			}
		}
	}
	return held.has
}

// change is the record that takes the log from g to n: n's epochs and topics, the members that
// differ, and those that are gone. nil when n is g.
func (g *Group) change(n *Group) *record.ConsumerGroup {
	c := &record.ConsumerGroup{Name: n.name, Epoch: n.epoch, AssignmentEpoch: n.assignmentEpoch, Topics: n.topics}
	for _, id := range slices.Sorted(maps.Keys(n.members)) {
		if old, ok := g.members[id]; !ok || !reflect.DeepEqual(old, n.members[id]) {
			c.Members = append(c.Members, n.members[id])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.members)) {
		if _, ok := n.members[id]; !ok {
			c.Removed = append(c.Removed, id)
		}
	}
	if len(c.Members) == 0 && len(c.Removed) == 0 && g.epoch == n.epoch && g.assignmentEpoch == n.assignmentEpoch && reflect.DeepEqual(g.topics, n.topics) {
		return nil
	}
	return c
}

// CommitCode is Kafka's check of an OffsetCommit to a consumer group: a commit without a member
// epoch (the admin client, a consumer outside the group) is taken while the group has no
// members; a member must exist (UNKNOWN_MEMBER_ID) and commit with version 9 or above
// (UNSUPPORTED_VERSION). At its member epoch the commit is taken; ahead of it, it is
// STALE_MEMBER_EPOCH; behind it (KIP-1251: the commit raced the heartbeat that moved the member
// on), partition answers each partition: taken for a partition the member was given at or before
// the commit's epoch and still holds, STALE_MEMBER_EPOCH for any other.
func (g *Group) CommitCode(memberID string, epoch int32, version int16) (code int16, partition func(topic string, p int32) int16) {
	if epoch < 0 && len(g.members) == 0 {
		return 0, nil
	}
	m, ok := g.members[memberID]
	switch {
	case !ok:
		return kerr.UnknownMemberID.Code, nil
	case version < 9:
		return kerr.UnsupportedVersion.Code, nil
	case epoch > m.Epoch:
		return kerr.StaleMemberEpoch.Code, nil
	case epoch == m.Epoch:
		return 0, nil
	}
	ids := make(map[string][16]byte, len(g.topics))
	for _, t := range g.topics {
		ids[t.Name] = t.ID
	}
	return 0, func(topic string, p int32) int16 {
		id, ok := ids[topic]
		if !ok {
			return kerr.StaleMemberEpoch.Code
		}
		if at, ok := assignedEpoch(m.Assigned, id, p); ok && at <= epoch {
			return 0
		}
		return kerr.StaleMemberEpoch.Code
	}
}

// FetchCode is Kafka's check of an OffsetFetch of a consumer group: without a member id and
// epoch it is answered; with them the member must exist (UNKNOWN_MEMBER_ID) at that epoch
// (STALE_MEMBER_EPOCH).
func (g *Group) FetchCode(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	m, ok := g.members[id]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	if epoch != m.Epoch {
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}

// SubscribedTopics is the union of the topics the members subscribe to that exist, as the group
// last resolved them (OffsetDelete refuses those).
func (g *Group) SubscribedTopics() map[string]bool {
	out := make(map[string]bool, len(g.topics))
	for _, t := range g.topics {
		out[t.Name] = true
	}
	return out
}

// Describe is the group as ConsumerGroupDescribe shows it; topics the group no longer resolves
// are left out of the assignments, as Kafka leaves out topics it no longer knows.
func (g *Group) Describe() kmsg.ConsumerGroupDescribeResponseGroup {
	d := kmsg.NewConsumerGroupDescribeResponseGroup()
	d.Group = g.name
	d.State = g.State()
	d.Epoch = g.epoch
	d.AssignmentEpoch = g.assignmentEpoch
	d.AssignorName = g.Assignor()
	names := make(map[[16]byte]string, len(g.topics))
	for _, t := range g.topics {
		names[t.ID] = t.Name
	}
	describe := func(a record.Assignment) kmsg.Assignment {
		out := kmsg.NewAssignment()
		for _, tp := range a {
			name, ok := names[tp.TopicID]
			if !ok {
				continue
			}
			t := kmsg.NewAssignmentTopicPartition()
			t.TopicID, t.Topic, t.Partitions = tp.TopicID, name, slices.Clone(tp.Partitions)
			out.TopicPartitions = append(out.TopicPartitions, t)
		}
		return out
	}
	for _, id := range g.MemberIDs() {
		m := g.members[id]
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID = id
		if m.InstanceID != "" {
			dm.InstanceID = kmsg.StringPtr(m.InstanceID)
		}
		if m.RackID != "" {
			dm.RackID = kmsg.StringPtr(m.RackID)
		}
		dm.MemberEpoch = m.Epoch
		dm.ClientID, dm.ClientHost = m.ClientID, m.ClientHost
		dm.SubscribedTopics = slices.Clone(m.SubscribedTopics)
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		if m.SubscribedRegex != "" {
			dm.SubscribedTopicRegex = kmsg.StringPtr(m.SubscribedRegex)
		}
		dm.Assignment = describe(m.Assigned)
		dm.TargetAssignment = describe(m.Target)
		dm.MemberType = 1 // consumer protocol
		d.Members = append(d.Members, dm)
	}
	return d
}

// sortTopics orders topic metadata by name, the order the group keeps it in.
func sortTopics(ts []record.TopicMeta) []record.TopicMeta {
	out := slices.Clone(ts)
	slices.SortFunc(out, func(a, b record.TopicMeta) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
