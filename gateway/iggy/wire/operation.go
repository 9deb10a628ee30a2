package wire

import "strconv"

// Operation is the one-byte operation field of request and reply headers. It
// decides how the server routes a request and whether the reply body starts
// with a result section.
type Operation uint8

// Session, internal, metadata and partition operations.
const (
	OpReserved      Operation = 0
	OpRegister      Operation = 1
	OpNonReplicated Operation = 2
	OpLogout        Operation = 3

	OpCreateTopicWithAssignments      Operation = 64
	OpCreatePartitionsWithAssignments Operation = 65
	OpRemoveConsumerGroupMember       Operation = 66
	OpCompleteConsumerGroupRevocation Operation = 67
	OpTruncatePartition               Operation = 68

	OpCreateStream              Operation = 128
	OpUpdateStream              Operation = 129
	OpDeleteStream              Operation = 130
	OpPurgeStream               Operation = 131
	OpCreateTopic               Operation = 132
	OpUpdateTopic               Operation = 133
	OpDeleteTopic               Operation = 134
	OpPurgeTopic                Operation = 135
	OpCreatePartitions          Operation = 136
	OpDeletePartitions          Operation = 137
	OpDeleteSegments            Operation = 138
	OpCreateConsumerGroup       Operation = 139
	OpDeleteConsumerGroup       Operation = 140
	OpCreateUser                Operation = 141
	OpUpdateUser                Operation = 142
	OpDeleteUser                Operation = 143
	OpChangePassword            Operation = 144
	OpUpdatePermissions         Operation = 145
	OpCreatePersonalAccessToken Operation = 146
	OpDeletePersonalAccessToken Operation = 147
	OpJoinConsumerGroup         Operation = 148
	OpLeaveConsumerGroup        Operation = 149

	OpSendMessages         Operation = 160
	OpStoreConsumerOffset  Operation = 161
	OpDeleteConsumerOffset Operation = 162
)

var operationNames = map[Operation]string{
	OpReserved:                        "Reserved",
	OpRegister:                        "Register",
	OpNonReplicated:                   "NonReplicated",
	OpLogout:                          "Logout",
	OpCreateTopicWithAssignments:      "CreateTopicWithAssignments",
	OpCreatePartitionsWithAssignments: "CreatePartitionsWithAssignments",
	OpRemoveConsumerGroupMember:       "RemoveConsumerGroupMember",
	OpCompleteConsumerGroupRevocation: "CompleteConsumerGroupRevocation",
	OpTruncatePartition:               "TruncatePartition",
	OpCreateStream:                    "CreateStream",
	OpUpdateStream:                    "UpdateStream",
	OpDeleteStream:                    "DeleteStream",
	OpPurgeStream:                     "PurgeStream",
	OpCreateTopic:                     "CreateTopic",
	OpUpdateTopic:                     "UpdateTopic",
	OpDeleteTopic:                     "DeleteTopic",
	OpPurgeTopic:                      "PurgeTopic",
	OpCreatePartitions:                "CreatePartitions",
	OpDeletePartitions:                "DeletePartitions",
	OpDeleteSegments:                  "DeleteSegments",
	OpCreateConsumerGroup:             "CreateConsumerGroup",
	OpDeleteConsumerGroup:             "DeleteConsumerGroup",
	OpCreateUser:                      "CreateUser",
	OpUpdateUser:                      "UpdateUser",
	OpDeleteUser:                      "DeleteUser",
	OpChangePassword:                  "ChangePassword",
	OpUpdatePermissions:               "UpdatePermissions",
	OpCreatePersonalAccessToken:       "CreatePersonalAccessToken",
	OpDeletePersonalAccessToken:       "DeletePersonalAccessToken",
	OpJoinConsumerGroup:               "JoinConsumerGroup",
	OpLeaveConsumerGroup:              "LeaveConsumerGroup",
	OpSendMessages:                    "SendMessages",
	OpStoreConsumerOffset:             "StoreConsumerOffset",
	OpDeleteConsumerOffset:            "DeleteConsumerOffset",
}

func (o Operation) String() string {
	if n, ok := operationNames[o]; ok {
		return n
	}
	return "Operation(" + strconv.Itoa(int(o)) + ")"
}

// Known reports whether o is a defined, non-reserved operation. The Go SDK
// drops a reply whose operation is not known, and the official server drops
// such a request without answering.
func (o Operation) Known() bool {
	_, ok := operationNames[o]
	return ok && o != OpReserved
}

// ClientSendable reports whether a client may put o in a request header;
// the internal band (64..68) is for replicas only.
func (o Operation) ClientSendable() bool {
	return o.Known() && (o < 64 || o > 68)
}

// Replicated reports whether o goes through consensus: every client
// operation except Register and NonReplicated. A client needs a session to
// send one, and metadata replicated operations advance the request counter.
func (o Operation) Replicated() bool {
	return o.Known() && o != OpRegister && o != OpNonReplicated
}

// Metadata reports whether o is in the metadata band (128..149, without
// DeleteSegments), whose requests each take a fresh request number.
func (o Operation) Metadata() bool {
	return o >= OpCreateStream && o <= OpLeaveConsumerGroup && o != OpDeleteSegments && o.Known()
}

// Partition reports whether o is in the partition band (160..162).
func (o Operation) Partition() bool {
	return o >= OpSendMessages && o <= OpDeleteConsumerOffset
}

// ReplyFramed reports whether the reply body for o starts with a result
// section (see StripResult). A Register reply is framed when it is not empty;
// callers handle that case by checking the body length.
func (o Operation) ReplyFramed() bool {
	switch {
	case o == OpRegister:
		return true
	case o >= OpCreateTopicWithAssignments && o <= OpTruncatePartition:
		return true
	case o >= OpCreateStream && o <= OpDeletePartitions:
		return true
	case o >= OpCreateConsumerGroup && o <= OpLeaveConsumerGroup:
		return true
	case o == OpStoreConsumerOffset || o == OpDeleteConsumerOffset:
		return true
	}
	return false
}
