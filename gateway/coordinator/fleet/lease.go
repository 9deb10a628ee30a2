package fleet

import (
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/rendezvous"
)

// Lease is the lease rule: which member of LeaseGroup holds log partition p, given the live
// members (Iggy member ids) of the group at one instant. ok is false with no members. It is
// Assign's answer for p; Held is Assign's answer for one member.
func Lease(members []uint32, p int) (member uint32, ok bool) {
	if len(members) == 0 || p < 0 || p >= Partitions {
		return 0, false
	}
	a := Assign(members)
	return a[p], true
}

// Held lists, in order, the log partitions member holds among members.
func Held(members []uint32, member uint32) []int {
	if !slices.Contains(members, member) {
		return nil
	}
	a := Assign(members)
	var out []int
	for p, m := range a {
		if m == member {
			out = append(out, p)
		}
	}
	return out
}

// Assign is the holder of every log partition among members (none may repeat; the order does
// not matter; at least one): the rendezvous rule (package rendezvous) with this package's score.
// With n members the shares are 8/8, 6/5/5, 4/4/4/4, 2 each of 8, one each of 16.
//
// Plain rendezvous hashing moves only the departed member's partitions on a departure but holds
// uneven shares (2, 3, 2, 1, 4, 3, 0, 1 among 8 gateways); the bound costs a few moves more.
// Measured by TestLeaseMovesFew over random fleets of 2 to 16: a departure moves, besides the
// departed member's partitions, 0 to 2.5 others on average (at most 8 of 16), and a return moves
// the same back.
func Assign(members []uint32) [Partitions]uint32 {
	var out [Partitions]uint32
	copy(out[:], rendezvous.Assign(Partitions, members, score))
	return out
}

// leaseSeed was chosen, once, as the seed with which fleets of 2 to 6 members (ids 0..n-1, the
// slots Iggy gives the first members) and each of them with one member gone held the fairest
// shares of the 16 partitions under plain rendezvous hashing. Fixed forever, since every gateway
// of a fleet must compute the same lease (TestLeaseVectors pins it).
const leaseSeed = 13568

// score is SplitMix64's finalizer applied to the partition, then to that mixed with the member.
func score(p int, m uint32) uint64 {
	return rendezvous.Mix(rendezvous.Mix(leaseSeed^uint64(p)) ^ uint64(m))
}
