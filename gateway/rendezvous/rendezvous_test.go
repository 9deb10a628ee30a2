package rendezvous

import (
	"fmt"
	"testing"
)

func testScore(item int, m uint32) uint64 { return Mix(Mix(uint64(item)) ^ uint64(m)) }

// The shares are as even as they can be, and every item has a holder among the members.
func TestAssignEven(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for items := 0; items <= 40; items++ {
			members := make([]uint32, n)
			for i := range members {
				members[i] = uint32(3*i + 1)
			}
			got := Assign(items, members, testScore)
			if len(got) != items {
				t.Fatalf("%d items over %d members: %d holders", items, n, len(got))
			}
			load := map[uint32]int{}
			for _, m := range got {
				load[m]++
			}
			for _, m := range members {
				if l := load[m]; l < items/n || l > (items+n-1)/n {
					t.Fatalf("%d items over %d members: member %d holds %d (%v)", items, n, m, l, got)
				}
			}
			if len(load) > n {
				t.Fatalf("%d items over %d members: holders outside the members %v", items, n, got)
			}
		}
	}
}

// The members' order does not change the answer.
func TestAssignOrderFree(t *testing.T) {
	a := Assign(16, []uint32{5, 1, 9, 2}, testScore)
	b := Assign(16, []uint32{2, 9, 1, 5}, testScore)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("%v and %v", a, b)
	}
	if Assign(3, nil, testScore) != nil || Assign(0, []uint32{1}, testScore) != nil {
		t.Fatal("an assignment of nothing")
	}
}
