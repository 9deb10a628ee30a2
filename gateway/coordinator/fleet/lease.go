package fleet

import "slices"

// Lease is the lease rule: which member of LeaseGroup holds log partition p, given the members
// (Iggy member ids) of the group at one instant. It is rendezvous hashing: every member scores
// every partition with a fixed mix of (partition, member), and the highest score wins, the
// lower member id on a tie. So a member leaving moves only the partitions it held, each to its
// next-best member, and a member joining takes only the partitions it now wins, about a fair
// share, from whoever held them: no other partition moves. Iggy's own assignment (which moves
// every partition on a departure) is not used. ok is false with no members.
func Lease(members []uint32, p int) (member uint32, ok bool) {
	var best uint64
	for _, m := range members {
		s := score(p, m)
		if !ok || s > best || s == best && m < member {
			member, best, ok = m, s, true
		}
	}
	return member, ok
}

// Held lists, in order, the log partitions member holds among members.
func Held(members []uint32, member uint32) []int {
	if !slices.Contains(members, member) {
		return nil
	}
	var out []int
	for p := range Partitions {
		if m, _ := Lease(members, p); m == member {
			out = append(out, p)
		}
	}
	return out
}

// leaseSeed was chosen, once, as the seed with which fleets of 2 to 6 members (ids 0..n-1, the
// slots Iggy gives the first members) and each of them with one member gone hold the fairest
// shares of the 16 partitions: 8/8, 5/6/5, 4/4/4/4. Fixed forever, since every gateway of a
// fleet must compute the same lease (TestLeaseVectors pins it).
const leaseSeed = 13568

// score is SplitMix64's finalizer applied to the partition, then to that mixed with the member.
func score(p int, m uint32) uint64 { return mix(mix(leaseSeed^uint64(p)) ^ uint64(m)) }

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
