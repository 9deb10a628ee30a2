package group

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// Describe answers one group of a DescribeGroups of the given version. Member metadata and
// assignments are shown only while the group is Stable, as Kafka shows them; an unknown group
// is Dead, with GROUP_ID_NOT_FOUND from v6.
func (m *Manager) Describe(version int16, group string) kmsg.DescribeGroupsResponseGroup {
	dg := kmsg.NewDescribeGroupsResponseGroup()
	dg.Group = group
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		dg.ErrorCode = kerr.NotCoordinator.Code
		return dg
	}
	g := m.groups[group]
	if g == nil || g.cg != nil {
		// A consumer group is described by ConsumerGroupDescribe; DescribeGroups, the classic
		// API, answers it as Kafka 4 does: not a classic group.
		dg.State = stDead.String()
		if version >= 6 {
			dg.ErrorCode = kerr.GroupIDNotFound.Code
			if g != nil {
				dg.ErrorMessage = kmsg.StringPtr("Group " + group + " is not a classic group.")
			}
		}
		return dg
	}
	dg.State = g.state.String()
	dg.ProtocolType = g.protocolType
	stable := g.state == stStable
	if stable {
		dg.Protocol = g.protocol
	}
	for _, id := range g.order {
		mem := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID = id
		if mem.rec.InstanceID != "" {
			dm.InstanceID = kmsg.StringPtr(mem.rec.InstanceID)
		}
		dm.ClientID = mem.rec.ClientID
		dm.ClientHost = mem.rec.ClientHost
		if stable {
			for _, p := range mem.rec.Protocols {
				if p.Name == g.protocol {
					dm.ProtocolMetadata = p.Metadata
					break
				}
			}
			dm.MemberAssignment = mem.rec.Assignment
		}
		dg.Members = append(dg.Members, dm)
	}
	return dg
}

// List answers ListGroups for this manager's groups. states (v4+) and types (v5+) filter
// case-insensitively; a group is of type "classic" or, a KIP-848 consumer group, "consumer", with
// the states of its kind (Empty, Assigning, Reconciling, Stable).
func (m *Manager) List(states, types []string) []kmsg.ListGroupsResponseGroup {
	match := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	var out []kmsg.ListGroupsResponseGroup
	for _, name := range sortedNames(m.groups) {
		g := m.groups[name]
		kind, state := "classic", g.state.String()
		if g.cg != nil {
			kind, state = "consumer", g.cg.State()
		}
		if g.state == stDead || !match(states, state) || !match(types, kind) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = name
		lg.ProtocolType = g.protocolType
		lg.GroupState = state
		lg.GroupType = kind
		out = append(out, lg)
	}
	return out
}

func sortedNames(gs map[string]*group) []string {
	names := make([]string, 0, len(gs))
	for n := range gs {
		names = append(names, n)
	}
	sortStrings(names)
	return names
}

// Delete serves one group of a DeleteGroups: an empty group is journaled as deleted and dropped
// with its offsets; a group with members is NON_EMPTY_GROUP.
func (m *Manager) Delete(ctx context.Context, group string) int16 {
	m.mu.Lock()
	g := m.groups[group]
	switch {
	case m.closed:
		m.mu.Unlock()
		return kerr.NotCoordinator.Code
	case g == nil || g.state == stDead:
		m.mu.Unlock()
		return kerr.GroupIDNotFound.Code
	case g.state != stEmpty || len(g.members) > 0 || g.cg != nil && !g.cg.Empty():
		m.mu.Unlock()
		return kerr.NonEmptyGroup.Code
	}
	g.state = stDead
	for id := range g.pending {
		m.dropPending(g, id)
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, []record.Record{{Type: record.TypeGroupDeleted, GroupDeleted: &record.GroupDeleted{Group: group}}})
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		if g.state == stDead {
			g.state = stEmpty
		}
		return code
	}
	if m.groups[group] == g {
		delete(m.groups, group)
	}
	return 0
}
