package kafka

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every topic's partitions are spread as evenly as they can be over the leaders, whatever order
// the leaders are given in.
func TestPartitionLeadersEven(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		n := 1 + rnd.IntN(9)
		parts := int32(1 + rnd.IntN(64))
		leaders := randomBrokers(rnd, n)
		topic := fmt.Sprintf("topic-%d", rnd.Int())
		got := partitionLeaders(topic, parts, leaders)
		shuffled := slices.Clone(leaders)
		rnd.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again := partitionLeaders(topic, parts, shuffled); !slices.Equal(got, again) {
			t.Fatalf("%s over %v: %v, and over the same leaders reordered %v", topic, leaders, got, again)
		}
		load := map[int32]int32{}
		for _, l := range got {
			load[l]++
		}
		lo, hi := parts/int32(n), (parts+int32(n)-1)/int32(n)
		for _, b := range leaders {
			if l := load[b.NodeID]; l < lo || l > hi {
				t.Fatalf("%s, %d partitions over %d leaders: node %d leads %d, want %d to %d (%v)", topic, parts, n, b.NodeID, l, lo, hi, got)
			}
		}
	}
}

// When a gateway leaves the leaders, its partitions move, and few others: measured over random
// fleets and topics (the figure is logged), and bounded well below what a round-robin over the
// sorted leaders moves (about n-1 of every n partitions).
func TestPartitionLeadersMoveFew(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	var own, others, total int
	for range 500 {
		n := 2 + rnd.IntN(7)
		parts := int32(n + rnd.IntN(60))
		leaders := randomBrokers(rnd, n)
		topic := fmt.Sprintf("topic-%d", rnd.Int())
		before := partitionLeaders(topic, parts, leaders)
		gone := leaders[rnd.IntN(n)].NodeID
		rest := slices.DeleteFunc(slices.Clone(leaders), func(b Broker) bool { return b.NodeID == gone })
		after := partitionLeaders(topic, parts, rest)
		for p := range before {
			switch {
			case before[p] == gone:
				own++
			case before[p] != after[p]:
				others++
			}
		}
		total += int(parts)
	}
	t.Logf("a departure moved the departed gateway's %d partitions and %d others, of %d (%.1f%% of the others)", own, others, total, 100*float64(others)/float64(total-own))
	if float64(others) > 0.1*float64(total-own) {
		t.Fatalf("a departure moved %d of the %d partitions the departed gateway did not lead", others, total-own)
	}
}

func randomBrokers(rnd *rand.Rand, n int) []Broker {
	var out []Broker
	for len(out) < n {
		id := int32(1 + rnd.IntN(40))
		if !slices.ContainsFunc(out, func(b Broker) bool { return b.NodeID == id }) {
			out = append(out, Broker{NodeID: id})
		}
	}
	return out
}
