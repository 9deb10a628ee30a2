package kafka

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	produceKey                     int16 = 0
	fetchKey                       int16 = 1
	listOffsetsKey                 int16 = 2
	metadataKey                    int16 = 3
	offsetCommitKey                int16 = 8
	offsetFetchKey                 int16 = 9
	findCoordinatorKey             int16 = 10
	joinGroupKey                   int16 = 11
	heartbeatKey                   int16 = 12
	leaveGroupKey                  int16 = 13
	syncGroupKey                   int16 = 14
	describeGroupsKey              int16 = 15
	listGroupsKey                  int16 = 16
	saslHandshakeKey               int16 = 17
	apiVersionsKey                 int16 = 18
	createTopicsKey                int16 = 19
	deleteTopicsKey                int16 = 20
	deleteRecordsKey               int16 = 21
	initProducerIDKey              int16 = 22
	offsetForLeaderEpochKey        int16 = 23
	addPartitionsToTxnKey          int16 = 24
	addOffsetsToTxnKey             int16 = 25
	endTxnKey                      int16 = 26
	writeTxnMarkersKey             int16 = 27
	txnOffsetCommitKey             int16 = 28
	describeACLsKey                int16 = 29
	createACLsKey                  int16 = 30
	deleteACLsKey                  int16 = 31
	describeConfigsKey             int16 = 32
	alterConfigsKey                int16 = 33
	saslAuthenticateKey            int16 = 36
	createPartitionsKey            int16 = 37
	deleteGroupsKey                int16 = 42
	electLeadersKey                int16 = 43
	incAlterConfigsKey             int16 = 44
	alterPartitionReassignmentsKey int16 = 45
	listPartitionReassignmentsKey  int16 = 46
	offsetDeleteKey                int16 = 47
	describeClientQuotasKey        int16 = 48
	alterClientQuotasKey           int16 = 49
	describeUserSCRAMKey           int16 = 50
	alterUserSCRAMKey              int16 = 51
	describeClusterKey             int16 = 60
	describeProducersKey           int16 = 61
	describeTransactionsKey        int16 = 65
	listTransactionsKey            int16 = 66
	consumerGroupHeartbeatKey      int16 = 68
	consumerGroupDescribeKey       int16 = 69
)

// isGroupKey reports whether key is one of the consumer-group APIs, which a Server serves only
// with a Config.Groups and which run one at a time per connection.
func isGroupKey(key int16) bool {
	switch key {
	case offsetCommitKey, offsetFetchKey, findCoordinatorKey, joinGroupKey, heartbeatKey,
		leaveGroupKey, syncGroupKey, describeGroupsKey, listGroupsKey, deleteGroupsKey, offsetDeleteKey,
		consumerGroupHeartbeatKey, consumerGroupDescribeKey:
		return true
	}
	return false
}

// handle answers one request. A nil response means no answer is written (acks=0 produce); an
// error closes the connection.
func (c *conn) handle(req *request) (kmsg.Response, error) {
	if req.kreq == nil || (isGroupKey(req.key) && c.s.cfg.Groups == nil) || (isTxnKey(req.key) && c.s.cfg.Txns == nil) {
		return c.unsupported(req)
	}
	if (req.key == produceKey || req.key == fetchKey) && (c.s.lameDuck.Load() || c.s.splitOff()) {
		return c.notLeader(req)
	}
	switch req.key {
	case produceKey:
		return c.handleProduce(req)
	case fetchKey:
		return c.handleFetch(req)
	case listOffsetsKey:
		return c.handleListOffsets(req)
	case metadataKey:
		return c.handleMetadata(req)
	case offsetCommitKey:
		return c.handleOffsetCommit(req)
	case offsetFetchKey:
		return c.handleOffsetFetch(req)
	case findCoordinatorKey:
		return c.handleFindCoordinator(req)
	case joinGroupKey:
		return c.handleJoinGroup(req)
	case heartbeatKey:
		return c.handleHeartbeat(req)
	case leaveGroupKey:
		return c.handleLeaveGroup(req)
	case syncGroupKey:
		return c.handleSyncGroup(req)
	case describeGroupsKey:
		return c.handleDescribeGroups(req)
	case listGroupsKey:
		return c.handleListGroups(req)
	case saslHandshakeKey:
		return c.handleSASLHandshake(req)
	case apiVersionsKey:
		return c.handleApiVersions(req)
	case createTopicsKey:
		return c.handleCreateTopics(req)
	case deleteTopicsKey:
		return c.handleDeleteTopics(req)
	case deleteRecordsKey:
		return c.handleDeleteRecords(req)
	case initProducerIDKey:
		return c.handleInitProducerID(req)
	case addPartitionsToTxnKey:
		return c.handleAddPartitionsToTxn(req)
	case addOffsetsToTxnKey:
		return c.handleAddOffsetsToTxn(req)
	case endTxnKey:
		return c.handleEndTxn(req)
	case writeTxnMarkersKey:
		return c.handleWriteTxnMarkers(req)
	case txnOffsetCommitKey:
		return c.handleTxnOffsetCommit(req)
	case offsetForLeaderEpochKey:
		return c.handleOffsetForLeaderEpoch(req)
	case describeACLsKey:
		return c.handleDescribeACLs(req)
	case createACLsKey:
		return c.handleCreateACLs(req)
	case deleteACLsKey:
		return c.handleDeleteACLs(req)
	case describeConfigsKey:
		return c.handleDescribeConfigs(req)
	case alterConfigsKey:
		return c.handleAlterConfigs(req)
	case saslAuthenticateKey:
		return c.handleSASLAuthenticate(req)
	case createPartitionsKey:
		return c.handleCreatePartitions(req)
	case deleteGroupsKey:
		return c.handleDeleteGroups(req)
	case electLeadersKey:
		return c.handleElectLeaders(req)
	case alterPartitionReassignmentsKey:
		return c.handleAlterPartitionReassignments(req)
	case listPartitionReassignmentsKey:
		return c.handleListPartitionReassignments(req)
	case incAlterConfigsKey:
		return c.handleIncrementalAlterConfigs(req)
	case offsetDeleteKey:
		return c.handleOffsetDelete(req)
	case describeClientQuotasKey:
		return c.handleDescribeClientQuotas(req)
	case alterClientQuotasKey:
		return c.handleAlterClientQuotas(req)
	case describeUserSCRAMKey:
		return c.handleDescribeUserSCRAMCredentials(req)
	case alterUserSCRAMKey:
		return c.handleAlterUserSCRAMCredentials(req)
	case describeClusterKey:
		return c.handleDescribeCluster(req)
	case describeProducersKey:
		return c.handleDescribeProducers(req)
	case describeTransactionsKey:
		return c.handleDescribeTransactions(req)
	case listTransactionsKey:
		return c.handleListTransactions(req)
	case consumerGroupHeartbeatKey:
		return c.handleConsumerGroupHeartbeat(req)
	case consumerGroupDescribeKey:
		return c.handleConsumerGroupDescribe(req)
	}
	return c.unsupported(req)
}

// unsupported answers a key or version we do not serve with UNSUPPORTED_VERSION rather than
// closing the connection. ApiVersions answers per KIP-511; other responses carry the code in
// their top-level error field when they have one. A key kmsg does not know gets a bare header
// followed by the code.
func (c *conn) unsupported(req *request) (kmsg.Response, error) {
	req.setErr(kerr.UnsupportedVersion.Code)
	if req.key == apiVersionsKey {
		return c.apiVersionsUnsupported(), nil
	}
	resp := kmsg.ResponseForKey(req.key)
	if resp == nil {
		return rawResponse{}, nil
	}
	resp.SetVersion(min(max(req.version, 0), resp.MaxVersion()))
	if f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode"); f.IsValid() && f.Kind() == reflect.Int16 && f.CanSet() {
		f.SetInt(int64(kerr.UnsupportedVersion.Code))
	}
	return resp, nil
}

// rawResponse is the body of an answer to a key kmsg cannot describe: just the error code.
type rawResponse struct{}

func (rawResponse) Key() int16                { return -1 }
func (rawResponse) MaxVersion() int16         { return 0 }
func (rawResponse) SetVersion(int16)          {}
func (rawResponse) GetVersion() int16         { return 0 }
func (rawResponse) IsFlexible() bool          { return false }
func (rawResponse) RequestKind() kmsg.Request { return nil }
func (rawResponse) ReadFrom([]byte) error     { return nil }
func (rawResponse) AppendTo(b []byte) []byte {
	return append(b, byte(uint16(kerr.UnsupportedVersion.Code)>>8), byte(kerr.UnsupportedVersion.Code))
}
