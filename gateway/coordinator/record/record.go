// Package record defines the records of the coordinator log: what a gateway appends to the Iggy
// topic `<stream>.meta/coordinators` to share consumer-group state with the fleet, one record per
// Iggy message. The binary encoding (Encode, Decode) is documented field by field in the package
// doc of gateway/coordinator, with golden records under testdata/golden; State is the fold every
// reader applies to a partition's records.
//
// Every record carries the claim it was written under (Claim). Readers keep, per log partition,
// the newest claim seen so far in log order; a record whose Claim is below it is void and is
// ignored by every reader, so a gateway that lost a partition cannot change it.
package record

import (
	"cmp"
	"strings"
	"time"
)

// Type tells which record a message holds.
type Type uint8

const (
	TypeClaim         Type = 1 // a gateway takes a log partition over
	TypeGroup         Type = 2 // a whole-group snapshot at the end of a generation's SyncGroup
	TypeOffsetCommit  Type = 3 // one committed offset
	TypeGroupDeleted  Type = 4 // a group and its offsets are gone (DeleteGroups, or emptied and expired)
	TypeOffsetDeleted Type = 5 // one committed offset is gone (OffsetDelete)
	TypeCheckpoint    Type = 6 // the whole state of the partition's groups up to a log offset
	// TypeConsumerGroup is a change of a KIP-848 consumer group (format version 2): its epochs,
	// the topics it resolved, and the members that joined, changed or left.
	TypeConsumerGroup Type = 7
	// TypeTransaction is the whole state of one transactional id (format version 3): its
	// producer id and epoch, the transaction's state, partitions and groups, its timeout.
	TypeTransaction Type = 8
	// TypeTopic names the incarnation of a topic that the partition's offsets of that topic
	// belong to from here on (format version 6); a zero incarnation says the partition holds
	// none (the topic is gone).
	TypeTopic Type = 10
	// TypeTxnOffsets is what one transactional producer committed to one group
	// (TxnOffsetCommit) and its transaction has not yet ended, kept in the group's log partition
	// by the group's coordinator, or the end of it a marker wrote (format version 5).
	TypeTxnOffsets Type = 9
)

func (t Type) String() string {
	switch t {
	case TypeClaim:
		return "claim"
	case TypeGroup:
		return "group"
	case TypeOffsetCommit:
		return "offset-commit"
	case TypeGroupDeleted:
		return "group-deleted"
	case TypeOffsetDeleted:
		return "offset-deleted"
	case TypeCheckpoint:
		return "checkpoint"
	case TypeConsumerGroup:
		return "consumer-group"
	case TypeTransaction:
		return "transaction"
	case TypeTopic:
		return "topic"
	case TypeTxnOffsets:
		return "txn-offsets"
	}
	return "unknown"
}

// Record is one coordinator log record. Exactly one of the pointer fields is set, the one Type
// names.
type Record struct {
	Type Type
	// Claim is the claim number the writer held when it appended the record; a Claim record
	// carries its own number.
	Claim uint64
	// Time is when the writer appended it (wall clock of the writer).
	Time time.Time

	ClaimInfo     *Claim
	Group         *Group
	OffsetCommit  *OffsetCommit
	GroupDeleted  *GroupDeleted
	OffsetDeleted *OffsetDeleted
	Checkpoint    *Checkpoint
	ConsumerGroup *ConsumerGroup
	Transaction   *Transaction
	Topic         *TopicIncarnation
	TxnOffsets    *TxnOffsets
}

// Claim says that Node took the partition over; Number is above every claim before it in the
// partition.
type Claim struct {
	Number uint64
	Node   int32
	// Addr is the Kafka address the node advertises (host:port).
	Addr string
}

// Group is a whole consumer group as a completed generation left it.
type Group struct {
	Name         string
	Generation   int32
	ProtocolType string // "consumer", "connect", ...
	Protocol     string // the chosen assignor, "" while none
	Leader       string // member id of the leader, "" while none
	State        string // Kafka's state name: Empty, Stable, ...
	Members      []Member
}

// Member is one group member with everything needed to restore it on another gateway without a
// rebalance.
type Member struct {
	MemberID         string
	InstanceID       string // group.instance.id of a static member, "" for a dynamic one
	ClientID         string
	ClientHost       string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	// Protocols is the member's whole protocol list from its JoinGroup, in its order.
	Protocols  []Protocol
	Assignment []byte
}

// Protocol is one (assignor, metadata) pair a member supports.
type Protocol struct {
	Name     string
	Metadata []byte
}

// OffsetCommit is one committed offset of a group.
type OffsetCommit struct {
	Group       string
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32 // -1 when the client sent none
	Metadata    string
	// Expire is when the offset may be dropped; zero means never.
	Expire time.Time
}

// GroupDeleted removes a group, with all its offsets.
type GroupDeleted struct {
	Group string
}

// OffsetDeleted removes one committed offset.
type OffsetDeleted struct {
	Group     string
	Topic     string
	Partition int32
}

// Checkpoint is the state of every group of the partition as of log offset Through (inclusive):
// a reader that finds it can start there instead of at the start of the partition.
type Checkpoint struct {
	Through uint64
	Groups  []Group
	Offsets []OffsetCommit
	// ConsumerGroups are the KIP-848 consumer groups, each whole (no Removed), by name.
	ConsumerGroups []ConsumerGroup
	// Transactions are the transactional ids the partition holds, by id (format version 3).
	Transactions []Transaction
	// Topics are the incarnations the partition's offsets belong to, by name (format version 6).
	Topics []TopicIncarnation
	// TxnOffsets are the groups' offsets that transactions have not ended (End
	// TxnOffsetsPending), by group and producer id (format version 5).
	TxnOffsets []TxnOffsets
}

// TopicIncarnation tells one incarnation of a Kafka topic from another of the same name: Iggy
// reuses a deleted topic's id, so the id goes with the creation time. The zero value (with a
// name) says the partition holds no incarnation of the topic.
type TopicIncarnation struct {
	Name    string
	ID      uint32
	Created uint64 // Iggy's creation time of the topic, microseconds
}

// Gone reports whether t names no incarnation.
func (t TopicIncarnation) Gone() bool { return t.ID == 0 && t.Created == 0 }

// ConsumerGroup is a KIP-848 consumer group as its coordinator keeps it: everything another
// gateway needs to go on serving it with the same member epochs and assignments.
//
// In a consumer-group record it is a change: the group's epochs and Topics as they now are,
// Members the members that joined or changed (each whole), Removed the ids of those that left;
// members it does not name are unchanged. In a checkpoint it is the whole group.
type ConsumerGroup struct {
	Name string
	// Epoch is the group epoch, bumped when a member joins, leaves or changes its subscription
	// and when a subscribed topic changes; AssignmentEpoch is the group epoch the target
	// assignment was computed at.
	Epoch           int32
	AssignmentEpoch int32
	// Topics are the subscribed topics that exist, as the coordinator last resolved them, by
	// name: a change in them bumps the epoch, and a member's departure is assigned without
	// asking for the topic list again.
	Topics  []TopicMeta
	Members []ConsumerMember // by member id
	Removed []string         // member ids, sorted
}

// TopicMeta is what the assignors need of a topic.
type TopicMeta struct {
	Name       string
	ID         [16]byte
	Partitions int32
}

// ConsumerMember is one member of a consumer group.
type ConsumerMember struct {
	MemberID   string
	InstanceID string // group.instance.id of a static member, "" for a dynamic one
	RackID     string // "" when none
	ClientID   string
	ClientHost string
	// RebalanceTimeout bounds how long the member may take to revoke partitions.
	RebalanceTimeout time.Duration
	SubscribedTopics []string // sorted
	SubscribedRegex  string   // "" when none
	ServerAssignor   string   // the assignor the member asked for, "" when none
	// Epoch is the member epoch, PreviousEpoch the one before its last bump (a member whose
	// answer was lost may heartbeat with it). Epoch -2 marks a static member that left for now.
	Epoch, PreviousEpoch int32
	State                MemberState
	// Assigned are the partitions the member was given and owns; PendingRevocation those it
	// was asked to revoke and has not yet confirmed; Target what the assignor wants it to own.
	Assigned, PendingRevocation, Target Assignment
}

// MemberState is where a member's reconciliation stands, as Kafka names it.
type MemberState uint8

const (
	// MemberStable: the member owns what its epoch gives it.
	MemberStable MemberState = 0
	// MemberUnrevokedPartitions: the member must revoke PendingRevocation before it moves on.
	MemberUnrevokedPartitions MemberState = 1
	// MemberUnreleasedPartitions: partitions of its target are still owned by other members.
	MemberUnreleasedPartitions MemberState = 2
)

func (s MemberState) String() string {
	switch s {
	case MemberStable:
		return "stable"
	case MemberUnrevokedPartitions:
		return "unrevoked_partitions"
	case MemberUnreleasedPartitions:
		return "unreleased_partitions"
	}
	return "unknown"
}

// Assignment is a set of partitions by topic id: sorted by topic id, each topic's partitions
// sorted, unique and never empty, so that equal sets are equal values.
type Assignment []TopicPartitions

// TopicPartitions are partitions of one topic, named by its id.
type TopicPartitions struct {
	TopicID    [16]byte
	Partitions []int32
	// Epochs are, in a member's Assigned only, the member epoch it was given each partition at
	// (KIP-1251), one per partition; nil elsewhere. A commit at an older member epoch is taken
	// for a partition the member was given at or before that epoch.
	Epochs []int32
}

// TxnState is where a transaction stands, with Kafka's names (TransactionState).
type TxnState uint8

const (
	TxnEmpty          TxnState = 0 // an id with a producer id and no open transaction
	TxnOngoing        TxnState = 1 // partitions or groups were added since the last end
	TxnPrepareCommit  TxnState = 2 // EndTxn commit accepted; markers being written
	TxnPrepareAbort   TxnState = 3 // EndTxn abort, a timeout or a fencing InitProducerId; markers being written
	TxnCompleteCommit TxnState = 4 // every commit marker written
	TxnCompleteAbort  TxnState = 5 // every abort marker written
	TxnDead           TxnState = 6 // the id is gone (expired); the fold forgets it
)

func (s TxnState) String() string {
	switch s {
	case TxnEmpty:
		return "Empty"
	case TxnOngoing:
		return "Ongoing"
	case TxnPrepareCommit:
		return "PrepareCommit"
	case TxnPrepareAbort:
		return "PrepareAbort"
	case TxnCompleteCommit:
		return "CompleteCommit"
	case TxnCompleteAbort:
		return "CompleteAbort"
	case TxnDead:
		return "Dead"
	}
	return "Unknown"
}

// Transaction is the whole state of one transactional id as its coordinator keeps it; every
// change of it is one transaction record, so the last valid record of an id is its state.
type Transaction struct {
	ID         string // the transactional.id
	ProducerID int64
	Epoch      int16
	// Timeout is the client's transaction.timeout.ms: an Ongoing transaction whose Started is
	// older than Timeout is aborted by the coordinator.
	Timeout time.Duration
	State   TxnState
	// Partitions are the data partitions added to the open (or ending) transaction, sorted by
	// topic, each topic's partitions sorted and unique, none empty.
	Partitions []TxnTopic
	// Groups are the consumer groups added with AddOffsetsToTxn, sorted and unique.
	Groups []string
	// Started is when the open transaction began (its first add); zero when none is open.
	Started time.Time
	// Updated is when this state was decided.
	Updated time.Time
	// Offsets are the group offsets the transaction staged (TxnOffsetCommit), sorted by group,
	// topic and partition (CompareTxnOffset), one per partition of a group: committed to the
	// groups when the transaction commits, dropped when it aborts (format version 4).
	Offsets []TxnOffset
	// Last is the producer id and epoch the producer held before the last bump it asked for
	// (an InitProducerId naming its pair, KIP-360, or an EndTxn of transactions v2): a request
	// naming it is the retry of a bump whose answer was lost, answered with the current pair.
	// Nil when the last bump fenced the producer (a new incarnation, a timeout) or there was
	// none; in PrepareCommit and PrepareAbort set only by a transactions-v2 end, which bumped the
	// epoch (StagedEpoch). Format version 7.
	Last *ProducerEpoch
	// Next is, in PrepareCommit or PrepareAbort of a transactions-v2 end that spent the
	// producer id's epochs, the producer id and epoch the Complete record takes (epoch 0 of a
	// new producer id); nil otherwise (format version 7).
	Next *ProducerEpoch
}

// StagedEpoch is the epoch the producer wrote the transaction's batches and group offsets at: in
// PrepareCommit or PrepareAbort of a transactions-v2 end, which bumped Epoch (the markers' epoch),
// the epoch before the bump; else Epoch.
func (t *Transaction) StagedEpoch() int16 {
	if (t.State == TxnPrepareCommit || t.State == TxnPrepareAbort) && t.Last != nil && t.Last.ProducerID == t.ProducerID {
		return t.Last.Epoch
	}
	return t.Epoch
}

// ProducerEpoch is a producer id with one of its epochs.
type ProducerEpoch struct {
	ProducerID int64
	Epoch      int16
}

// TxnOffset is one offset a transaction staged for a group's partition.
type TxnOffset struct {
	Group       string
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32 // -1 when the client sent none
	Metadata    string
}

// CompareTxnOffset orders staged offsets by group, topic and partition.
func CompareTxnOffset(a, b *TxnOffset) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// TxnTopic is the partitions of one topic in a transaction.
type TxnTopic struct {
	Topic      string
	Partitions []int32
}

// TxnOffsets is the offsets one transactional producer committed to one group with
// TxnOffsetCommit that its transaction has not ended, as the group's coordinator keeps them: in
// the group's log partition, so whichever gateway coordinates the group next has them. Each
// record holds the whole set the producer staged for the group so far (a later offset of a
// partition replaces the earlier one). The transaction coordinator's marker for the group's log
// partition ends them (WriteTxnMarkers): a commit is written as the OffsetCommit records of the
// offsets followed by an end record, in one batch; an abort as the end record alone.
type TxnOffsets struct {
	Group           string
	TransactionalID string // as the TxnOffsetCommit named it, for operators
	ProducerID      int64
	Epoch           int16
	End             TxnOffsetsEnd
	// Offsets are sorted by topic and partition, one per partition, each with Group set to the
	// record's group; none in an end record.
	Offsets []TxnOffset
}

// TxnOffsetsEnd says whether a txn-offsets record holds offsets or ends them.
type TxnOffsetsEnd uint8

const (
	TxnOffsetsPending TxnOffsetsEnd = 0 // the offsets staged so far
	TxnOffsetsCommit  TxnOffsetsEnd = 1 // the transaction committed: the offsets were committed before this record
	TxnOffsetsAbort   TxnOffsetsEnd = 2 // the transaction aborted: the offsets are dropped
)

func (e TxnOffsetsEnd) String() string {
	switch e {
	case TxnOffsetsPending:
		return "pending"
	case TxnOffsetsCommit:
		return "commit"
	case TxnOffsetsAbort:
		return "abort"
	}
	return "unknown"
}
