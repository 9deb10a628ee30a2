package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// Authorization. Every Kafka request is authorized by one rule, package authz's table of Kafka
// operation to Iggy permission, the same table DescribeAcls shows. Iggy applies it itself to
// what the Storage asks Iggy for (topics, records, offsets stored in Iggy: TOPIC_AUTHORIZATION_
// FAILED); the handlers ask Storage.Authorize for the rest, which Iggy has no command for:
//
//	JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
//	ConsumerGroupHeartbeat                          READ on the group
//	FindCoordinator, OffsetFetch, DescribeGroups,
//	ListGroups (filters), ConsumerGroupDescribe     DESCRIBE on the group
//	DeleteGroups, OffsetDelete                      DELETE on the group
//	InitProducerId (idempotent)                     IDEMPOTENT_WRITE on the cluster
//	ElectLeaders, AlterPartitionReassignments       ALTER on the cluster
//	ListPartitionReassignments                      DESCRIBE on the cluster
//	DescribeConfigs / AlterConfigs of a broker,
//	DescribeClientQuotas / AlterClientQuotas        DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster
//	DescribeAcls / CreateAcls, DeleteAcls,
//	SCRAM of other users                            DESCRIBE / ALTER on the cluster (acls.go, scram)
//
// A refusal is the error Kafka answers for the resource: GROUP_AUTHORIZATION_FAILED,
// CLUSTER_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

// authFailed is Kafka's error for a refused operation on a resource of type res.
func authFailed(res kmsg.ACLResourceType) *kerr.Error {
	switch res {
	case kmsg.ACLResourceTypeGroup:
		return kerr.GroupAuthorizationFailed
	case kmsg.ACLResourceTypeCluster:
		return kerr.ClusterAuthorizationFailed
	case kmsg.ACLResourceTypeTransactionalId:
		return kerr.TransactionalIDAuthorizationFailed
	}
	return kerr.TopicAuthorizationFailed
}

// authCode asks whether the connection's user may do op on the resource: 0 when it may, else
// the error to answer (the authorization error of the resource, or why it could not be asked).
func (c *conn) authCode(req *request, res kmsg.ACLResourceType, name string, op kmsg.ACLOperation) int16 {
	ok, err := req.storage.Authorize(req.ctx, authz.ACL{Resource: res, Name: name, Op: op})
	switch {
	case err != nil:
		return errCode(err)
	case !ok:
		return authFailed(res).Code
	}
	return 0
}

// groupCode is authCode for a group.
func (c *conn) groupCode(req *request, group string, op kmsg.ACLOperation) int16 {
	return c.authCode(req, kmsg.ACLResourceTypeGroup, group, op)
}

// clusterCode is authCode for the cluster.
func (c *conn) clusterCode(req *request, op kmsg.ACLOperation) int16 {
	return c.authCode(req, kmsg.ACLResourceTypeCluster, authz.ClusterName, op)
}

// codeErr is Refuse for an error code.
func codeErr(code int16, msg string) error {
	e, ok := kerr.ErrorForCode(code).(*kerr.Error)
	if !ok {
		e = kerr.UnknownServerError
	}
	return Refuse(e, "%s", msg)
}
