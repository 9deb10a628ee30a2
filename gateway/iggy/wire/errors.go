package wire

import (
	"slices"
	"strconv"
)

// Code is an Iggy error code as carried in a reply's status field or in a
// result entry. The zero Code means success and is never returned as an error.
type Code uint32

// OK is the success status.
const OK Code = 0

type codeEntry struct {
	name    string // the name Iggy's own code tables use
	message string
}

// Error makes a Code usable as an error value, so callers can compare with
// errors.Is against the named constants below.
func (c Code) Error() string {
	if e, ok := codeInfo[c]; ok {
		return "iggy: " + e.message + " (" + strconv.FormatUint(uint64(c), 10) + ")"
	}
	return "iggy: error code " + strconv.FormatUint(uint64(c), 10)
}

// String returns the code's Iggy name, such as "StreamIdNotFound".
func (c Code) String() string {
	if c == OK {
		return "OK"
	}
	if e, ok := codeInfo[c]; ok {
		return e.name
	}
	return "Code(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Known reports whether c is one of the codes Iggy defines.
func (c Code) Known() bool {
	_, ok := codeInfo[c]
	return ok
}

// Transient reports whether a client should resend the identical request
// rather than give up: these are the two consensus back-pressure codes.
func (c Code) Transient() bool {
	return c == TransientNotCommitted || c == TransientNotAccepted
}

// Codes returns every defined code in ascending order.
func Codes() []Code {
	out := make([]Code, 0, len(codeInfo))
	for c := range codeInfo {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// The complete Iggy error code space. Many of these are server-internal or
// client-side only and never travel on the wire; they are listed so that any
// status a peer sends has a name.
const (
	UnspecifiedError                           Code = 1
	InvalidConfiguration                       Code = 2
	InvalidCommand                             Code = 3
	InvalidFormat                              Code = 4
	FeatureUnavailable                         Code = 5
	InvalidIdentifier                          Code = 6
	InvalidVersion                             Code = 7
	Disconnected                               Code = 8
	CannotEstablishConnection                  Code = 9
	CannotCreateBaseDirectory                  Code = 10
	CannotCreateRuntimeDirectory               Code = 11
	CannotRemoveRuntimeDirectory               Code = 12
	CannotCreateStateDirectory                 Code = 13
	StateFileNotFound                          Code = 14
	StateFileCorrupted                         Code = 15
	InvalidStateEntryChecksum                  Code = 16
	CannotOpenDatabase                         Code = 19
	ResourceNotFound                           Code = 20
	CannotCloseWebSocketConnection             Code = 21
	StaleClient                                Code = 30
	TCPError                                   Code = 31
	QUICError                                  Code = 32
	InvalidServerAddress                       Code = 33
	InvalidClientAddress                       Code = 34
	InvalidIPAddress                           Code = 35
	HTTPError                                  Code = 36
	InvalidAPIURL                              Code = 37
	Unauthenticated                            Code = 40
	Unauthorized                               Code = 41
	InvalidCredentials                         Code = 42
	InvalidUsername                            Code = 43
	InvalidPassword                            Code = 44
	InvalidUserStatus                          Code = 45
	UserAlreadyExists                          Code = 46
	UserInactive                               Code = 47
	CannotDeleteUser                           Code = 48
	CannotChangePermissions                    Code = 49
	InvalidPersonalAccessTokenName             Code = 50
	PersonalAccessTokenAlreadyExists           Code = 51
	PersonalAccessTokensLimitReached           Code = 52
	InvalidPersonalAccessToken                 Code = 53
	PersonalAccessTokenExpired                 Code = 54
	UsersLimitReached                          Code = 55
	InvalidPersonalAccessTokenExpiry           Code = 56
	TransientNotCommitted                      Code = 57
	TransientNotAccepted                       Code = 58
	RequestAlreadyApplied                      Code = 59
	NotConnected                               Code = 61
	ClientShutdown                             Code = 63
	InvalidTLSDomain                           Code = 64
	InvalidTLSCertificatePath                  Code = 65
	InvalidTLSCertificate                      Code = 66
	FailedToAddCertificate                     Code = 67
	InvalidEncryptionKey                       Code = 70
	CannotEncryptData                          Code = 71
	CannotDecryptData                          Code = 72
	InvalidJWTAlgorithm                        Code = 73
	InvalidJWTSecret                           Code = 74
	JWTMissing                                 Code = 75
	CannotGenerateJWT                          Code = 76
	AccessTokenMissing                         Code = 77
	InvalidAccessToken                         Code = 78
	CannotFetchJWKS                            Code = 79
	InvalidSizeBytes                           Code = 80
	InvalidUTF8                                Code = 81
	InvalidNumberEncoding                      Code = 82
	InvalidBooleanValue                        Code = 83
	InvalidNumberValue                         Code = 84
	ClientNotFound                             Code = 100
	InvalidClientID                            Code = 101
	ConnectionClosed                           Code = 206
	CannotParseHeaderKind                      Code = 209
	HTTPResponseError                          Code = 300
	InvalidHTTPRequest                         Code = 301
	InvalidJSONResponse                        Code = 302
	InvalidBytesResponse                       Code = 303
	EmptyResponse                              Code = 304
	CannotCreateEndpoint                       Code = 305
	CannotParseURL                             Code = 306
	WebSocketError                             Code = 400
	WebSocketConnectionError                   Code = 401
	WebSocketCloseError                        Code = 402
	WebSocketReceiveError                      Code = 403
	WebSocketSendError                         Code = 404
	CannotCreateStreamsDirectory               Code = 1000
	CannotCreateStreamDirectory                Code = 1001
	CannotCreateStreamInfo                     Code = 1002
	CannotUpdateStreamInfo                     Code = 1003
	CannotOpenStreamInfo                       Code = 1004
	CannotReadStreamInfo                       Code = 1005
	CannotCreateStream                         Code = 1006
	CannotDeleteStream                         Code = 1007
	CannotDeleteStreamDirectory                Code = 1008
	StreamIDNotFound                           Code = 1009
	StreamNameNotFound                         Code = 1010
	StreamDirectoryNotFound                    Code = 1011
	StreamNameAlreadyExists                    Code = 1012
	InvalidStreamName                          Code = 1013
	InvalidStreamID                            Code = 1014
	CannotReadStreams                          Code = 1015
	InvalidTopicSize                           Code = 1019
	TooManyStreams                             Code = 1020
	CannotCreateTopicsDirectory                Code = 2000
	CannotCreateTopicDirectory                 Code = 2001
	CannotCreateTopicInfo                      Code = 2002
	CannotUpdateTopicInfo                      Code = 2003
	CannotOpenTopicInfo                        Code = 2004
	CannotReadTopicInfo                        Code = 2005
	CannotCreateTopic                          Code = 2006
	CannotDeleteTopic                          Code = 2007
	CannotDeleteTopicDirectory                 Code = 2008
	CannotPollTopic                            Code = 2009
	TopicIDNotFound                            Code = 2010
	TopicNameNotFound                          Code = 2011
	TopicNameAlreadyExists                     Code = 2013
	InvalidTopicName                           Code = 2014
	TooManyPartitions                          Code = 2015
	InvalidTopicID                             Code = 2016
	CannotReadTopics                           Code = 2017
	InvalidReplicationFactor                   Code = 2018
	InvalidPartitionsCount                     Code = 2019
	TopicDirectoryNotFound                     Code = 2020
	TooManyTopics                              Code = 2021
	CannotCreatePartition                      Code = 3000
	CannotCreatePartitionsDirectory            Code = 3001
	CannotCreatePartitionDirectory             Code = 3002
	CannotOpenPartitionLogFile                 Code = 3003
	CannotReadPartitions                       Code = 3004
	CannotDeletePartition                      Code = 3005
	CannotDeletePartitionDirectory             Code = 3006
	PartitionNotFound                          Code = 3007
	NoPartitions                               Code = 3008
	TopicFull                                  Code = 3009
	CannotDeleteConsumerOffsetsDirectory       Code = 3010
	CannotDeleteConsumerOffsetFile             Code = 3011
	CannotCreateConsumerOffsetsDirectory       Code = 3012
	PartitionIDSpaceExhausted                  Code = 3013
	CannotReadConsumerOffsets                  Code = 3020
	ConsumerOffsetNotFound                     Code = 3021
	NotResolvedConsumer                        Code = 3022
	CannotOpenConsumerOffsetsFile              Code = 3023
	SegmentNotFound                            Code = 4000
	SegmentClosed                              Code = 4001
	InvalidSegmentSize                         Code = 4002
	CannotCreateSegmentLogFile                 Code = 4003
	CannotCreateSegmentIndexFile               Code = 4004
	CannotCreateSegmentTimeIndexFile           Code = 4005
	CannotSaveMessagesToSegment                Code = 4006
	CannotSaveIndexToSegment                   Code = 4007
	CannotSaveTimeIndexToSegment               Code = 4008
	InvalidMessagesCount                       Code = 4009
	CannotAppendMessage                        Code = 4010
	CannotReadMessage                          Code = 4011
	CannotReadMessageID                        Code = 4012
	CannotReadMessageState                     Code = 4013
	CannotReadMessageTimestamp                 Code = 4014
	CannotReadHeadersLength                    Code = 4015
	CannotReadHeadersPayload                   Code = 4016
	TooBigUserHeaders                          Code = 4017
	InvalidHeaderKey                           Code = 4018
	InvalidHeaderValue                         Code = 4019
	CannotReadMessageLength                    Code = 4020
	CannotReadMessagePayload                   Code = 4021
	TooBigMessagePayload                       Code = 4022
	TooManyMessages                            Code = 4023
	EmptyMessagePayload                        Code = 4024
	InvalidMessagePayloadLength                Code = 4025
	CannotReadMessageChecksum                  Code = 4026
	InvalidMessageChecksum                     Code = 4027
	InvalidKeyValueLength                      Code = 4028
	CommandLengthError                         Code = 4029
	InvalidSegmentsCount                       Code = 4030
	NonZeroOffset                              Code = 4031
	NonZeroTimestamp                           Code = 4032
	MissingIndex                               Code = 4033
	InvalidIndexesByteSize                     Code = 4034
	InvalidIndexesCount                        Code = 4035
	InvalidMessagesSize                        Code = 4036
	TooSmallMessage                            Code = 4037
	InvalidMessageTimestampDelta               Code = 4038
	InvalidBatchChecksum                       Code = 4039
	InvalidHeaderKind                          Code = 4040
	UnsupportedOptionKey                       Code = 4041
	InvalidOptionValue                         Code = 4042
	OptionsBlockTooLarge                       Code = 4043
	CannotSendMessagesDueToClientDisconnection Code = 4050
	BackgroundSendError                        Code = 4051
	BackgroundSendTimeout                      Code = 4052
	BackgroundSendBufferFull                   Code = 4053
	BackgroundWorkerDisconnected               Code = 4054
	BackgroundSendBufferOverflow               Code = 4055
	ProducerSendFailed                         Code = 4056
	ProducerClosed                             Code = 4057
	InvalidOffset                              Code = 4100
	InvalidReservedField                       Code = 4101
	ConsumerGroupIDNotFound                    Code = 5000
	InvalidConsumerGroupID                     Code = 5002
	ConsumerGroupNameNotFound                  Code = 5003
	ConsumerGroupNameAlreadyExists             Code = 5004
	InvalidConsumerGroupName                   Code = 5005
	ConsumerGroupMemberNotFound                Code = 5006
	CannotCreateConsumerGroupInfo              Code = 5007
	CannotDeleteConsumerGroupInfo              Code = 5008
	ConsumerGroupPartitionNotOwned             Code = 5009
	MissingBaseOffsetRetainedMessageBatch      Code = 6000
	MissingLastOffsetDeltaRetainedMessageBatch Code = 6001
	MissingMaxTimestampRetainedMessageBatch    Code = 6002
	MissingLengthRetainedMessageBatch          Code = 6003
	MissingPayloadRetainedMessageBatch         Code = 6004
	CannotReadBatchBaseOffset                  Code = 7000
	CannotReadBatchLength                      Code = 7001
	CannotReadLastOffsetDelta                  Code = 7002
	CannotReadMaxTimestamp                     Code = 7003
	CannotReadBatchPayload                     Code = 7004
	InvalidConnectionString                    Code = 8000
	SnapshotFileCompletionFailed               Code = 9000
	CannotSerializeResource                    Code = 10000
	CannotDeserializeResource                  Code = 10001
	CannotReadFile                             Code = 10002
	CannotReadFileMetadata                     Code = 10003
	CannotSeekFile                             Code = 10004
	CannotAppendToFile                         Code = 10005
	CannotWriteToFile                          Code = 10006
	CannotOverwriteFile                        Code = 10007
	CannotDeleteFile                           Code = 10008
	CannotSyncFile                             Code = 10009
	CannotReadIndexOffset                      Code = 10010
	CannotReadIndexPosition                    Code = 10011
	CannotReadIndexTimestamp                   Code = 10012
	TimestampOutOfRange                        Code = 10013
	ShardNotFound                              Code = 11000
	ShardCommunicationError                    Code = 11001
	CannotBindToSocket                         Code = 12000
	TaskTimeout                                Code = 12001
	IOError                                    Code = 13000
	AlreadyAuthenticated                       Code = 14000
	InvalidSession                             Code = 14001
	IncompatibleProtocolVersion                Code = 14003
)

var codeInfo = map[Code]codeEntry{
	UnspecifiedError:                           {"Error", "error"},
	InvalidConfiguration:                       {"InvalidConfiguration", "invalid configuration"},
	InvalidCommand:                             {"InvalidCommand", "invalid command"},
	InvalidFormat:                              {"InvalidFormat", "invalid format"},
	FeatureUnavailable:                         {"FeatureUnavailable", "feature unavailable"},
	InvalidIdentifier:                          {"InvalidIdentifier", "invalid identifier"},
	InvalidVersion:                             {"InvalidVersion", "invalid version"},
	Disconnected:                               {"Disconnected", "disconnected"},
	CannotEstablishConnection:                  {"CannotEstablishConnection", "cannot establish connection"},
	CannotCreateBaseDirectory:                  {"CannotCreateBaseDirectory", "cannot create base directory"},
	CannotCreateRuntimeDirectory:               {"CannotCreateRuntimeDirectory", "cannot create runtime directory"},
	CannotRemoveRuntimeDirectory:               {"CannotRemoveRuntimeDirectory", "cannot remove runtime directory"},
	CannotCreateStateDirectory:                 {"CannotCreateStateDirectory", "cannot create state directory"},
	StateFileNotFound:                          {"StateFileNotFound", "state file not found"},
	StateFileCorrupted:                         {"StateFileCorrupted", "state file corrupted"},
	InvalidStateEntryChecksum:                  {"InvalidStateEntryChecksum", "invalid state entry checksum"},
	CannotOpenDatabase:                         {"CannotOpenDatabase", "cannot open database"},
	ResourceNotFound:                           {"ResourceNotFound", "resource not found"},
	CannotCloseWebSocketConnection:             {"CannotCloseWebSocketConnection", "cannot close web socket connection"},
	StaleClient:                                {"StaleClient", "stale client"},
	TCPError:                                   {"TcpError", "tcp error"},
	QUICError:                                  {"QuicError", "quic error"},
	InvalidServerAddress:                       {"InvalidServerAddress", "invalid server address"},
	InvalidClientAddress:                       {"InvalidClientAddress", "invalid client address"},
	InvalidIPAddress:                           {"InvalidIpAddress", "invalid ip address"},
	HTTPError:                                  {"HttpError", "http error"},
	InvalidAPIURL:                              {"InvalidApiUrl", "invalid api url"},
	Unauthenticated:                            {"Unauthenticated", "unauthenticated"},
	Unauthorized:                               {"Unauthorized", "unauthorized"},
	InvalidCredentials:                         {"InvalidCredentials", "invalid credentials"},
	InvalidUsername:                            {"InvalidUsername", "invalid username"},
	InvalidPassword:                            {"InvalidPassword", "invalid password"},
	InvalidUserStatus:                          {"InvalidUserStatus", "invalid user status"},
	UserAlreadyExists:                          {"UserAlreadyExists", "user already exists"},
	UserInactive:                               {"UserInactive", "user inactive"},
	CannotDeleteUser:                           {"CannotDeleteUser", "cannot delete user"},
	CannotChangePermissions:                    {"CannotChangePermissions", "cannot change permissions"},
	InvalidPersonalAccessTokenName:             {"InvalidPersonalAccessTokenName", "invalid personal access token name"},
	PersonalAccessTokenAlreadyExists:           {"PersonalAccessTokenAlreadyExists", "personal access token already exists"},
	PersonalAccessTokensLimitReached:           {"PersonalAccessTokensLimitReached", "personal access tokens limit reached"},
	InvalidPersonalAccessToken:                 {"InvalidPersonalAccessToken", "invalid personal access token"},
	PersonalAccessTokenExpired:                 {"PersonalAccessTokenExpired", "personal access token expired"},
	UsersLimitReached:                          {"UsersLimitReached", "users limit reached"},
	InvalidPersonalAccessTokenExpiry:           {"InvalidPersonalAccessTokenExpiry", "invalid personal access token expiry"},
	TransientNotCommitted:                      {"TransientNotCommitted", "transient not committed"},
	TransientNotAccepted:                       {"TransientNotAccepted", "transient not accepted"},
	RequestAlreadyApplied:                      {"RequestAlreadyApplied", "request already applied"},
	NotConnected:                               {"NotConnected", "not connected"},
	ClientShutdown:                             {"ClientShutdown", "client shutdown"},
	InvalidTLSDomain:                           {"InvalidTlsDomain", "invalid tls domain"},
	InvalidTLSCertificatePath:                  {"InvalidTlsCertificatePath", "invalid tls certificate path"},
	InvalidTLSCertificate:                      {"InvalidTlsCertificate", "invalid tls certificate"},
	FailedToAddCertificate:                     {"FailedToAddCertificate", "failed to add certificate"},
	InvalidEncryptionKey:                       {"InvalidEncryptionKey", "invalid encryption key"},
	CannotEncryptData:                          {"CannotEncryptData", "cannot encrypt data"},
	CannotDecryptData:                          {"CannotDecryptData", "cannot decrypt data"},
	InvalidJWTAlgorithm:                        {"InvalidJwtAlgorithm", "invalid jwt algorithm"},
	InvalidJWTSecret:                           {"InvalidJwtSecret", "invalid jwt secret"},
	JWTMissing:                                 {"JwtMissing", "jwt missing"},
	CannotGenerateJWT:                          {"CannotGenerateJwt", "cannot generate jwt"},
	AccessTokenMissing:                         {"AccessTokenMissing", "access token missing"},
	InvalidAccessToken:                         {"InvalidAccessToken", "invalid access token"},
	CannotFetchJWKS:                            {"CannotFetchJwks", "cannot fetch jwks"},
	InvalidSizeBytes:                           {"InvalidSizeBytes", "invalid size bytes"},
	InvalidUTF8:                                {"InvalidUtf8", "invalid utf8"},
	InvalidNumberEncoding:                      {"InvalidNumberEncoding", "invalid number encoding"},
	InvalidBooleanValue:                        {"InvalidBooleanValue", "invalid boolean value"},
	InvalidNumberValue:                         {"InvalidNumberValue", "invalid number value"},
	ClientNotFound:                             {"ClientNotFound", "client not found"},
	InvalidClientID:                            {"InvalidClientId", "invalid client id"},
	ConnectionClosed:                           {"ConnectionClosed", "connection closed"},
	CannotParseHeaderKind:                      {"CannotParseHeaderKind", "cannot parse header kind"},
	HTTPResponseError:                          {"HttpResponseError", "http response error"},
	InvalidHTTPRequest:                         {"InvalidHttpRequest", "invalid http request"},
	InvalidJSONResponse:                        {"InvalidJsonResponse", "invalid json response"},
	InvalidBytesResponse:                       {"InvalidBytesResponse", "invalid bytes response"},
	EmptyResponse:                              {"EmptyResponse", "empty response"},
	CannotCreateEndpoint:                       {"CannotCreateEndpoint", "cannot create endpoint"},
	CannotParseURL:                             {"CannotParseUrl", "cannot parse url"},
	WebSocketError:                             {"WebSocketError", "web socket error"},
	WebSocketConnectionError:                   {"WebSocketConnectionError", "web socket connection error"},
	WebSocketCloseError:                        {"WebSocketCloseError", "web socket close error"},
	WebSocketReceiveError:                      {"WebSocketReceiveError", "web socket receive error"},
	WebSocketSendError:                         {"WebSocketSendError", "web socket send error"},
	CannotCreateStreamsDirectory:               {"CannotCreateStreamsDirectory", "cannot create streams directory"},
	CannotCreateStreamDirectory:                {"CannotCreateStreamDirectory", "cannot create stream directory"},
	CannotCreateStreamInfo:                     {"CannotCreateStreamInfo", "cannot create stream info"},
	CannotUpdateStreamInfo:                     {"CannotUpdateStreamInfo", "cannot update stream info"},
	CannotOpenStreamInfo:                       {"CannotOpenStreamInfo", "cannot open stream info"},
	CannotReadStreamInfo:                       {"CannotReadStreamInfo", "cannot read stream info"},
	CannotCreateStream:                         {"CannotCreateStream", "cannot create stream"},
	CannotDeleteStream:                         {"CannotDeleteStream", "cannot delete stream"},
	CannotDeleteStreamDirectory:                {"CannotDeleteStreamDirectory", "cannot delete stream directory"},
	StreamIDNotFound:                           {"StreamIdNotFound", "stream id not found"},
	StreamNameNotFound:                         {"StreamNameNotFound", "stream name not found"},
	StreamDirectoryNotFound:                    {"StreamDirectoryNotFound", "stream directory not found"},
	StreamNameAlreadyExists:                    {"StreamNameAlreadyExists", "stream name already exists"},
	InvalidStreamName:                          {"InvalidStreamName", "invalid stream name"},
	InvalidStreamID:                            {"InvalidStreamId", "invalid stream id"},
	CannotReadStreams:                          {"CannotReadStreams", "cannot read streams"},
	InvalidTopicSize:                           {"InvalidTopicSize", "invalid topic size"},
	TooManyStreams:                             {"TooManyStreams", "too many streams"},
	CannotCreateTopicsDirectory:                {"CannotCreateTopicsDirectory", "cannot create topics directory"},
	CannotCreateTopicDirectory:                 {"CannotCreateTopicDirectory", "cannot create topic directory"},
	CannotCreateTopicInfo:                      {"CannotCreateTopicInfo", "cannot create topic info"},
	CannotUpdateTopicInfo:                      {"CannotUpdateTopicInfo", "cannot update topic info"},
	CannotOpenTopicInfo:                        {"CannotOpenTopicInfo", "cannot open topic info"},
	CannotReadTopicInfo:                        {"CannotReadTopicInfo", "cannot read topic info"},
	CannotCreateTopic:                          {"CannotCreateTopic", "cannot create topic"},
	CannotDeleteTopic:                          {"CannotDeleteTopic", "cannot delete topic"},
	CannotDeleteTopicDirectory:                 {"CannotDeleteTopicDirectory", "cannot delete topic directory"},
	CannotPollTopic:                            {"CannotPollTopic", "cannot poll topic"},
	TopicIDNotFound:                            {"TopicIdNotFound", "topic id not found"},
	TopicNameNotFound:                          {"TopicNameNotFound", "topic name not found"},
	TopicNameAlreadyExists:                     {"TopicNameAlreadyExists", "topic name already exists"},
	InvalidTopicName:                           {"InvalidTopicName", "invalid topic name"},
	TooManyPartitions:                          {"TooManyPartitions", "too many partitions"},
	InvalidTopicID:                             {"InvalidTopicId", "invalid topic id"},
	CannotReadTopics:                           {"CannotReadTopics", "cannot read topics"},
	InvalidReplicationFactor:                   {"InvalidReplicationFactor", "invalid replication factor"},
	InvalidPartitionsCount:                     {"InvalidPartitionsCount", "invalid partitions count"},
	TopicDirectoryNotFound:                     {"TopicDirectoryNotFound", "topic directory not found"},
	TooManyTopics:                              {"TooManyTopics", "too many topics"},
	CannotCreatePartition:                      {"CannotCreatePartition", "cannot create partition"},
	CannotCreatePartitionsDirectory:            {"CannotCreatePartitionsDirectory", "cannot create partitions directory"},
	CannotCreatePartitionDirectory:             {"CannotCreatePartitionDirectory", "cannot create partition directory"},
	CannotOpenPartitionLogFile:                 {"CannotOpenPartitionLogFile", "cannot open partition log file"},
	CannotReadPartitions:                       {"CannotReadPartitions", "cannot read partitions"},
	CannotDeletePartition:                      {"CannotDeletePartition", "cannot delete partition"},
	CannotDeletePartitionDirectory:             {"CannotDeletePartitionDirectory", "cannot delete partition directory"},
	PartitionNotFound:                          {"PartitionNotFound", "partition not found"},
	NoPartitions:                               {"NoPartitions", "no partitions"},
	TopicFull:                                  {"TopicFull", "topic full"},
	CannotDeleteConsumerOffsetsDirectory:       {"CannotDeleteConsumerOffsetsDirectory", "cannot delete consumer offsets directory"},
	CannotDeleteConsumerOffsetFile:             {"CannotDeleteConsumerOffsetFile", "cannot delete consumer offset file"},
	CannotCreateConsumerOffsetsDirectory:       {"CannotCreateConsumerOffsetsDirectory", "cannot create consumer offsets directory"},
	PartitionIDSpaceExhausted:                  {"PartitionIdSpaceExhausted", "partition id space exhausted"},
	CannotReadConsumerOffsets:                  {"CannotReadConsumerOffsets", "cannot read consumer offsets"},
	ConsumerOffsetNotFound:                     {"ConsumerOffsetNotFound", "consumer offset not found"},
	NotResolvedConsumer:                        {"NotResolvedConsumer", "not resolved consumer"},
	CannotOpenConsumerOffsetsFile:              {"CannotOpenConsumerOffsetsFile", "cannot open consumer offsets file"},
	SegmentNotFound:                            {"SegmentNotFound", "segment not found"},
	SegmentClosed:                              {"SegmentClosed", "segment closed"},
	InvalidSegmentSize:                         {"InvalidSegmentSize", "invalid segment size"},
	CannotCreateSegmentLogFile:                 {"CannotCreateSegmentLogFile", "cannot create segment log file"},
	CannotCreateSegmentIndexFile:               {"CannotCreateSegmentIndexFile", "cannot create segment index file"},
	CannotCreateSegmentTimeIndexFile:           {"CannotCreateSegmentTimeIndexFile", "cannot create segment time index file"},
	CannotSaveMessagesToSegment:                {"CannotSaveMessagesToSegment", "cannot save messages to segment"},
	CannotSaveIndexToSegment:                   {"CannotSaveIndexToSegment", "cannot save index to segment"},
	CannotSaveTimeIndexToSegment:               {"CannotSaveTimeIndexToSegment", "cannot save time index to segment"},
	InvalidMessagesCount:                       {"InvalidMessagesCount", "invalid messages count"},
	CannotAppendMessage:                        {"CannotAppendMessage", "cannot append message"},
	CannotReadMessage:                          {"CannotReadMessage", "cannot read message"},
	CannotReadMessageID:                        {"CannotReadMessageId", "cannot read message id"},
	CannotReadMessageState:                     {"CannotReadMessageState", "cannot read message state"},
	CannotReadMessageTimestamp:                 {"CannotReadMessageTimestamp", "cannot read message timestamp"},
	CannotReadHeadersLength:                    {"CannotReadHeadersLength", "cannot read headers length"},
	CannotReadHeadersPayload:                   {"CannotReadHeadersPayload", "cannot read headers payload"},
	TooBigUserHeaders:                          {"TooBigUserHeaders", "too big user headers"},
	InvalidHeaderKey:                           {"InvalidHeaderKey", "invalid header key"},
	InvalidHeaderValue:                         {"InvalidHeaderValue", "invalid header value"},
	CannotReadMessageLength:                    {"CannotReadMessageLength", "cannot read message length"},
	CannotReadMessagePayload:                   {"CannotReadMessagePayload", "cannot read message payload"},
	TooBigMessagePayload:                       {"TooBigMessagePayload", "too big message payload"},
	TooManyMessages:                            {"TooManyMessages", "too many messages"},
	EmptyMessagePayload:                        {"EmptyMessagePayload", "empty message payload"},
	InvalidMessagePayloadLength:                {"InvalidMessagePayloadLength", "invalid message payload length"},
	CannotReadMessageChecksum:                  {"CannotReadMessageChecksum", "cannot read message checksum"},
	InvalidMessageChecksum:                     {"InvalidMessageChecksum", "invalid message checksum"},
	InvalidKeyValueLength:                      {"InvalidKeyValueLength", "invalid key value length"},
	CommandLengthError:                         {"CommandLengthError", "command length error"},
	InvalidSegmentsCount:                       {"InvalidSegmentsCount", "invalid segments count"},
	NonZeroOffset:                              {"NonZeroOffset", "non zero offset"},
	NonZeroTimestamp:                           {"NonZeroTimestamp", "non zero timestamp"},
	MissingIndex:                               {"MissingIndex", "missing index"},
	InvalidIndexesByteSize:                     {"InvalidIndexesByteSize", "invalid indexes byte size"},
	InvalidIndexesCount:                        {"InvalidIndexesCount", "invalid indexes count"},
	InvalidMessagesSize:                        {"InvalidMessagesSize", "invalid messages size"},
	TooSmallMessage:                            {"TooSmallMessage", "too small message"},
	InvalidMessageTimestampDelta:               {"InvalidMessageTimestampDelta", "invalid message timestamp delta"},
	InvalidBatchChecksum:                       {"InvalidBatchChecksum", "invalid batch checksum"},
	InvalidHeaderKind:                          {"InvalidHeaderKind", "invalid header kind"},
	UnsupportedOptionKey:                       {"UnsupportedOptionKey", "unsupported option key"},
	InvalidOptionValue:                         {"InvalidOptionValue", "invalid option value"},
	OptionsBlockTooLarge:                       {"OptionsBlockTooLarge", "options block too large"},
	CannotSendMessagesDueToClientDisconnection: {"CannotSendMessagesDueToClientDisconnection", "cannot send messages due to client disconnection"},
	BackgroundSendError:                        {"BackgroundSendError", "background send error"},
	BackgroundSendTimeout:                      {"BackgroundSendTimeout", "background send timeout"},
	BackgroundSendBufferFull:                   {"BackgroundSendBufferFull", "background send buffer full"},
	BackgroundWorkerDisconnected:               {"BackgroundWorkerDisconnected", "background worker disconnected"},
	BackgroundSendBufferOverflow:               {"BackgroundSendBufferOverflow", "background send buffer overflow"},
	ProducerSendFailed:                         {"ProducerSendFailed", "producer send failed"},
	ProducerClosed:                             {"ProducerClosed", "producer closed"},
	InvalidOffset:                              {"InvalidOffset", "invalid offset"},
	InvalidReservedField:                       {"InvalidReservedField", "invalid reserved field"},
	ConsumerGroupIDNotFound:                    {"ConsumerGroupIdNotFound", "consumer group id not found"},
	InvalidConsumerGroupID:                     {"InvalidConsumerGroupId", "invalid consumer group id"},
	ConsumerGroupNameNotFound:                  {"ConsumerGroupNameNotFound", "consumer group name not found"},
	ConsumerGroupNameAlreadyExists:             {"ConsumerGroupNameAlreadyExists", "consumer group name already exists"},
	InvalidConsumerGroupName:                   {"InvalidConsumerGroupName", "invalid consumer group name"},
	ConsumerGroupMemberNotFound:                {"ConsumerGroupMemberNotFound", "consumer group member not found"},
	CannotCreateConsumerGroupInfo:              {"CannotCreateConsumerGroupInfo", "cannot create consumer group info"},
	CannotDeleteConsumerGroupInfo:              {"CannotDeleteConsumerGroupInfo", "cannot delete consumer group info"},
	ConsumerGroupPartitionNotOwned:             {"ConsumerGroupPartitionNotOwned", "consumer group partition not owned"},
	MissingBaseOffsetRetainedMessageBatch:      {"MissingBaseOffsetRetainedMessageBatch", "missing base offset retained message batch"},
	MissingLastOffsetDeltaRetainedMessageBatch: {"MissingLastOffsetDeltaRetainedMessageBatch", "missing last offset delta retained message batch"},
	MissingMaxTimestampRetainedMessageBatch:    {"MissingMaxTimestampRetainedMessageBatch", "missing max timestamp retained message batch"},
	MissingLengthRetainedMessageBatch:          {"MissingLengthRetainedMessageBatch", "missing length retained message batch"},
	MissingPayloadRetainedMessageBatch:         {"MissingPayloadRetainedMessageBatch", "missing payload retained message batch"},
	CannotReadBatchBaseOffset:                  {"CannotReadBatchBaseOffset", "cannot read batch base offset"},
	CannotReadBatchLength:                      {"CannotReadBatchLength", "cannot read batch length"},
	CannotReadLastOffsetDelta:                  {"CannotReadLastOffsetDelta", "cannot read last offset delta"},
	CannotReadMaxTimestamp:                     {"CannotReadMaxTimestamp", "cannot read max timestamp"},
	CannotReadBatchPayload:                     {"CannotReadBatchPayload", "cannot read batch payload"},
	InvalidConnectionString:                    {"InvalidConnectionString", "invalid connection string"},
	SnapshotFileCompletionFailed:               {"SnapshotFileCompletionFailed", "snapshot file completion failed"},
	CannotSerializeResource:                    {"CannotSerializeResource", "cannot serialize resource"},
	CannotDeserializeResource:                  {"CannotDeserializeResource", "cannot deserialize resource"},
	CannotReadFile:                             {"CannotReadFile", "cannot read file"},
	CannotReadFileMetadata:                     {"CannotReadFileMetadata", "cannot read file metadata"},
	CannotSeekFile:                             {"CannotSeekFile", "cannot seek file"},
	CannotAppendToFile:                         {"CannotAppendToFile", "cannot append to file"},
	CannotWriteToFile:                          {"CannotWriteToFile", "cannot write to file"},
	CannotOverwriteFile:                        {"CannotOverwriteFile", "cannot overwrite file"},
	CannotDeleteFile:                           {"CannotDeleteFile", "cannot delete file"},
	CannotSyncFile:                             {"CannotSyncFile", "cannot sync file"},
	CannotReadIndexOffset:                      {"CannotReadIndexOffset", "cannot read index offset"},
	CannotReadIndexPosition:                    {"CannotReadIndexPosition", "cannot read index position"},
	CannotReadIndexTimestamp:                   {"CannotReadIndexTimestamp", "cannot read index timestamp"},
	TimestampOutOfRange:                        {"TimestampOutOfRange", "timestamp out of range"},
	ShardNotFound:                              {"ShardNotFound", "shard not found"},
	ShardCommunicationError:                    {"ShardCommunicationError", "shard communication error"},
	CannotBindToSocket:                         {"CannotBindToSocket", "cannot bind to socket"},
	TaskTimeout:                                {"TaskTimeout", "task timeout"},
	IOError:                                    {"IoError", "io error"},
	AlreadyAuthenticated:                       {"AlreadyAuthenticated", "already authenticated"},
	InvalidSession:                             {"InvalidSession", "invalid session"},
	IncompatibleProtocolVersion:                {"IncompatibleProtocolVersion", "incompatible protocol version"},
}
