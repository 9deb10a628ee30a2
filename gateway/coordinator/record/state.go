package record

import (
	"hash/fnv"
	"slices"
	"strings"
	"time"
)

// Partitions is the number of partitions of the coordinator log.
const Partitions = 16

// Partition is the log partition that holds a group: FNV-1a 32 over the UTF-8 group id, modulo
// Partitions. Every gateway and every operator tool must compute the same value.
func Partition(group string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(group))
	return int(h.Sum32() % Partitions)
}

// TopicPartition names one committed offset inside a group.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// groupState is one group's entry: its last snapshot (nil for a group that only has offsets,
// the simple-consumer pattern) or, for a KIP-848 consumer group, the group as its records left
// it, and its offsets, so a group deletion drops all at once. A name is one kind of group at a
// time: a consumer-group record replaces a classic snapshot of the same name and the other way
// round (Kafka converts an empty group of one kind into the other), the offsets stay.
type groupState struct {
	group   *Group
	cgroup  *ConsumerGroup
	offsets map[TopicPartition]OffsetCommit
}

// offsetMarker remembers a deleted offset until a checkpoint covers it.
type offsetMarker struct {
	Group string
	TopicPartition
}

// State is the fold of one log partition's records in log order: the newest claim, and the
// groups and offsets that valid records left. It is pure (no I/O, no clock) so the coordinator's
// replay, its journal's read-back and the operator tools agree on what the log says.
//
// A State starts either at the start of the partition or at a checkpoint record (the first
// record it is given); a checkpoint replaces what it held. Deletion markers, which say that a
// group or offset was deleted by a record after the last checkpoint, are dropped once a
// checkpoint covers them, so memory and checkpoint size follow the live state.
//
// Not safe for concurrent use.
type State struct {
	validity    Validity
	claimNode   int32
	claimAddr   string
	claimOffset uint64

	groups map[string]*groupState
	txns   map[string]Transaction // by transactional id; Dead ones are dropped
	topics map[string]TopicIncarnation
	// txnOffs are the pending txn-offsets, by group and producer id.
	txnOffs    map[txnOffsetsKey]TxnOffsets
	nOffsets   int
	deadGroups map[string]uint64       // group -> log offset of its deletion
	deadOffs   map[offsetMarker]uint64 // offset -> log offset of its deletion

	applied    uint64 // records given to Apply, valid or not
	void       uint64 // records found void
	last       uint64 // offset of the last record applied
	lastChange uint64 // offset of the last valid record that changed groups or offsets
	changed    bool   // lastChange is set

	sinceCheckpoint int       // valid records since the last checkpoint (or the start)
	cpOffset        uint64    // log offset of the last valid checkpoint record
	cpTime          time.Time // its writer's time
	cpSeen          bool
}

// NewState returns the state of an empty partition.
func NewState() *State {
	return &State{
		groups:     make(map[string]*groupState),
		txns:       make(map[string]Transaction),
		topics:     make(map[string]TopicIncarnation),
		txnOffs:    make(map[txnOffsetsKey]TxnOffsets),
		deadGroups: make(map[string]uint64),
		deadOffs:   make(map[offsetMarker]uint64),
	}
}

// Apply folds the record at log offset offset into the state and reports whether it was valid.
// A Claim record is valid when its number is above every claim before it, and becomes the newest
// claim. Any other record is valid only when written under the newest claim; a record with an
// older claim (a fenced writer) or a claim nobody made is void and changes nothing. The one
// exception is a checkpoint given to an empty state, which is how a reader starts at a
// checkpoint: its claim becomes the newest.
func (s *State) Apply(offset uint64, r Record) (valid bool) {
	first := s.applied == 0
	s.applied++
	s.last = offset
	if !s.validity.Apply(&r) {
		s.void++
		return false
	}
	switch r.Type {
	case TypeClaim:
		s.claimNode, s.claimAddr, s.claimOffset = r.ClaimInfo.Node, r.ClaimInfo.Addr, offset
		s.sinceCheckpoint++
		return true
	case TypeGroup:
		g := *r.Group
		gs := s.entry(g.Name)
		gs.group = &g
		gs.cgroup = nil
		delete(s.deadGroups, g.Name)
	case TypeConsumerGroup:
		c := r.ConsumerGroup
		gs := s.entry(c.Name)
		gs.cgroup = MergeConsumerGroup(gs.cgroup, c)
		gs.group = nil
		delete(s.deadGroups, c.Name)
	case TypeOffsetCommit:
		o := r.OffsetCommit
		gs := s.entry(o.Group)
		tp := TopicPartition{o.Topic, o.Partition}
		if _, ok := gs.offsets[tp]; !ok {
			s.nOffsets++
		}
		gs.offsets[tp] = *o
		delete(s.deadGroups, o.Group)
		delete(s.deadOffs, offsetMarker{o.Group, tp})
	case TypeGroupDeleted:
		name := r.GroupDeleted.Group
		if gs, ok := s.groups[name]; ok {
			s.nOffsets -= len(gs.offsets)
			delete(s.groups, name)
		}
		s.deadGroups[name] = offset
	case TypeOffsetDeleted:
		o := r.OffsetDeleted
		tp := TopicPartition{o.Topic, o.Partition}
		if gs, ok := s.groups[o.Group]; ok {
			if _, had := gs.offsets[tp]; had {
				delete(gs.offsets, tp)
				s.nOffsets--
				if gs.group == nil && gs.cgroup == nil && len(gs.offsets) == 0 {
					delete(s.groups, o.Group)
				}
			}
		}
		s.deadOffs[offsetMarker{o.Group, tp}] = offset
	case TypeTransaction:
		t := *r.Transaction
		if t.State == TxnDead {
			delete(s.txns, t.ID)
		} else {
			s.txns[t.ID] = t
		}
	case TypeTopic:
		if t := *r.Topic; t.Gone() {
			delete(s.topics, t.Name)
		} else {
			s.topics[t.Name] = t
		}
	case TypeTxnOffsets:
		o := *r.TxnOffsets
		k := txnOffsetsKey{o.Group, o.ProducerID}
		if o.End == TxnOffsetsPending {
			s.txnOffs[k] = o
		} else {
			delete(s.txnOffs, k)
		}
	case TypeCheckpoint:
		s.applyCheckpoint(offset, r, first)
		return true
	}
	s.lastChange, s.changed = offset, true
	s.sinceCheckpoint++
	return true
}

// applyCheckpoint replaces the state with the checkpoint's. A state that already reflects
// exactly the log through the checkpoint's Through (it was built from the same prefix and no
// valid change came after Through) keeps what it has, which is the same, and only drops its
// covered markers: the writer's own read-back does not rebuild every map every 10,000 records.
func (s *State) applyCheckpoint(offset uint64, r Record, first bool) {
	c := r.Checkpoint
	if first || (s.changed && s.lastChange > c.Through) {
		s.groups = make(map[string]*groupState, len(c.Groups))
		s.nOffsets = 0
		for i := range c.Groups {
			g := c.Groups[i]
			s.entry(g.Name).group = &g
		}
		for i := range c.ConsumerGroups {
			g := c.ConsumerGroups[i]
			s.entry(g.Name).cgroup = &g
		}
		s.txns = make(map[string]Transaction, len(c.Transactions))
		for _, t := range c.Transactions {
			s.txns[t.ID] = t
		}
		s.topics = make(map[string]TopicIncarnation, len(c.Topics))
		for _, t := range c.Topics {
			s.topics[t.Name] = t
		}
		s.txnOffs = make(map[txnOffsetsKey]TxnOffsets, len(c.TxnOffsets))
		for _, o := range c.TxnOffsets {
			s.txnOffs[txnOffsetsKey{o.Group, o.ProducerID}] = o
		}
		for _, o := range c.Offsets {
			gs := s.entry(o.Group)
			tp := TopicPartition{o.Topic, o.Partition}
			if _, ok := gs.offsets[tp]; !ok {
				s.nOffsets++
			}
			gs.offsets[tp] = o
		}
	}
	for g, at := range s.deadGroups {
		if at <= c.Through {
			delete(s.deadGroups, g)
		}
	}
	for m, at := range s.deadOffs {
		if at <= c.Through {
			delete(s.deadOffs, m)
		}
	}
	s.sinceCheckpoint = 0
	s.cpOffset, s.cpTime, s.cpSeen = offset, r.Time, true
}

func (s *State) entry(name string) *groupState {
	gs, ok := s.groups[name]
	if !ok {
		gs = &groupState{offsets: make(map[TopicPartition]OffsetCommit)}
		s.groups[name] = gs
	}
	return gs
}

// Snapshot is what a checkpoint record written now holds: every group snapshot and every offset,
// sorted by group, topic and partition so equal states give equal bytes. Deletion markers are not
// part of it.
func (s *State) Snapshot(through uint64) Checkpoint {
	cp := Checkpoint{Through: through}
	names := make([]string, 0, len(s.groups))
	for name := range s.groups {
		names = append(names, name)
	}
	slices.Sort(names)
	cp.Offsets = make([]OffsetCommit, 0, s.nOffsets)
	for _, name := range names {
		gs := s.groups[name]
		if gs.group != nil {
			cp.Groups = append(cp.Groups, *gs.group)
		}
		if gs.cgroup != nil {
			cp.ConsumerGroups = append(cp.ConsumerGroups, *gs.cgroup)
		}
		start := len(cp.Offsets)
		for _, o := range gs.offsets {
			cp.Offsets = append(cp.Offsets, o)
		}
		slices.SortFunc(cp.Offsets[start:], func(a, b OffsetCommit) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition) - int(b.Partition)
		})
	}
	if len(cp.Offsets) == 0 {
		cp.Offsets = nil
	}
	cp.Transactions = s.Transactions()
	cp.Topics = s.Topics()
	cp.TxnOffsets = s.TxnOffsets()
	return cp
}

// Topics returns the topic incarnations the partition's offsets belong to, by name; nil when it
// holds none.
func (s *State) Topics() []TopicIncarnation {
	if len(s.topics) == 0 {
		return nil
	}
	out := make([]TopicIncarnation, 0, len(s.topics))
	for _, t := range s.topics {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b TopicIncarnation) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// txnOffsetsKey names one producer's pending offsets in one group.
type txnOffsetsKey struct {
	group      string
	producerID int64
}

// TxnOffsets returns every pending txn-offsets (what transactions committed to the
// partition's groups and have not ended), sorted by group and producer id; nil when there is
// none.
func (s *State) TxnOffsets() []TxnOffsets {
	if len(s.txnOffs) == 0 {
		return nil
	}
	out := make([]TxnOffsets, 0, len(s.txnOffs))
	for _, o := range s.txnOffs {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b TxnOffsets) int { return compareTxnOffsets(&a, &b) })
	return out
}

// Transaction returns the state of a transactional id, if the partition holds it.
func (s *State) Transaction(id string) (Transaction, bool) {
	t, ok := s.txns[id]
	return t, ok
}

// Transactions returns every transactional id's state, sorted by id; nil when there is none.
func (s *State) Transactions() []Transaction {
	if len(s.txns) == 0 {
		return nil
	}
	out := make([]Transaction, 0, len(s.txns))
	for _, t := range s.txns {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Transaction) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Claim is the newest claim: its number, the node and Kafka address that made it, and the log
// offset of its record. Number 0 means none yet.
func (s *State) Claim() Claim {
	return Claim{Number: s.validity.Claim(), Node: s.claimNode, Addr: s.claimAddr}
}

// KnowClaim gives a state that started at a checkpoint the node and address of its newest claim,
// which a checkpoint does not carry, when a reader learned them from the claim's own record; a
// claim of another number changes nothing.
func (s *State) KnowClaim(c Claim) {
	if c.Number == s.validity.Claim() && s.claimNode == 0 && s.claimAddr == "" {
		s.claimNode, s.claimAddr = c.Node, c.Addr
	}
}

// ClaimOffset is the log offset of the newest claim's record.
func (s *State) ClaimOffset() uint64 { return s.claimOffset }

// Group returns the last snapshot of a group, if one is live.
func (s *State) Group(name string) (Group, bool) {
	gs, ok := s.groups[name]
	if !ok || gs.group == nil {
		return Group{}, false
	}
	return *gs.group, true
}

// ConsumerGroup returns a KIP-848 consumer group, whole, if one is live.
func (s *State) ConsumerGroup(name string) (ConsumerGroup, bool) {
	gs, ok := s.groups[name]
	if !ok || gs.cgroup == nil {
		return ConsumerGroup{}, false
	}
	g := *gs.cgroup
	g.Members = slices.Clone(g.Members)
	return g, true
}

// MergeConsumerGroup applies the change c (a consumer-group record) to the whole group base (nil
// when there is none) and returns the whole group after it: the epochs and topics are c's, the
// members c names replace or join base's, those c removes are gone. base is not changed. Every
// reader of the log folds consumer-group records with it.
func MergeConsumerGroup(base, c *ConsumerGroup) *ConsumerGroup {
	out := &ConsumerGroup{Name: c.Name, Epoch: c.Epoch, AssignmentEpoch: c.AssignmentEpoch, Topics: c.Topics}
	if base != nil {
		out.Members = slices.Clone(base.Members)
	}
	for _, m := range c.Members {
		i, found := slices.BinarySearchFunc(out.Members, m.MemberID, func(a ConsumerMember, id string) int { return strings.Compare(a.MemberID, id) })
		if found {
			out.Members[i] = m
		} else {
			out.Members = slices.Insert(out.Members, i, m)
		}
	}
	for _, id := range c.Removed {
		i, found := slices.BinarySearchFunc(out.Members, id, func(a ConsumerMember, id string) int { return strings.Compare(a.MemberID, id) })
		if found {
			out.Members = slices.Delete(out.Members, i, i+1)
		}
	}
	if len(out.Members) == 0 {
		out.Members = nil
	}
	return out
}

// Offset returns a committed offset, if one is live.
func (s *State) Offset(group, topic string, partition int32) (OffsetCommit, bool) {
	gs, ok := s.groups[group]
	if !ok {
		return OffsetCommit{}, false
	}
	o, ok := gs.offsets[TopicPartition{topic, partition}]
	return o, ok
}

// GroupOffsets returns the committed offsets of one group, sorted by topic and partition.
func (s *State) GroupOffsets(group string) []OffsetCommit {
	gs, ok := s.groups[group]
	if !ok {
		return nil
	}
	out := make([]OffsetCommit, 0, len(gs.offsets))
	for _, o := range gs.offsets {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b OffsetCommit) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// OffsetTopics is the set of topics the partition holds committed offsets of.
func (s *State) OffsetTopics() map[string]bool {
	out := make(map[string]bool)
	for _, gs := range s.groups {
		for tp := range gs.offsets {
			out[tp.Topic] = true
		}
	}
	return out
}

// GroupNames lists every group with a snapshot or an offset, sorted.
func (s *State) GroupNames() []string {
	names := make([]string, 0, len(s.groups))
	for name := range s.groups {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// GroupDeleted reports whether a record after the last checkpoint deleted the group (and nothing
// re-created it since).
func (s *State) GroupDeleted(group string) bool { _, ok := s.deadGroups[group]; return ok }

// OffsetDeleted reports whether a record after the last checkpoint deleted the offset.
func (s *State) OffsetDeleted(group, topic string, partition int32) bool {
	_, ok := s.deadOffs[offsetMarker{group, TopicPartition{topic, partition}}]
	return ok
}

// Counts is a summary of a state, for operators and for deciding checkpoints in O(1).
type Counts struct {
	Groups, Offsets int // live groups (with a snapshot or offsets) and offsets
	Transactions    int // transactional ids held
	Markers         int // deletion markers not yet covered by a checkpoint
	Applied, Void   uint64
	// SinceCheckpoint counts the valid records after the last checkpoint (or the start).
	SinceCheckpoint int
}

// Counts returns the state's counters; it does not walk the state.
func (s *State) Counts() Counts {
	return Counts{
		Groups: len(s.groups), Offsets: s.nOffsets, Transactions: len(s.txns),
		Markers: len(s.deadGroups) + len(s.deadOffs),
		Applied: s.applied, Void: s.void,
		SinceCheckpoint: s.sinceCheckpoint,
	}
}

// LastCheckpoint returns the log offset and writer time of the last valid checkpoint applied.
func (s *State) LastCheckpoint() (offset uint64, at time.Time, ok bool) {
	return s.cpOffset, s.cpTime, s.cpSeen
}

// Last is the log offset of the last record applied (valid or not); ok is false before any.
func (s *State) Last() (offset uint64, ok bool) { return s.last, s.applied > 0 }

// CheckpointDue reports, in O(1), whether a checkpoint should be written: after every records
// valid records since the last one, or when the last one (or, without one, the newest claim's
// time start) is older than maxAge at now.
func (s *State) CheckpointDue(every int, maxAge time.Duration, since, now time.Time) bool {
	if s.sinceCheckpoint == 0 {
		return false
	}
	if s.sinceCheckpoint >= every {
		return true
	}
	base := since
	if s.cpSeen && s.cpTime.After(base) {
		base = s.cpTime
	}
	return now.Sub(base) >= maxAge
}
