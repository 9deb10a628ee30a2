package kafka

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AlterPartitionReassignments: v0-1
//
// Behavior:
//   - A partition's replicas are its leader alone, the gateway Metadata names (chosen from the
//     fleet's live, undrained gateways), and Iggy keeps its data: there is nothing to move, and
//     no reassignment is ever in progress. Per partition:
//   - null replicas (cancel a reassignment) is NO_REASSIGNMENT_IN_PROGRESS;
//   - the current replicas exactly is NONE, as Kafka answers a reassignment to where the
//     partition already is;
//   - any other list is INVALID_REPLICA_ASSIGNMENT, saying that leaders follow the fleet
//     (drain a gateway to move its partitions; see docs/operations.md);
//   - a partition of an unknown topic, or beyond its count, UNKNOWN_TOPIC_OR_PARTITION.
//   - A partition named twice is INVALID_REQUEST for each naming.
//   - v1's AllowReplicationFactorChange changes nothing. Any gateway answers, controller or not.
func init() { regKey(alterPartitionReassignmentsKey, 0, 1) }

func (c *conn) handleAlterPartitionReassignments(req *request) (kmsg.Response, error) {
	areq := req.kreq.(*kmsg.AlterPartitionAssignmentsRequest)
	resp := areq.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	if code := c.clusterCode(req, kmsg.ACLOperationAlter); code != 0 {
		resp.ErrorCode = code
		req.setErr(code)
		return resp, nil
	}
	view := c.s.brokerView()
	named := map[string]map[int32]int{}
	for _, t := range areq.Topics {
		if named[t.Topic] == nil {
			named[t.Topic] = map[int32]int{}
		}
		for _, p := range t.Partitions {
			named[t.Topic][p.Partition]++
		}
	}
	for _, t := range areq.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = t.Topic
		info, err := c.requestTopic(req, t.Topic)
		for _, p := range t.Partitions {
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition = p.Partition
			switch {
			case named[t.Topic][p.Partition] > 1:
				sp.ErrorCode = kerr.InvalidRequest.Code
				sp.ErrorMessage = errMessage(fmt.Errorf("partition %d of %s named twice", p.Partition, t.Topic))
			case err != nil:
				sp.ErrorCode = errCode(err)
			case p.Partition < 0 || p.Partition >= info.Partitions:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case p.Replicas == nil:
				sp.ErrorCode = kerr.NoReassignmentInProgress.Code
			default:
				leader := view.leaderOf(t.Topic, info.Partitions, p.Partition)
				if !slices.Equal(p.Replicas, []int32{leader}) {
					sp.ErrorCode = kerr.InvalidReplicaAssignment.Code
					sp.ErrorMessage = errMessage(fmt.Errorf("partition %d of %s has one replica, its leader %d, which follows the gateway fleet; replicas %v cannot be assigned (drain a gateway to move its partitions)",
						p.Partition, t.Topic, leader, p.Replicas))
				}
			}
			req.setErr(sp.ErrorCode)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}
