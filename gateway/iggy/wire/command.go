package wire

import "strconv"

// Command is an Iggy command code. Reads travel as OpNonReplicated with the
// code in the request header; every other command is implied by its
// operation byte and never appears on the wire.
type Command uint32

// Command codes of protocol 0.11.0.
const (
	CmdPing                         Command = 1
	CmdGetStats                     Command = 10
	CmdGetSnapshot                  Command = 11
	CmdGetClusterMetadata           Command = 12
	CmdDescribeOptions              Command = 13
	CmdGetMe                        Command = 20
	CmdGetClient                    Command = 21
	CmdGetClients                   Command = 22
	CmdGetUser                      Command = 31
	CmdGetUsers                     Command = 32
	CmdCreateUser                   Command = 33
	CmdDeleteUser                   Command = 34
	CmdUpdateUser                   Command = 35
	CmdUpdatePermissions            Command = 36
	CmdChangePassword               Command = 37
	CmdLoginUser                    Command = 38
	CmdLogoutUser                   Command = 39
	CmdLoginRegister                Command = 40
	CmdGetPersonalAccessTokens      Command = 41
	CmdCreatePersonalAccessToken    Command = 42
	CmdDeletePersonalAccessToken    Command = 43
	CmdLoginWithPersonalAccessToken Command = 44
	CmdLoginRegisterWithPAT         Command = 45
	CmdPollMessages                 Command = 100
	CmdSendMessages                 Command = 101
	CmdFlushUnsavedBuffer           Command = 102
	CmdGetConsumerOffset            Command = 120
	CmdStoreConsumerOffset          Command = 121
	CmdDeleteConsumerOffset         Command = 122
	CmdGetStream                    Command = 200
	CmdGetStreams                   Command = 201
	CmdCreateStream                 Command = 202
	CmdDeleteStream                 Command = 203
	CmdUpdateStream                 Command = 204
	CmdPurgeStream                  Command = 205
	CmdGetTopic                     Command = 300
	CmdGetTopics                    Command = 301
	CmdCreateTopic                  Command = 302
	CmdDeleteTopic                  Command = 303
	CmdUpdateTopic                  Command = 304
	CmdPurgeTopic                   Command = 305
	CmdCreatePartitions             Command = 402
	CmdDeletePartitions             Command = 403
	CmdDeleteSegments               Command = 503
	CmdGetConsumerGroup             Command = 600
	CmdGetConsumerGroups            Command = 601
	CmdCreateConsumerGroup          Command = 602
	CmdDeleteConsumerGroup          Command = 603
	CmdJoinConsumerGroup            Command = 604
	CmdLeaveConsumerGroup           Command = 605
	CmdSyncConsumerGroup            Command = 606
)

type commandEntry struct {
	name string
	op   Operation // OpReserved for the legacy login codes, which have no operation
}

var commands = map[Command]commandEntry{
	CmdPing:                         {"ping", OpNonReplicated},
	CmdGetStats:                     {"get_stats", OpNonReplicated},
	CmdGetSnapshot:                  {"get_snapshot_file", OpNonReplicated},
	CmdGetClusterMetadata:           {"get_cluster_metadata", OpNonReplicated},
	CmdDescribeOptions:              {"describe_options", OpNonReplicated},
	CmdGetMe:                        {"get_me", OpNonReplicated},
	CmdGetClient:                    {"get_client", OpNonReplicated},
	CmdGetClients:                   {"get_clients", OpNonReplicated},
	CmdGetUser:                      {"get_user", OpNonReplicated},
	CmdGetUsers:                     {"get_users", OpNonReplicated},
	CmdCreateUser:                   {"create_user", OpCreateUser},
	CmdDeleteUser:                   {"delete_user", OpDeleteUser},
	CmdUpdateUser:                   {"update_user", OpUpdateUser},
	CmdUpdatePermissions:            {"update_permissions", OpUpdatePermissions},
	CmdChangePassword:               {"change_password", OpChangePassword},
	CmdLoginUser:                    {"login_user", OpReserved},
	CmdLogoutUser:                   {"logout_user", OpLogout},
	CmdLoginRegister:                {"login_register", OpRegister},
	CmdGetPersonalAccessTokens:      {"get_personal_access_tokens", OpNonReplicated},
	CmdCreatePersonalAccessToken:    {"create_personal_access_token", OpCreatePersonalAccessToken},
	CmdDeletePersonalAccessToken:    {"delete_personal_access_token", OpDeletePersonalAccessToken},
	CmdLoginWithPersonalAccessToken: {"login_with_personal_access_token", OpReserved},
	CmdLoginRegisterWithPAT:         {"login_register_with_pat", OpRegister},
	CmdPollMessages:                 {"poll_messages", OpNonReplicated},
	CmdSendMessages:                 {"send_messages", OpSendMessages},
	CmdFlushUnsavedBuffer:           {"flush_unsaved_buffer", OpNonReplicated},
	CmdGetConsumerOffset:            {"get_consumer_offset", OpNonReplicated},
	CmdStoreConsumerOffset:          {"store_consumer_offset", OpStoreConsumerOffset},
	CmdDeleteConsumerOffset:         {"delete_consumer_offset", OpDeleteConsumerOffset},
	CmdGetStream:                    {"get_stream", OpNonReplicated},
	CmdGetStreams:                   {"get_streams", OpNonReplicated},
	CmdCreateStream:                 {"create_stream", OpCreateStream},
	CmdDeleteStream:                 {"delete_stream", OpDeleteStream},
	CmdUpdateStream:                 {"update_stream", OpUpdateStream},
	CmdPurgeStream:                  {"purge_stream", OpPurgeStream},
	CmdGetTopic:                     {"get_topic", OpNonReplicated},
	CmdGetTopics:                    {"get_topics", OpNonReplicated},
	CmdCreateTopic:                  {"create_topic", OpCreateTopic},
	CmdDeleteTopic:                  {"delete_topic", OpDeleteTopic},
	CmdUpdateTopic:                  {"update_topic", OpUpdateTopic},
	CmdPurgeTopic:                   {"purge_topic", OpPurgeTopic},
	CmdCreatePartitions:             {"create_partitions", OpCreatePartitions},
	CmdDeletePartitions:             {"delete_partitions", OpDeletePartitions},
	CmdDeleteSegments:               {"delete_segments", OpDeleteSegments},
	CmdGetConsumerGroup:             {"get_consumer_group", OpNonReplicated},
	CmdGetConsumerGroups:            {"get_consumer_groups", OpNonReplicated},
	CmdCreateConsumerGroup:          {"create_consumer_group", OpCreateConsumerGroup},
	CmdDeleteConsumerGroup:          {"delete_consumer_group", OpDeleteConsumerGroup},
	CmdJoinConsumerGroup:            {"join_consumer_group", OpJoinConsumerGroup},
	CmdLeaveConsumerGroup:           {"leave_consumer_group", OpLeaveConsumerGroup},
	CmdSyncConsumerGroup:            {"sync_consumer_group", OpNonReplicated},
}

// commandByOp inverts commands for every operation that implies exactly one
// command. Register is ambiguous (password or token) and maps to
// CmdLoginRegister; the body tells them apart.
var commandByOp = func() map[Operation]Command {
	m := make(map[Operation]Command)
	for c, e := range commands {
		if e.op == OpNonReplicated || e.op == OpReserved {
			continue
		}
		if e.op == OpRegister && c != CmdLoginRegister {
			continue
		}
		m[e.op] = c
	}
	return m
}()

func (c Command) String() string {
	if e, ok := commands[c]; ok {
		return e.name
	}
	return "Command(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Known reports whether c is a command code of this protocol version.
func (c Command) Known() bool {
	_, ok := commands[c]
	return ok
}

// Operation returns the header operation that carries c: OpNonReplicated for
// reads (the code then travels at header byte 196), the command's own
// operation for writes, and OpReserved for unknown codes and for the legacy
// login codes 38 and 44, which a server answers with an eviction.
func (c Command) Operation() Operation {
	return commands[c].op
}

// NonReplicated reports whether c travels as OpNonReplicated with its code in
// the header.
func (c Command) NonReplicated() bool {
	return c.Operation() == OpNonReplicated
}

// ReplyFramed reports whether the reply to c starts with a result section.
func (c Command) ReplyFramed() bool {
	op := c.Operation()
	return op != OpReserved && op.ReplyFramed()
}

// CommandFor returns the command a request with operation op and header code
// code asks for: code itself for OpNonReplicated, otherwise the command the
// operation implies (CmdLoginRegister for OpRegister). ok is false when the
// pair names no command.
func CommandFor(op Operation, code uint32) (Command, bool) {
	if op == OpNonReplicated {
		c := Command(code)
		return c, c.Known()
	}
	c, ok := commandByOp[op]
	return c, ok
}
