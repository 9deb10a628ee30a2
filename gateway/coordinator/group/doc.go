// Package group serves the groups of one coordinator log partition: Kafka's classic consumer-group
// protocol (membership, rebalances, generations, session and rebalance timeouts, static members),
// KIP-848 consumer groups (ConsumerGroupHeartbeat and ConsumerGroupDescribe, whose protocol is
// package consumergroup's), committed offsets and the administrative group APIs. It keeps its state in memory, measures
// time only with a clock.Clock, and makes every change that must survive a gateway through a
// Journal, so another gateway can restore the groups with their members, generations and offsets
// and the clients never notice that their coordinator moved. It knows nothing of the network or
// of Iggy: the coordinator package supplies the Journal (the log) and the Directory (who owns
// which partition).
//
// The two types to know:
//
//   - Manager serves the groups of one log partition. Every group API reaches it as one call per
//     group; calls that must wait (JoinGroup until the rebalance completes, SyncGroup until the
//     leader's assignment is journaled) block until then or until their context ends. Restore
//     loads what the log holds before the manager serves; State gives it back for checkpoints.
//   - Router is the kafka.GroupCoordinator of a gateway (NewRouter): it splits multi-group
//     requests, asks the Directory which Manager serves each group, and answers the Directory's
//     error code for groups that are not served here.
//
// What is journaled, and when an answer is released:
//
//   - the leader's SyncGroup appends a record.Group snapshot of the whole group (every member
//     with its ids, client id and host, timeouts, full protocol list and assignment); no member
//     gets its assignment before Append returned nil. A static member replaced without a
//     rebalance, and a group whose last member left (Empty), are journaled the same way.
//   - every committed partition is one record.OffsetCommit; the commit is acknowledged only after
//     Append returned nil, and OffsetFetch sees it only then.
//   - DeleteGroups, OffsetDelete, offset expiry and DropTopics (the offsets of deleted topics)
//     append record.GroupDeleted and record.OffsetDeleted records before they take effect.
//   - every ConsumerGroupHeartbeat that changes a consumer group (a member joins, leaves, is
//     fenced, changes its subscription, epoch or partitions; the group epoch or target
//     assignment moves) appends one record.ConsumerGroup with the group's epochs, its resolved
//     topics and the members that changed or left; the heartbeat is answered only after Append
//     returned nil, and the manager keeps the new state only then. A heartbeat that changes
//     nothing appends nothing. Heartbeats of one group run one at a time in the group's journal
//     order, so each sees what the previous one left in the log; session and rebalance timeouts
//     fence members the same way. Another gateway restoring the group (RestoreConsumerGroups)
//     has every member's epoch, assignment and target, and restarts their timeouts.
//
// An Append error that wraps ErrNotCoordinator means the log partition now belongs to another
// gateway: the request is answered NOT_COORDINATOR and the manager stops serving, as after Close.
// Appends of one group go to the log one at a time, in the order of the changes they record, so
// a reader folding the log ends where this manager's memory is.
//
// Kafka's rules kept as Kafka has them: KIP-394 member ids, KIP-345 static members (a restart
// without a rebalance when the group is Stable and its selected protocol stays the same, whatever
// the new metadata), the initial rebalance delay extended while members keep coming, members
// removed that did not rejoin within the rebalance timeout or did not send SyncGroup within it,
// members kept alive while they wait in JoinGroup or SyncGroup, KIP-211 offset expiry (offsets of
// an empty group expire a retention after it became empty, those of a group that never had a
// protocol a retention after their commit).
//
// Mixed groups follow Kafka 4 with group.consumer.migration.policy=disabled for groups with
// members, and Kafka 4's conversion of empty ones: a ConsumerGroupHeartbeat join turns a group
// that does not exist or an empty classic group into a consumer group (its offsets stay); to a
// classic group with members it is GROUP_ID_NOT_FOUND ("not a consumer group"), as Kafka answers
// when it does not upgrade a group online. A JoinGroup turns an empty consumer group into a
// classic one (offsets stay); to a consumer group with members it is INCONSISTENT_GROUP_PROTOCOL
// (Kafka 4 would take the classic member into the consumer group; not done here). The classic
// Heartbeat, SyncGroup and LeaveGroup of a consumer group are UNKNOWN_MEMBER_ID (no classic
// member), DescribeGroups of one GROUP_ID_NOT_FOUND ("not a classic group"), ConsumerGroupDescribe
// of a classic one GROUP_ID_NOT_FOUND. OffsetCommit and OffsetFetch (v9, with member id and
// epoch) of a consumer group check the member as Kafka does: UNKNOWN_MEMBER_ID,
// STALE_MEMBER_EPOCH for an epoch ahead of the member's, and commits below v9 from a member
// UNSUPPORTED_VERSION; commits without a member epoch are taken while the group has no members.
// A commit at an older epoch is checked per partition (KIP-1251): taken for a partition the
// member was given at or before that epoch, STALE_MEMBER_EPOCH for the others; a fetch must be at
// the member's epoch.
// A consumer group's topics come from the requesting connection's storage (ListTopics), read at
// most once per Config.TopicRefresh.
//
// Not implemented: group size limits (GROUP_MAX_SIZE_REACHED), classic members in consumer groups
// (online migration), share groups, transactional offset commits (so require_stable never
// waits), and OffsetCommit and OffsetFetch v10 (topics by id).
package group
