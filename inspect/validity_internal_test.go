package inspect

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// The light validity rule of inspect and the full fold of record.State agree on every record
// of random logs: claims up and down, stale and future writers, bodies missing, checkpoints
// first and later.
func TestValidityAgreesWithState(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		st, v := record.NewState(), &validity{}
		for off := range uint64(200) {
			r := randomRecord(rng)
			want := st.Apply(off, r)
			if got := v.apply(&r); got != want {
				t.Fatalf("seed %d offset %d: %s claim %d: validity %v, State %v", seed, off, r.Type, r.Claim, got, want)
			}
		}
	}
}

func randomRecord(rng *rand.Rand) record.Record {
	r := record.Record{Type: record.Type(1 + rng.IntN(7)), Claim: uint64(rng.IntN(5))}
	body := rng.IntN(10) > 0
	switch r.Type {
	case record.TypeClaim:
		if body {
			r.ClaimInfo = &record.Claim{Number: r.Claim, Node: 1}
		}
	case record.TypeGroup:
		if body {
			r.Group = &record.Group{Name: "g"}
		}
	case record.TypeOffsetCommit:
		if body {
			r.OffsetCommit = &record.OffsetCommit{Group: "g", Topic: "t"}
		}
	case record.TypeGroupDeleted:
		if body {
			r.GroupDeleted = &record.GroupDeleted{Group: "g"}
		}
	case record.TypeOffsetDeleted:
		if body {
			r.OffsetDeleted = &record.OffsetDeleted{Group: "g", Topic: "t"}
		}
	case record.TypeCheckpoint:
		if body {
			r.Checkpoint = &record.Checkpoint{Through: 0}
		}
	}
	return r
}
