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

import "time"

// Type tells which record a message holds.
type Type uint8

const (
	TypeClaim         Type = 1 // a gateway takes a log partition over
	TypeGroup         Type = 2 // a whole-group snapshot at the end of a generation's SyncGroup
	TypeOffsetCommit  Type = 3 // one committed offset
	TypeGroupDeleted  Type = 4 // a group and its offsets are gone (DeleteGroups, or emptied and expired)
	TypeOffsetDeleted Type = 5 // one committed offset is gone (OffsetDelete)
	TypeCheckpoint    Type = 6 // the whole state of the partition's groups up to a log offset
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
}
