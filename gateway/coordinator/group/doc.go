// Package group is Kafka's classic consumer-group protocol for the groups of one coordinator log
// partition: membership, rebalances, generations, session and rebalance timeouts, static members,
// committed offsets and the administrative group APIs. It keeps its state in memory, measures
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
// Not implemented: group size limits (GROUP_MAX_SIZE_REACHED), the KIP-848 consumer protocol,
// share groups, transactional offset commits (so require_stable never waits), and topic ids
// (no topic has one here).
package group
