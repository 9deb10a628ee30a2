package fleet

import (
	"slices"
	"sort"
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
// not matter; at least one): rendezvous hashing with bounded loads. Every member scores every
// partition with a fixed mix of (partition, member); the (partition, member) pairs are taken
// from the highest score down, and a pair gives the partition to the member unless the
// partition is taken or the member is full. With n members, r = 16 mod n of them may hold
// ⌈16/n⌉ partitions (the first to reach ⌊16/n⌋ and take one more) and the others ⌊16/n⌋, so the
// shares are as even as they can be: 8/8, 6/5/5, 4/4/4/4, 2 each of 8, one each of 16.
//
// Plain rendezvous hashing moves only the departed member's partitions on a departure but holds
// uneven shares (2, 3, 2, 1, 4, 3, 0, 1 among 8 gateways); the bound costs a few moves more.
// Measured by TestLeaseMovesFew over random fleets of 2 to 16: a departure moves, besides the
// departed member's partitions, 0 to 2.5 others on average (at most 8 of 16), and a return moves
// the same back.
func Assign(members []uint32) [Partitions]uint32 {
	var out [Partitions]uint32
	n := len(members)
	if n == 0 {
		return out
	}
	type pair struct {
		s uint64
		p int
		m uint32
	}
	pairs := make([]pair, 0, Partitions*n)
	for p := range Partitions {
		for _, m := range members {
			pairs = append(pairs, pair{score(p, m), p, m})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		a, b := pairs[i], pairs[j]
		if a.s != b.s {
			return a.s > b.s
		}
		if a.p != b.p {
			return a.p < b.p
		}
		return a.m < b.m
	})
	q, r := Partitions/n, Partitions%n
	load := make(map[uint32]int, n)
	var taken [Partitions]bool
	big, left := 0, Partitions
	for _, x := range pairs {
		if left == 0 {
			break
		}
		if taken[x.p] {
			continue
		}
		switch l := load[x.m]; {
		case l < q:
		case l == q && big < r:
			big++
		default:
			continue
		}
		load[x.m]++
		taken[x.p], out[x.p] = true, x.m
		left--
	}
	return out
}

// leaseSeed was chosen, once, as the seed with which fleets of 2 to 6 members (ids 0..n-1, the
// slots Iggy gives the first members) and each of them with one member gone held the fairest
// shares of the 16 partitions under plain rendezvous hashing. Fixed forever, since every gateway
// of a fleet must compute the same lease (TestLeaseVectors pins it).
const leaseSeed = 13568

// score is SplitMix64's finalizer applied to the partition, then to that mixed with the member.
func score(p int, m uint32) uint64 { return mix(mix(leaseSeed^uint64(p)) ^ uint64(m)) }

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
