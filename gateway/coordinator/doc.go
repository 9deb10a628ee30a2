// Package coordinator runs the coordinator log: it owns the Iggy stream `<stream>.meta`, holds
// leases on the 16 partitions of its `coordinators` topic through the Iggy consumer group
// `kafka-gateways`, replays a gained partition into a group.Manager, and makes every change of a
// group durable by appending it to the log and reading it back. It also keeps the fleet view
// (which gateways are live, who is controller) from the owner announcements on
// `coordinator_owners`. Consumers in a Kafka group therefore keep their members, generations and
// offsets when the gateway coordinating them stops: another gateway takes the partition over.
//
// The two types to know: Coordinator (Start, Groups, Fleet, Leave, Close) and Config.
//
// # Log shape
//
// Stream `<stream>.meta`, topic `coordinators` with exactly 16 partitions (group g lives in
// partition record.Partition(g) = FNV-1a 32 over the UTF-8 id, mod 16), topic
// `coordinator_owners` with 1 partition. Start creates what is missing and refuses to start when
// either topic exists with another partition count, naming the topic, the count found and the
// count needed.
//
// # Record format, version 1
//
// One record per Iggy message payload. All integers are little-endian. "uvarint" and "varint"
// are Go's encoding/binary varints (varint is zigzag). A "string" is a uvarint byte length then
// the UTF-8 bytes. "bytes" is a uvarint of length+1 then the bytes, where 0 means nil, so an
// empty member metadata stays empty and an absent one stays absent. A "time" is Unix
// nanoseconds, 0 meaning unset.
//
// Header (18 bytes, every record):
//
//	offset 0   u8       version, 1. A reader that finds another version reports it and skips
//	                    the record (record.ErrVersion).
//	offset 1   u8       type: 1 claim, 2 group, 3 offset-commit, 4 group-deleted,
//	                    5 offset-deleted, 6 checkpoint.
//	offset 2   u64      claim: the claim number the writer held (a claim carries its own).
//	offset 10  i64      time: the writer's wall clock when it appended, Unix ns.
//
// Body by type:
//
//	1 claim           varint node id, string Kafka address (host:port).
//	2 group           a group (below).
//	3 offset-commit   string group, string topic, then an offset (below).
//	4 group-deleted   string group.
//	5 offset-deleted  string group, string topic, varint partition.
//	6 checkpoint      uvarint through (the log offset the state is as of, inclusive),
//	                  uvarint group count, that many groups, uvarint run count, then runs:
//	                  string group, string topic, uvarint n (at least 1), n offsets. A run holds
//	                  consecutive offsets of one group and topic, so 10 partitions of a group
//	                  name it once.
//
//	group   string name, varint generation, string protocol type, string protocol (chosen
//	        assignor, "" while none), string leader member id, string state (Kafka's name),
//	        uvarint member count, then per member: string member id, string group instance id
//	        ("" for dynamic), string client id, string client host, varint session timeout ns,
//	        varint rebalance timeout ns, uvarint protocol count, per protocol (in the member's
//	        JoinGroup order) string name and bytes metadata, then bytes assignment.
//	offset  varint partition, varint offset, varint leader epoch (-1 none), string metadata,
//	        varint expire time (Unix ns, 0 never).
//
// A record ends exactly where its body ends; trailing bytes, a count larger than the remaining
// bytes could hold, or a truncated field is a *record.DecodeError. Readers show such records and
// go on. The golden records under record/testdata/golden are checked byte for byte.
//
// # Validity
//
// record.State folds a partition in log order. A claim is valid when its number is above every
// claim before it; any other record is valid only when its claim equals the newest claim before
// it. Void records change nothing for any reader. A writer appends, then polls the partition from
// its record's offset on, applying everything in between: if a newer claim precedes its record,
// the append fails with group.ErrNotCoordinator and the partition's manager is closed.
//
// # Checkpoints
//
// The owner writes a checkpoint (record.State.Snapshot) after 10,000 valid records and at least
// once every 24 h; State counts the records since the last one, so deciding is O(1) per append.
// To find the last checkpoint without scanning, the owner stores the checkpoint record's log
// offset as the Iggy consumer offset of the single consumer numbered 1000+partition on
// `coordinators`, partition p (consumer offsets are per partition, so the consumer id only
// needs to be fixed). A gaining owner reads that consumer offset (one request), polls the record
// there and, if it is a valid-looking checkpoint, starts its State at it; when the offset is
// missing, or the record there is not a checkpoint, it replays from the start of the partition.
// The stored offset is a hint: a stale one (an older checkpoint) only costs a longer replay,
// since records after it are replayed in order. Replay never skips records: if a poll returns
// messages starting after the expected offset (retention removed a segment), the replay starts
// over from the stored checkpoint, and fails when that does not cover the gap, rather than
// lose a deletion.
//
// # Lease and the split-brain bound
//
// The lease is the caller's own assignment in `kafka-gateways`, read with SyncConsumerGroup
// (code 606) on a dedicated iggy.Session every LeasePoll (default HeartbeatInterval/10). A
// partition is served only while (a) the Session is unbroken and (b) the last sync that listed
// it is younger than LeaseBound. On a session error the manager of every owned partition is
// closed at once.
//
// Embedded store: a closed connection ends the Iggy session at once and hands its partitions to
// the others immediately; that is the case (a), checked on every sync and every journal append.
// A gateway that is alive but stalled (SIGSTOP, a long GC pause) keeps its connection open; the
// store evicts a silent group member after 1.2 x its heartbeat interval H
// (gateway/store/groups.go, sweepStale), counted from the member's last request. Our last
// confirming sync is itself a request, so the earliest moment another gateway can be given the
// partition is last_sync + 1.2 H. LeaseBound defaults to 1.2 H - 2 x LeasePoll - 100 ms
// (for H = 5 s: 6 s - 1 s - 0.1 s = 4.9 s), leaving a margin for clock reading and a request in
// flight; Start refuses a LeaseBound at or above 1.2 H.
//
// Iggy cluster: a session outlives its connection until the server's session timeout T
// (1.2 x the server's heartbeat.interval, 36 s by default); a gateway cut off from the cluster
// cannot learn that it lost the partition, and Iggy may hand the partition over T after the
// gateway's last request reached the leader. The same rule holds with H = the server's
// heartbeat.interval: LeaseBound below 1.2 H measured from our last sync, which is after the
// server saw it, so the gateway stops before another can be assigned. The cluster must use the
// same H as Config.HeartbeatInterval (Start cannot read it); a smaller server H breaks the bound.
// A gateway frozen past its bound checks the age of its lease before every answer, so on waking
// it answers NOT_COORDINATOR before its next sync.
//
// # Without the log
//
// With Config.Log false there is no lease: the gateway with the lowest node id in Brokers
// coordinates every group, holds them in one group.Manager, and keeps offsets as Iggy consumer
// offsets of a consumer group named like the Kafka group (a Journal over StoreOffset); group
// membership is then lost when that gateway restarts, as in the original.
package coordinator
