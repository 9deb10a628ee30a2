// Package fleet owns the coordinator log's shape and what it says about the fleet of gateways:
// the Iggy names (MetaStream, LogTopic, OwnersTopic, DrainsTopic, LeaseGroup,
// CheckpointConsumer), the owner announcements and the drain requests with their encodings, the
// lease rule (which member of LeaseGroup holds which log partition), and View, the fold that
// turns OwnersTopic and DrainsTopic into nodes, owners and the drained set. The records of
// LogTopic, their header, the validity rule and the per-partition fold are package record's.
//
// Gateways (package coordinator) and operator tools (the packages under inspect) import both packages and
// keep no reader, name or rule of their own, so `claims` and `drain` can never see another fleet
// than the gateways act on.
//
// The two types to know are View (feed it OwnersTopic and DrainsTopic messages in log order; ask
// it for Owner, State, Nodes, Serving) and Announcement.
//
// # Lease
//
// Lease is rendezvous hashing with bounded loads over the member ids of LeaseGroup (Assign):
// every member holds ⌊16/n⌋ or ⌈16/n⌉ partitions, a departure or a drain moves the departing
// gateway's partitions and a few others, and a gateway that joins takes back about its share. The coordinator reads the membership (GetConsumerGroup) with the same session that holds
// its own membership and computes its partitions with Lease; Iggy's own assignment is not used.
// Every gateway of a fleet must run the same lease rule: a fleet must not mix gateways of
// announcement versions below 4, which used Iggy's assignment.
//
// # Node states
//
// Serving, Draining, Drained, Gone (see NodeState). A node is Gone when its newest announcement is
// older than Live, says it is leaving, or names a lease member id that is no longer a member.
package fleet
