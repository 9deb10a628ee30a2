package fleet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The lease of a fleet is a contract between gateways of different builds: these vectors pin it.
func TestLeaseVectors(t *testing.T) {
	for _, c := range []struct {
		members []uint32
		want    string
	}{
		{[]uint32{0}, "[0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]"},
		{[]uint32{0, 1}, "[0 1 1 0 0 1 0 1 0 0 0 1 1 1 0 1]"},
		{[]uint32{0, 1, 2}, "[2 2 1 2 0 1 0 2 2 0 0 1 1 1 0 1]"},
		{[]uint32{0, 1, 2, 3}, "[2 2 3 2 0 1 0 2 3 0 3 1 1 3 0 1]"},
	} {
		if got := fmt.Sprint(leases(c.members)); got != c.want {
			t.Errorf("lease of %v: %s, want %s", c.members, got, c.want)
		}
	}
	if _, ok := Lease(nil, 0); ok {
		t.Fatal("a lease with no members")
	}
}

func leases(members []uint32) []uint32 {
	out := make([]uint32, Partitions)
	for p := range Partitions {
		out[p], _ = Lease(members, p)
	}
	return out
}

// A member leaving moves only its own partitions; a member joining takes partitions only for
// itself; the members' order does not matter. On random memberships.
func TestLeaseMovesOnlyWhatItMust(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + r.IntN(12)
		var members []uint32
		for len(members) < n {
			m := uint32(r.IntN(40))
			if !slices.Contains(members, m) {
				members = append(members, m)
			}
		}
		before := leases(members)
		shuffled := slices.Clone(members)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if fmt.Sprint(leases(shuffled)) != fmt.Sprint(before) {
			t.Fatalf("order changed the lease of %v", members)
		}
		gone := members[r.IntN(n)]
		if n > 1 {
			after := leases(slices.DeleteFunc(slices.Clone(members), func(m uint32) bool { return m == gone }))
			for p := range Partitions {
				if before[p] != gone && after[p] != before[p] {
					t.Fatalf("%v without %d moved partition %d from %d to %d", members, gone, p, before[p], after[p])
				}
				if after[p] == gone {
					t.Fatalf("partition %d stayed with the departed %d", p, gone)
				}
			}
		}
		joined := uint32(40 + r.IntN(10))
		after := leases(append(slices.Clone(members), joined))
		for p := range Partitions {
			if after[p] != before[p] && after[p] != joined {
				t.Fatalf("%v joined by %d moved partition %d from %d to %d", members, joined, p, before[p], after[p])
			}
		}
		held := 0
		for _, m := range members {
			held += len(Held(members, m))
		}
		if held != Partitions || Held(members, 99) != nil {
			t.Fatalf("Held over %v covers %d partitions", members, held)
		}
	}
}

// The first members of a fleet (Iggy's ids 0..n-1) hold fair shares.
func TestLeaseShares(t *testing.T) {
	for n, want := range map[int]string{2: "[8 8]", 3: "[5 6 5]", 4: "[4 4 4 4]"} {
		var members []uint32
		for i := range n {
			members = append(members, uint32(i))
		}
		var shares []int
		for _, m := range members {
			shares = append(shares, len(Held(members, m)))
		}
		if fmt.Sprint(shares) != want {
			t.Errorf("%d members hold %v, want %s", n, shares, want)
		}
	}
}
