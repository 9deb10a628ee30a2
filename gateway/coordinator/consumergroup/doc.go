// Package consumergroup is Kafka's KIP-848 consumer group protocol for one group, as a pure state
// machine: the broker computes every member's target assignment with a server-side assignor
// (uniform or range), and each member moves toward it one heartbeat at a time, revoking before
// anything it gave up is assigned to another member, so that no partition is ever owned by two
// members. It follows Kafka 4's group coordinator (GroupMetadataManager, ConsumerGroup,
// CurrentAssignmentBuilder, TargetAssignmentBuilder and the uniform and range assignors) and
// answers with the codes Kafka answers with.
//
// The two things to know:
//
//   - Group holds one group: the group epoch (bumped when a member joins, leaves or changes its
//     subscription and when a subscribed topic changes), the target assignment epoch, the topics
//     the group resolved, and every member with its epoch, previous epoch, reconciliation state,
//     assigned partitions, partitions pending revocation and target. Its methods never change
//     it: Heartbeat and Fence return an Outcome with the next Group and the record.ConsumerGroup
//     that makes the change durable, and the caller keeps the next Group only once the record is
//     in the coordinator log. So what the group answers is always what the log holds, and a
//     gateway that restores the group from the log (FromRecord) answers the same.
//   - Validate is Kafka's check of a heartbeat before it reaches a group.
//
// There is no clock and no I/O here: the caller (gateway/coordinator/group) runs the session and
// rebalance timeouts on its clock and calls Fence when one passes, and hands Heartbeat the topics
// it read (name, id, partitions). The rules kept as Kafka has them: member epochs checked on every
// heartbeat (FENCED_MEMBER_EPOCH ahead or behind, except a member one epoch behind that owns no
// more than its assignment, whose answer was lost), a heartbeat with epoch 0 rejoins a known member
// in place (KAFKA-19233), member ids chosen by the client from v1 (KIP-1082), static members
// (group.instance.id) that leave for now with epoch -2 and come back under a new member id with
// their partitions (UNRELEASED_INSTANCE_ID while the instance is in use, FENCED_INSTANCE_ID for an
// old member id), regular expression subscriptions (v1, RE2, matching whole topic names), the
// assignor most members ask for (uniform when none), the member epoch checks of OffsetCommit and
// OffsetFetch (CommitCode, FetchCode) with KIP-1251's assignment epochs (every assigned partition
// keeps the member epoch it was given at, so a commit that raced an epoch bump is taken for the
// partitions the member held), and an empty group's assignment epoch catching up with its group
// epoch (KAFKA-20442).
package consumergroup
