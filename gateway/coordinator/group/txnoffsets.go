package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// TxnCommit is what a TxnOffsetCommit says about the committing member (KIP-447): its member id,
// group instance id and generation (a KIP-848 group's member epoch); Generation -1 and no member
// id is a producer that does not use the group's membership (TxnOffsetCommit v0-2).
type TxnCommit struct {
	Group      string
	MemberID   string
	InstanceID *string
	Generation int32
}

// TxnCommitCheck is Kafka's check of a TxnOffsetCommit against the group, made before the offsets
// are staged in the transaction: the group's code (0 when the commit may go on) and, for a
// KIP-848 group's member at an older epoch, the code of each partition. It journals nothing.
//
// Classic group: a commit without member, instance and generation is taken (even while the group
// has members, as Kafka takes a pre-KIP-447 producer's); otherwise the member must be the group's
// (UNKNOWN_MEMBER_ID; FENCED_INSTANCE_ID for a stale static instance) at the group's generation
// (ILLEGAL_GENERATION). A rebalance in progress does not refuse it, as in Kafka.
// KIP-848 group: the member epoch is checked as OffsetCommit v9 checks it (UNKNOWN_MEMBER_ID,
// STALE_MEMBER_EPOCH). A group it does not know is an empty one: a commit naming a member or a
// generation is UNKNOWN_MEMBER_ID there, as in Kafka.
func (m *Manager) TxnCommitCheck(c TxnCommit) (code int16, partition func(topic string, p int32) int16) {
	if c.Group == "" {
		return kerr.InvalidGroupID.Code, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return kerr.NotCoordinator.Code, nil
	}
	simple := c.Generation < 0 && c.MemberID == "" && (c.InstanceID == nil || *c.InstanceID == "")
	g := m.groups[c.Group]
	if g == nil {
		// An empty group: only a commit naming no member can be taken.
		if simple {
			return 0, nil
		}
		return kerr.UnknownMemberID.Code, nil
	}
	if g.state == stDead {
		return kerr.CoordinatorNotAvailable.Code, nil
	}
	if g.cg != nil {
		return g.cg.CommitCode(c.MemberID, c.Generation, 9)
	}
	if simple {
		return 0, nil
	}
	if code := g.checkMember(c.MemberID, c.InstanceID); code != 0 {
		return code, nil
	}
	if c.Generation != g.generation {
		return kerr.IllegalGeneration.Code, nil
	}
	return 0, nil
}

// TxnCommitTopics checks the topics of a TxnOffsetCommit as OffsetCommit does: the code of each
// topic the identity cannot see, and the partition count of the others (nil without storage).
func TxnCommitTopics(ctx context.Context, id kafka.Identity, topics []string) (codes map[string]int16, parts map[string]int32) {
	return topicCodes(ctx, id, topics)
}

// CommitStaged commits the offsets a committed transaction staged for this manager's groups, as
// an OffsetCommit would (one record each, kept once the log holds them), without a member check:
// the check was made when they were staged. A group it does not have is created. Committing the
// same offsets again (the end of a transaction written a second time) changes nothing a reader
// could tell.
func (m *Manager) CommitStaged(offsets []record.TxnOffset) error {
	if len(offsets) == 0 {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	now := m.clk.Now()
	byGroup := map[string][]record.Record{}
	var order []string
	for _, o := range offsets {
		oc := record.OffsetCommit{Group: o.Group, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset,
			LeaderEpoch: o.LeaderEpoch, Metadata: o.Metadata, Expire: now.Add(m.cfg.OffsetRetention)}
		if byGroup[o.Group] == nil {
			order = append(order, o.Group)
		}
		byGroup[o.Group] = append(byGroup[o.Group], record.Record{Type: record.TypeOffsetCommit, OffsetCommit: &oc})
	}
	m.mu.Unlock()
	for _, name := range order {
		if err := m.commitRecords(name, byGroup[name]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) commitRecords(name string, recs []record.Record) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrNotCoordinator
	}
	g := m.groups[name]
	if g == nil {
		g = newGroup(name)
		g.emptySince = m.clk.Now()
		m.groups[name] = g
	}
	wait, done := g.takeTurn()
	m.mu.Unlock()
	defer done()
	err := m.append(wait, recs)
	m.mu.Lock()
	defer m.mu.Unlock()
	if code := m.journalCode(err); code != 0 {
		m.dropIfUnused(g)
		return kerr.ErrorForCode(code)
	}
	for _, r := range recs {
		oc := *r.OffsetCommit
		g.offsets[tp{oc.Topic, oc.Partition}] = oc
	}
	return nil
}
