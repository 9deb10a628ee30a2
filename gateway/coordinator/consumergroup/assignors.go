package consumergroup

import (
	"cmp"
	"slices"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// The server-side assignors Kafka 4 offers consumer groups (group.consumer.assignors), the
// first being the default.
const (
	Uniform = "uniform"
	Range   = "range"
)

// Assignors are the assignor names a member may ask for, the default first.
var Assignors = []string{Uniform, Range}

// knownAssignor reports whether name is one of Assignors.
func knownAssignor(name string) bool { return slices.Contains(Assignors, name) }

// spec is one member as an assignor sees it.
type spec struct {
	id, instance string
	topics       map[string]bool // the subscribed topics that exist
	previous     record.Assignment
}

// tpart is one partition of one topic.
type tpart struct {
	topic string
	id    [16]byte
	p     int32
}

// allParts are the partitions of every topic some member subscribes to, by topic name and
// partition.
func allParts(specs []spec, topics []record.TopicMeta) []tpart {
	var out []tpart
	for _, t := range topics {
		wanted := false
		for i := range specs {
			if specs[i].topics[t.Name] {
				wanted = true
				break
			}
		}
		if !wanted {
			continue
		}
		for p := range t.Partitions {
			out = append(out, tpart{t.Name, t.ID, p})
		}
	}
	return out
}

// assignUniform spreads the partitions so that every member owns as many as it can, within one
// of the others subscribed to the same topics, and moves as few as that allows: a partition
// stays with the member whose target held it while that member still subscribes to its topic
// and is not above its share. This is what Kafka's uniform assignor promises (balance first,
// then stickiness); the order of the moves is ours.
func assignUniform(specs []spec, topics []record.TopicMeta) map[string]parts {
	all := allParts(specs, topics)
	owner := make(map[tpart]int, len(all))
	counts := make([]int, len(specs))
	exists := make(map[tpart]bool, len(all))
	for _, tp := range all {
		exists[tp] = true
	}
	byID := make(map[[16]byte]string, len(topics))
	for _, t := range topics {
		byID[t.ID] = t.Name
	}
	// Keep what each member's target held, where it still can.
	for i := range specs {
		for _, tp := range specs[i].previous {
			name, ok := byID[tp.TopicID]
			if !ok || !specs[i].topics[name] {
				continue
			}
			for _, p := range tp.Partitions {
				k := tpart{name, tp.TopicID, p}
				if _, taken := owner[k]; taken || !exists[k] {
					continue
				}
				owner[k] = i
				counts[i]++
			}
		}
	}
	// fewest is the member subscribed to tp's topic that owns the fewest partitions, the first
	// in member order on a tie; -1 when none subscribes.
	fewest := func(tp tpart) int {
		best := -1
		for i := range specs {
			if specs[i].topics[tp.topic] && (best < 0 || counts[i] < counts[best]) {
				best = i
			}
		}
		return best
	}
	for _, tp := range all {
		if _, ok := owner[tp]; ok {
			continue
		}
		if i := fewest(tp); i >= 0 {
			owner[tp] = i
			counts[i]++
		}
	}
	// Move partitions from members with two or more above another that could own them, until
	// none is: every move lowers the sum of the squared counts, so this ends.
	for moved := true; moved; {
		moved = false
		for _, tp := range all {
			from := owner[tp]
			to := fewest(tp)
			if to >= 0 && counts[from] > counts[to]+1 {
				owner[tp] = to
				counts[from]--
				counts[to]++
				moved = true
			}
		}
	}
	out := make(map[string]parts, len(specs))
	for i := range specs {
		out[specs[i].id] = make(parts)
	}
	for tp, i := range owner {
		out[specs[i].id].add(tp.id, tp.p)
	}
	return out
}

// rangeOrder is the order the range assignor hands out ranges in: static members by instance
// id first, then the others by member id, so that static members keep their ranges across
// restarts (new member ids).
func rangeOrder(specs []spec) []spec {
	out := slices.Clone(specs)
	slices.SortFunc(out, func(a, b spec) int {
		switch {
		case a.instance != "" && b.instance != "":
			return cmp.Compare(a.instance, b.instance)
		case a.instance != "":
			return -1
		case b.instance != "":
			return 1
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

// assignRange is Kafka's range assignor: for every topic, the members subscribed to it, in
// rangeOrder, take consecutive ranges of its partitions, the first ones one more when the count
// does not divide. Members subscribed to the same topics of equal partition counts so own the
// same partition numbers of each (co-partitioning).
func assignRange(specs []spec, topics []record.TopicMeta) map[string]parts {
	ordered := rangeOrder(specs)
	out := make(map[string]parts, len(specs))
	for i := range specs {
		out[specs[i].id] = make(parts)
	}
	for _, t := range topics {
		var subs []string
		for _, s := range ordered {
			if s.topics[t.Name] {
				subs = append(subs, s.id)
			}
		}
		if len(subs) == 0 {
			continue
		}
		quota, extra := int(t.Partitions)/len(subs), int(t.Partitions)%len(subs)
		next := int32(0)
		for i, id := range subs {
			n := quota
			if i < extra {
				n++
			}
			for range n {
				out[id].add(t.ID, next)
				next++
			}
		}
	}
	return out
}
