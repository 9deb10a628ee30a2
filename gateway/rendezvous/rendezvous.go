// Package rendezvous owns the one rule by which a fleet of gateways shares out numbered items
// without talking: rendezvous hashing with bounded loads. The coordinator's lease uses it for the
// 16 log partitions (package fleet), and the Kafka listener for the leaders Metadata names for a
// topic's partitions. Every gateway that knows the same members computes the same answer.
//
// Every member scores every item; (item, member) pairs are taken from the highest score down,
// and a pair gives the item to the member unless the item is taken or the member is full. With
// n members and k items, r = k mod n members may hold ⌈k/n⌉ items (the first ones to reach ⌊k/n⌋
// and take one more) and the others ⌊k/n⌋: the shares are as even as they can be. When a member
// goes, its items move, and a few others besides when the bound moves (plain rendezvous
// hashing moves none of the others but gives uneven shares, 4/1/1 of 6 items over 3 members).
package rendezvous

import "sort"

// Assign is the holder of each of items items among members (none may repeat; order does not
// matter), scored by score. It returns nil with no members or no items.
func Assign(items int, members []uint32, score func(item int, member uint32) uint64) []uint32 {
	n := len(members)
	if n == 0 || items <= 0 {
		return nil
	}
	out := make([]uint32, items)
	if n == 1 {
		for i := range out {
			out[i] = members[0]
		}
		return out
	}
	type pair struct {
		s    uint64
		item int
		m    uint32
	}
	pairs := make([]pair, 0, items*n)
	for i := range items {
		for _, m := range members {
			pairs = append(pairs, pair{score(i, m), i, m})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		a, b := pairs[i], pairs[j]
		if a.s != b.s {
			return a.s > b.s
		}
		if a.item != b.item {
			return a.item < b.item
		}
		return a.m < b.m
	})
	q, r := items/n, items%n
	load := make(map[uint32]int, n)
	taken := make([]bool, items)
	big, left := 0, items
	for _, x := range pairs {
		if left == 0 {
			break
		}
		if taken[x.item] {
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
		taken[x.item], out[x.item] = true, x.m
		left--
	}
	return out
}

// Mix is SplitMix64's finalizer: the scores' mixing function.
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
