package inspect

import "github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"

// validity decides which records are valid exactly as record.State.Apply does, keeping only the
// newest claim: `inspect` needs no group state to show a million records, so it does not pay
// for the maps of a full fold (nor hold them: its memory stays flat however long the log).
// TestValidityAgreesWithState checks the two agree on random logs.
type validity struct {
	claim   uint64
	applied uint64
}

func (v *validity) apply(r *record.Record) bool {
	first := v.applied == 0
	v.applied++
	if r.Type == record.TypeClaim {
		if r.ClaimInfo == nil || r.Claim <= v.claim {
			return false
		}
		v.claim = r.Claim
		return true
	}
	firstCheckpoint := first && r.Type == record.TypeCheckpoint && v.claim == 0
	if r.Claim != v.claim && !firstCheckpoint {
		return false
	}
	var ok bool
	switch r.Type {
	case record.TypeGroup:
		ok = r.Group != nil
	case record.TypeOffsetCommit:
		ok = r.OffsetCommit != nil
	case record.TypeGroupDeleted:
		ok = r.GroupDeleted != nil
	case record.TypeOffsetDeleted:
		ok = r.OffsetDeleted != nil
	case record.TypeCheckpoint:
		ok = r.Checkpoint != nil
		if ok && first {
			v.claim = r.Claim
		}
	}
	return ok
}
