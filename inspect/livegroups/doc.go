// Package livegroups compares what the coordinator log holds of consumer groups with what the
// gateways answer through Kafka requests (kadm): DiffLive lists every difference for one log
// partition's groups (`replay --diff-live`, through CompareReplay), and DescribeGroup joins the
// log's side of one group (where the log puts it, its members and offsets) with the fleet's
// (FindCoordinator, DescribeGroups, OffsetFetch, ListOffsets and record times for the lag), for
// `claims --group`, `group describe` and the console's group page.
//
// The two types to know are Difference, one field on which the log and the gateways disagree,
// and GroupDetail, one group as both sides show it. ErrNoGateway tells an unreachable fleet from
// a gateway that answered with an error code.
package livegroups
