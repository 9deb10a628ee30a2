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
	if a := Assign(members); fmt.Sprint(a[:]) != fmt.Sprint(out) {
		panic(fmt.Sprintf("Lease %v and Assign %v differ", out, a))
	}
	return out
}

// On random memberships of 2 to 16 (Iggy's member ids are small slots): the members' order does
// not matter; every member holds ⌊16/n⌋ or ⌈16/n⌉ partitions; a departed member keeps none; a
// departure moves few partitions besides the departed member's, and its return moves them back.
// The figures are logged and bounded by what Assign's doc states.
func TestLeaseMovesFew(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 2; n <= Partitions; n++ {
		extra, worst, trials := 0, 0, 0
		for range 100 {
			var members []uint32
			for len(members) < n {
				m := uint32(r.IntN(32))
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
			held := 0
			for _, m := range members {
				h := len(Held(members, m))
				if h < Partitions/n || h > (Partitions+n-1)/n {
					t.Fatalf("%v: %d holds %d partitions", members, m, h)
				}
				held += h
			}
			if held != Partitions || Held(members, 99) != nil {
				t.Fatalf("Held over %v covers %d partitions", members, held)
			}
			gone := members[r.IntN(n)]
			after := leases(slices.DeleteFunc(slices.Clone(members), func(m uint32) bool { return m == gone }))
			moved := 0
			for p := range Partitions {
				if after[p] == gone {
					t.Fatalf("partition %d stayed with the departed %d", p, gone)
				}
				if before[p] != gone && after[p] != before[p] {
					moved++
				}
			}
			extra += moved
			worst = max(worst, moved)
			trials++
		}
		avg := float64(extra) / float64(trials)
		t.Logf("%2d members: a departure moves %.2f other partitions on average, %d at most", n, avg, worst)
		if avg > 2.5 || worst > 8 {
			t.Errorf("%d members: a departure moves %.2f other partitions on average, %d at most; Assign's doc says at most 2.5 and 8", n, avg, worst)
		}
	}
}

// The first members of a fleet (Iggy's ids 0..n-1) hold even shares, for every size up to 16.
func TestLeaseShares(t *testing.T) {
	for n := 1; n <= Partitions; n++ {
		var members []uint32
		for i := range n {
			members = append(members, uint32(i))
		}
		shares := map[int]int{}
		for _, m := range members {
			shares[len(Held(members, m))]++
		}
		lo, hi := Partitions/n, (Partitions+n-1)/n
		if lo == hi && shares[lo] != n || lo != hi && (shares[lo]+shares[hi] != n || shares[hi] != Partitions%n) {
			t.Errorf("%d members hold shares %v, want %d of %d and the rest %d", n, shares, Partitions%n, hi, lo)
		}
	}
}
