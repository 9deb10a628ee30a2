package wire

// Body is implemented by every request and reply body: AppendTo appends the
// encoding to dst, Decode parses b into the receiver.
type Body interface {
	AppendTo(dst []byte) []byte
	Decode(b []byte) error
}

// Empty is the body of requests and replies that carry nothing (ping,
// get_streams, logout, most write replies after their result section).
// Decode accepts any bytes, as the official server ignores them.
type Empty struct{}

// AppendTo appends nothing.
func (Empty) AppendTo(dst []byte) []byte { return dst }

// Decode accepts any input.
func (*Empty) Decode([]byte) error { return nil }

// NewRequest returns a zero request body for command c, ready for Decode,
// or nil for an unknown code. For the Register commands it returns the
// shape the code names; a server that only sees OpRegister uses
// ParseRegister instead.
func NewRequest(c Command) Body {
	switch c {
	case CmdPing, CmdGetStats, CmdGetClusterMetadata, CmdGetMe, CmdGetClients,
		CmdGetUsers, CmdLogoutUser, CmdGetPersonalAccessTokens, CmdGetStreams:
		return &Empty{}
	case CmdGetSnapshot:
		return &GetSnapshot{}
	case CmdDescribeOptions:
		return &DescribeOptions{}
	case CmdGetClient:
		return &GetClient{}
	case CmdGetUser, CmdDeleteUser:
		return &UserRequest{}
	case CmdCreateUser:
		return &CreateUser{}
	case CmdUpdateUser:
		return &UpdateUser{}
	case CmdUpdatePermissions:
		return &UpdatePermissions{}
	case CmdChangePassword:
		return &ChangePassword{}
	case CmdLoginRegister:
		return &PasswordLogin{}
	case CmdLoginRegisterWithPAT:
		return &TokenLogin{}
	case CmdCreatePersonalAccessToken:
		return &CreatePersonalAccessToken{}
	case CmdDeletePersonalAccessToken:
		return &DeletePersonalAccessToken{}
	case CmdPollMessages:
		return &PollMessages{}
	case CmdSendMessages:
		return &SendMessages{}
	case CmdFlushUnsavedBuffer:
		return &FlushUnsavedBuffer{}
	case CmdGetConsumerOffset:
		return &GetConsumerOffset{}
	case CmdStoreConsumerOffset:
		return &StoreConsumerOffset{}
	case CmdDeleteConsumerOffset:
		return &DeleteConsumerOffset{}
	case CmdGetStream, CmdDeleteStream, CmdPurgeStream, CmdGetTopics:
		return &StreamRequest{}
	case CmdCreateStream:
		return &CreateStream{}
	case CmdUpdateStream:
		return &UpdateStream{}
	case CmdGetTopic, CmdDeleteTopic, CmdPurgeTopic, CmdGetConsumerGroups:
		return &TopicRequest{}
	case CmdCreateTopic:
		return &CreateTopic{}
	case CmdUpdateTopic:
		return &UpdateTopic{}
	case CmdCreatePartitions, CmdDeletePartitions:
		return &PartitionsRequest{}
	case CmdDeleteSegments:
		return &DeleteSegments{}
	case CmdGetConsumerGroup, CmdDeleteConsumerGroup, CmdJoinConsumerGroup,
		CmdLeaveConsumerGroup, CmdSyncConsumerGroup:
		return &GroupRequest{}
	case CmdCreateConsumerGroup:
		return &CreateConsumerGroup{}
	}
	return nil
}

// DecodeRequest decodes the body of a request for command c.
func DecodeRequest(c Command, body []byte) (Body, error) {
	b := NewRequest(c)
	if b == nil {
		return nil, InvalidCommand
	}
	if err := b.Decode(body); err != nil {
		return nil, err
	}
	return b, nil
}
