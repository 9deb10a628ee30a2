package consumergroup

import (
	"bytes"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
)

// parts is a set of partitions by topic id, the form the assignors and the reconciliation work
// on; record.Assignment is its canonical, encodable form.
type parts map[[16]byte]map[int32]struct{}

func fromRecord(a record.Assignment) parts {
	out := make(parts, len(a))
	for _, tp := range a {
		s := make(map[int32]struct{}, len(tp.Partitions))
		for _, p := range tp.Partitions {
			s[p] = struct{}{}
		}
		out[tp.TopicID] = s
	}
	return out
}

// fromOwned is what a heartbeat says its member owns; nil when it did not say.
func fromOwned(ts []kmsg.ConsumerGroupHeartbeatRequestTopic) parts {
	if ts == nil {
		return nil
	}
	out := make(parts, len(ts))
	for _, t := range ts {
		for _, p := range t.Partitions {
			out.add(t.TopicID, p)
		}
	}
	return out
}

func (s parts) add(id [16]byte, p int32) {
	ps := s[id]
	if ps == nil {
		ps = make(map[int32]struct{})
		s[id] = ps
	}
	ps[p] = struct{}{}
}

func (s parts) has(id [16]byte, p int32) bool {
	_, ok := s[id][p]
	return ok
}

// record returns the canonical form: topics by id, partitions ascending, no empty topic; nil
// for an empty set.
func (s parts) record() record.Assignment {
	var out record.Assignment
	for _, id := range slices.SortedFunc(maps.Keys(s), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) }) {
		if len(s[id]) == 0 {
			continue
		}
		out = append(out, record.TopicPartitions{TopicID: id, Partitions: slices.Sorted(maps.Keys(s[id]))})
	}
	return out
}

// count is how many partitions an assignment holds.
func count(a record.Assignment) int {
	n := 0
	for _, tp := range a {
		n += len(tp.Partitions)
	}
	return n
}

// contains reports whether a holds partition p of topic id.
func contains(a record.Assignment, id [16]byte, p int32) bool {
	i, ok := slices.BinarySearchFunc(a, id, func(tp record.TopicPartitions, id [16]byte) int { return bytes.Compare(tp.TopicID[:], id[:]) })
	if !ok {
		return false
	}
	_, ok = slices.BinarySearch(a[i].Partitions, p)
	return ok
}

// intersects reports whether owned holds any partition of a; an owned set that was not sent
// (nil) is taken to hold them all, so a member that did not say what it owns is not assumed to
// have revoked anything.
func intersects(owned parts, a record.Assignment) bool {
	if owned == nil {
		return len(a) > 0
	}
	for _, tp := range a {
		for _, p := range tp.Partitions {
			if owned.has(tp.TopicID, p) {
				return true
			}
		}
	}
	return false
}

// subset reports whether every partition of owned is in a; an owned set not sent is not.
func subset(owned parts, a record.Assignment) bool {
	if owned == nil {
		return false
	}
	for id, ps := range owned {
		for p := range ps {
			if !contains(a, id, p) {
				return false
			}
		}
	}
	return true
}

// toHeartbeat is an assignment as a heartbeat answer carries it.
func toHeartbeat(a record.Assignment) *kmsg.ConsumerGroupHeartbeatResponseAssignment {
	out := new(kmsg.ConsumerGroupHeartbeatResponseAssignment)
	out.Default()
	out.Topics = make([]kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic, 0, len(a))
	for _, tp := range a {
		t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
		t.TopicID = tp.TopicID
		t.Partitions = slices.Clone(tp.Partitions)
		out.Topics = append(out.Topics, t)
	}
	return out
}
