package consumergroup

import (
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// reconcile moves member m one step toward its target, as Kafka's CurrentAssignmentBuilder
// does: it never gives a member a partition another member still owns (held reports the
// partitions owned by other members), and a member asked to revoke partitions stays at its
// epoch until a heartbeat shows it no longer owns them (owned, nil when the heartbeat did not
// say). So a partition is never owned by two members: revocation comes before assignment.
func reconcile(m record.ConsumerMember, targetEpoch int32, held func(id [16]byte, p int32) bool, owned parts) record.ConsumerMember {
	switch m.State {
	case record.MemberStable:
		if m.Epoch == targetEpoch {
			return m
		}
		return nextAssignment(m, m.Epoch, targetEpoch, held, owned)
	case record.MemberUnrevokedPartitions:
		if intersects(owned, m.PendingRevocation) {
			return m
		}
		return nextAssignment(m, m.Epoch, targetEpoch, held, owned)
	case record.MemberUnreleasedPartitions:
		return nextAssignment(m, m.Epoch, targetEpoch, held, owned)
	}
	return m
}

// nextAssignment computes the member's next state from what it is assigned and its target:
//
//	keep     = assigned ∩ target
//	revoke   = assigned − keep
//	assign   = target − keep − the partitions other members still own
//
// If it must revoke partitions it still owns, it stays at its epoch (UNREVOKED_PARTITIONS) with
// keep assigned and revoke pending. Otherwise it moves to the target epoch with keep and assign,
// UNRELEASED_PARTITIONS while part of its target is still owned by others, else STABLE.
func nextAssignment(m record.ConsumerMember, epoch, targetEpoch int32, held func(id [16]byte, p int32) bool, owned parts) record.ConsumerMember {
	target := fromRecord(m.Target)
	assigned := fromRecord(m.Assigned)
	keep, revoke, assign := make(parts), make(parts), make(parts)
	unreleased := false
	for id, ps := range assigned {
		for p := range ps {
			if target.has(id, p) {
				keep.add(id, p)
			} else {
				revoke.add(id, p)
			}
		}
	}
	for id, ps := range target {
		for p := range ps {
			switch {
			case keep.has(id, p):
			case held(id, p):
				unreleased = true
			default:
				assign.add(id, p)
			}
		}
	}
	next := m
	revoking := revoke.record()
	if len(revoking) > 0 && intersects(owned, revoking) {
		next.State = record.MemberUnrevokedPartitions
		setEpoch(&next, epoch)
		next.Assigned = withEpochs(keep.record(), m.Assigned, next.Epoch)
		next.PendingRevocation = revoking
		return next
	}
	for id, ps := range assign {
		for p := range ps {
			keep.add(id, p)
		}
	}
	next.State = record.MemberStable
	if unreleased {
		next.State = record.MemberUnreleasedPartitions
	}
	setEpoch(&next, targetEpoch)
	next.Assigned = withEpochs(keep.record(), m.Assigned, next.Epoch)
	next.PendingRevocation = nil
	return next
}

// withEpochs gives every partition of a the epoch it was assigned at (KIP-1251): the one it had
// in before when the member kept it, else epoch, the member epoch it is given at now.
func withEpochs(a, before record.Assignment, epoch int32) record.Assignment {
	for i := range a {
		a[i].Epochs = make([]int32, len(a[i].Partitions))
		for j, p := range a[i].Partitions {
			e, ok := assignedEpoch(before, a[i].TopicID, p)
			if !ok {
				e = epoch
			}
			a[i].Epochs[j] = e
		}
	}
	return a
}

// assignedEpoch is the epoch partition p of topic id was assigned at in a, a member's Assigned
// (0 when a holds no epochs); ok is false when a does not hold the partition.
func assignedEpoch(a record.Assignment, id [16]byte, p int32) (int32, bool) {
	for _, tp := range a {
		if tp.TopicID != id {
			continue
		}
		for j, q := range tp.Partitions {
			if q == p {
				if j < len(tp.Epochs) {
					return tp.Epochs[j], true
				}
				return 0, true
			}
		}
	}
	return 0, false
}

// setEpoch moves a member to epoch e, keeping the one it leaves as its previous epoch (the one a
// member whose answer was lost still heartbeats with).
func setEpoch(m *record.ConsumerMember, e int32) {
	if m.Epoch != e {
		m.PreviousEpoch = m.Epoch
		m.Epoch = e
	}
}
