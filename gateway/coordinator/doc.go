// Package coordinator runs the coordinator log: it creates and checks the Iggy stream
// `<stream>.meta`, holds leases on the 16 partitions of its `coordinators` topic through its
// membership of the Iggy consumer group `kafka-gateways`, replays a gained partition into a
// group.Manager, and makes every change of a group durable by appending it to the log and reading
// it back. The log's names, its records and their validity, the announcements, the drain
// requests, the lease rule and the fold of the fleet are not this package's: packages record and
// fleet own them, and the operator tools read the log with the same code. Consumers in a Kafka group therefore keep their members, generations and
// offsets when the gateway coordinating them stops: another gateway takes the partition over.
// So do KIP-848 consumer groups, with their group epoch, target assignment and every member's
// epoch and partitions: the partition's manager restores them from the log (record.State
// folds their consumer-group records) before it serves.
//
// The two types to know: Coordinator (Start, Groups, Fleet, Leave, Close) and Config.
//
// # Log shape
//
// Stream `<stream>.meta`, topic `coordinators` with exactly 16 partitions (group g lives in
// partition record.Partition(g) = FNV-1a 32 over the UTF-8 id, mod 16), topic
// `coordinator_owners` with 1 partition, topic `coordinator_drains` with 1 partition. Start
// creates what is missing and refuses to start when a topic exists with another partition count,
// naming the topic, the count found and the count needed (logio.EnsureShape, the only creator of
// these: no operator command creates a topic).
//
// # Owners and the fleet
//
// Every gateway appends a fleet.Announcement (node, address, the partitions it serves with their
// claims, the ones it released, whether it is leaving or drained, its lease member id, its
// version) to `coordinator_owners` every AnnounceInterval (1 s) and at once when its partitions
// change, and reads the topic every FollowInterval (100 ms) into a fleet.View, in log order. The
// owner of a partition is this gateway while it holds it, else the live gateway whose
// announcement lists it with the highest claim (fleet.View.Owner). While none is known (every
// owner stopped because its lease went unconfirmed for HandoverBound, as all gateways of a
// loaded machine may at once, or the partition is moving), FindCoordinator names the live
// gateway the lease rule gives the partition over the membership last read
// (fleet.View.LeaseMember), which answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR until
// it serves: codes every client retries, as Kafka names a coordinator that is still loading.
// Only when the lease names no live gateway either does FindCoordinator answer
// COORDINATOR_NOT_AVAILABLE (15), which franz-go's transactional producer takes as final for
// an AddPartitionsToTxn. A gateway is live when it announced
// within Live (5 s), is not leaving, and its announced lease member id is still a member of
// `kafka-gateways` as the last read of the membership says (the lease loop reads it every
// LeasePoll). A gateway that announced it is leaving stays listed as a broker for 2 s after
// that announcement, leading no partition (Kafka's order: leaderships move first, the broker
// leaves the list later). The controller is the owner of log partition 0. Announcement times are
// the writers' clocks, so the fleet's clocks must agree to well within Live.
//
// # The broker view
//
// What the Kafka handlers ask of the fleet (Fleet: the live gateways, those leading nothing,
// the controller) is one immutable kafka.FleetView behind an atomic pointer. The follow loops
// make it: every read of `coordinator_owners` and `coordinator_drains`, every read of the
// membership, and every FollowInterval (time moves gateways out of it), and they replace it only
// when it changed. A Kafka request takes one view and answers every partition from it, with no
// lock held and nothing read from Iggy: Metadata and DeleteRecords answer in their usual time
// whatever Iggy does. A gateway that crashed is out of the view at the next membership read; a
// client that lost its connection to it asks sooner, and the Kafka listener leaves it out because
// its port refuses connections (package kafka, reach.go).
//
// Live during a store outage: while the reads of `coordinator_owners` fail, no gateway can
// announce itself, so the view is made as of the last read that succeeded: the gateways live
// then stay live (with the membership last read, and the drains last read) until a read
// succeeds again, and Metadata goes on naming them and their partitions' leaders. The store being
// down, a gateway lists the same peers whether it can reach Iggy or not. A gateway that crashed
// during the outage is left out by the Kafka listener's check that its port accepts connections;
// one that stalled (SIGSTOP) stays listed until the store is back.
//
// # Record format, versions 2 to 7
//
// One record per Iggy message payload. All integers are little-endian. "uvarint" and "varint"
// are Go's encoding/binary varints (varint is zigzag). A "string" is a uvarint byte length then
// the UTF-8 bytes. "bytes" is a uvarint of length+1 then the bytes, where 0 means nil, so an
// empty member metadata stays empty and an absent one stays absent. A "time" is Unix
// nanoseconds, 0 meaning unset. A "uuid" is 16 raw bytes (a Kafka topic id).
//
// Header (18 bytes, every record):
//
//	offset 0   u8       version: Encode writes 7 for a transaction record, or a checkpoint
//	                    holding a transaction, with a last or next producer, 6 for a topic
//	                    record or a checkpoint holding topics, 5 for a txn-offsets record or a checkpoint holding
//	                    txn-offsets, 4 for a transaction record or a checkpoint
//	                    holding a transaction with staged offsets, 3 for the other transaction
//	                    records and checkpoints that hold transactions, 2 for every other
//	                    record, so a log without transactions stays readable by gateways that
//	                    know version 2 only. Version 4 is version 3 with the staged offsets
//	                    of a transaction (written by an earlier release; a transaction's
//	                    group offsets now live in txn-offsets records). Version 5 adds type 9
//	                    and a checkpoint's txn-offsets; version 6 adds type 10 and a
//	                    checkpoint's topics; version 7 a transaction's last and next producer.
//	                    Decode reads 1 to 7, version 1 being version 2 without type 7 and
//	                    without a checkpoint's consumer groups. A reader that finds another
//	                    version reports it and skips the record (record.ErrVersion).
//	offset 1   u8       type: 1 claim, 2 group, 3 offset-commit, 4 group-deleted,
//	                    5 offset-deleted, 6 checkpoint, 7 consumer-group (version 2+),
//	                    8 transaction (version 3), 9 txn-offsets (version 5), 10 topic
//	                    (version 6).
//	offset 2   u64      claim: the claim number the writer held (a claim carries its own).
//	offset 10  i64      time: the writer's wall clock when it appended, Unix ns.
//
// Body by type:
//
//	1 claim           varint node id, string Kafka address (host:port).
//	2 group           a group (below).
//	3 offset-commit   string group, string topic, then an offset (below).
//	4 group-deleted   string group (a classic or a consumer group, and its offsets).
//	5 offset-deleted  string group, string topic, varint partition.
//	6 checkpoint      uvarint through (the log offset the state is as of, inclusive),
//	                  uvarint group count, that many groups, uvarint run count, then runs:
//	                  string group, string topic, uvarint n (at least 1), n offsets. A run holds
//	                  consecutive offsets of one group and topic, so 10 partitions of a group
//	                  name it once. Version 2 goes on with uvarint consumer group count and that
//	                  many consumer groups, each whole (removed count 0). Version 3 goes on
//	                  with uvarint transaction count (at least 1; version 5 and later: any) and
//	                  that many transactions. Version 5 goes on with uvarint txn-offsets count
//	                  (at least 1; version 6: any) and that many txn-offsets (below, end 0
//	                  only), sorted by group and producer id. Version 6 goes on with uvarint
//	                  topic count and that many topics (each naming an incarnation).
//	7 consumer-group  a consumer group (below): a change of one KIP-848 consumer group.
//	8 transaction     a transaction (below): the whole state of one transactional id after a
//	                  change (package txn says which changes); the last valid one of an id is
//	                  its state, and state Dead removes the id.
//	9 txn-offsets     a txn-offsets (below), in the log partition of its group: with end 0
//	                  every offset one transactional producer committed to the group
//	                  (TxnOffsetCommit) so far, replacing the producer's earlier record of the
//	                  group; with end 1 or 2 the marker that ended them (a commit is appended
//	                  after the offset-commit records of those offsets, in one batch), or,
//	                  naming no group (""), a marker that found nothing of the producer
//	                  pending, appended so that only the partition's current owner answers it.
//	10 topic          a topic (below): from here on the partition's offsets of the topic belong
//	                  to that incarnation; id 0 with time 0 says the partition holds none.
//
//	group   string name, varint generation, string protocol type, string protocol (chosen
//	        assignor, "" while none), string leader member id, string state (Kafka's name),
//	        uvarint member count, then per member: string member id, string group instance id
//	        ("" for dynamic), string client id, string client host, varint session timeout ns,
//	        varint rebalance timeout ns, uvarint protocol count, per protocol (in the member's
//	        JoinGroup order) string name and bytes metadata, then bytes assignment.
//	offset  varint partition, varint offset, varint leader epoch (-1 none), string metadata,
//	        varint expire time (Unix ns, 0 never).
//	consumer group
//	        string name, varint group epoch, varint assignment epoch (the group epoch the
//	        target assignment was computed at), uvarint topic count, per topic (the subscribed
//	        topics that exist, by name) string name, uuid id, varint partition count; uvarint
//	        member count, per member (by member id) a consumer member; uvarint removed count,
//	        that many strings (member ids that left, sorted).
//	consumer member
//	        string member id, string group instance id ("" dynamic), string rack id ("" none),
//	        string client id, string client host, varint rebalance timeout ns, uvarint
//	        subscribed topic count and that many strings (sorted), string subscribed regex (""
//	        none), string server assignor ("" none), varint member epoch (-2: a static member
//	        away), varint previous member epoch, u8 state (0 stable, 1 unrevoked partitions,
//	        2 unreleased partitions), then three assignments: assigned, pending revocation,
//	        target.
//	transaction
//	        string transactional id, varint producer id, varint producer epoch, varint
//	        timeout ns, u8 state (0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort,
//	        4 CompleteCommit, 5 CompleteAbort, 6 Dead), uvarint topic count, per topic (sorted,
//	        unique) string name, uvarint n (at least 1), n varint partitions (ascending,
//	        unique); uvarint group count and that many strings (sorted, unique); time started
//	        (of the open transaction, 0 none), time updated; in version 4 and later, uvarint staged
//	        offset count, per offset (sorted by group, topic, partition; unique) string group,
//	        string topic, varint partition, varint offset, varint leader epoch (-1 none),
//	        string metadata (only a transaction restored from a version-4 log holds any); in
//	        version 7,
//	        the last producer then the next producer, each u8 0 (none) or u8 1, varint producer
//	        id, varint epoch (both >= 0): the pair the producer held before its last bump
//	        (KIP-360 and transactions-v2 retries), and the pair the Complete record of a
//	        transactions-v2 end that spent the epochs takes (package txn).
//	txn-offsets
//	        string group, string transactional id, varint producer id, varint producer
//	        epoch, u8 end (0 pending, 1 commit, 2 abort), uvarint offset count (0 for an end),
//	        per offset (by topic, partition; unique) string topic, varint partition, varint
//	        offset, varint leader epoch (-1 none), string metadata.
//	topic   string name, uvarint Iggy topic id, uvarint the topic's Iggy creation time
//	        (microseconds): Iggy reuses a deleted topic's id, the time tells them apart.
//	assignment
//	        uvarint topic count, per topic (by topic id) uuid topic id, uvarint n (at least 1),
//	        n varint partitions (ascending), uvarint m (0 or n) and m varint epochs: in a
//	        member's assigned partitions the member epoch each was given at (KIP-1251), m 0 in
//	        the other two.
//
// A consumer-group record is folded by record.MergeConsumerGroup: its epochs and topics replace
// the group's, its members replace or join the group's members of the same id, its removed ids
// leave, every other member stays as it was. A name is one kind of group at a time: a
// consumer-group record drops a classic snapshot of its name and a group record drops a consumer
// group of its name, their offsets staying (Kafka turns an empty group of one kind into the other
// on the first request of the other protocol).
//
// A record ends exactly where its body ends; trailing bytes, a count larger than the remaining
// bytes could hold, or a truncated field is a *record.DecodeError. Readers show such records and
// go on. The golden records under record/testdata/golden are checked byte for byte, those of
// version 1 under record/testdata/golden/v1 are read back.
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
// offset as the Iggy consumer offset of the single consumer named `kafka-checkpoints` on
// `coordinators`, partition p (consumer offsets are kept per partition, so one name serves all
// 16). A gaining owner reads that consumer offset (one request), polls the record there and, if
// it is a valid checkpoint, starts its State at it; when the offset is missing, or the record
// there is not a checkpoint, it replays from the start of the partition. The stored offset is a
// hint written after the checkpoint was read back valid: a stale one (an older checkpoint) only
// costs a longer replay, since everything after it is replayed in order. Replay never skips
// records: if a poll returns messages starting after the expected offset (retention removed a
// segment), the reader stops with a gap error (logio's gap rule, which every reader of the log
// obeys); the journal then rebuilds the partition from the
// stored checkpoint and gives the partition up, so a deletion inside the gap is never lost.
//
// # Deleted topics
//
// Kafka removes a group's offsets for a topic when the topic is deleted, so a consumer of a
// recreated topic of the same name does not resume at a stale offset. Every owner reads the whole
// topic list of `<stream>` (GetTopics) every TopicResync (default 10 s) and at once after a
// DeleteTopics it is told of (Coordinator.TopicsDeleted), and in each partition it serves appends
// an offset-deleted record, through the journal and read back like every change, for every
// committed offset of a topic that is missing from the list. This is a resync of the whole list,
// never an event to follow, so a lagging or missed notification cannot lose a deletion: the next
// resync finds the topic gone whatever happened in between. A failed append keeps the offsets,
// and the next resync tries again.
//
// A topic deleted and recreated between two resyncs is told apart by its Iggy id together with
// its creation time (the store reuses a deleted topic's id slot, so the id alone would not do).
// Which incarnation a partition's offsets of a topic belong to is in the partition's log, a topic
// record folded by record.State, so every gateway that serves the partition knows it, whatever
// topic list it read last: a resync drops the offsets of a topic whose incarnation in the list
// differs from the log's, then appends a topic record for every topic it keeps offsets of that
// the log names no incarnation of or another one, and a gone topic record for a topic the log
// names that is no longer listed. Only the gateway that served the DeleteTopics resyncs at once;
// the others find the recreation up to TopicResync later, while consumers may already commit to
// the new topic through them. So before a commit lands, its topic is read (one GetTopic per topic
// of the OffsetCommit): when the log names an earlier incarnation, that one's offsets are dropped
// then, in the log ahead of the commit, and a topic record of the new one follows, so the resync
// that finds the recreation later keeps the commit. A commit checked against an incarnation older
// than the partition's (the topic was recreated while the commit was checked) is refused with
// UNKNOWN_TOPIC_OR_PARTITION. Offsets written before the log held topic records (format version
// 5 and older) belong, until the first resync records them, to the incarnation of the serving
// gateway's last topic list, which is right unless the topic was recreated in between.

// # Lease and the split-brain bound
//
// The lease is fleet.Lease over the members of `kafka-gateways`: rendezvous hashing with bounded
// loads over the Iggy member ids, so every gateway holds ⌊16/n⌋ or ⌈16/n⌉ partitions, a
// departure moves the departing gateway's partitions and a few others (fleet.Assign says how
// many), and a gateway that joins takes back about its share (Iggy's own assignment, which moves
// every partition on a departure, is not used). After joining, a gateway learns its own member id (a sync, a get, a
// sync with the same generation: the member whose partitions hold the sync's is the caller).
// Every LeasePoll (default 100 ms) its dedicated iggy.Session reads the members
// (GetConsumerGroup) and serves what fleet.Lease gives its id. After joining, and after a gap of
// LeaseBound since its last read that succeeded, a sync comes first (it answers for the caller
// and fails when Iggy dropped the membership): only a session silent for 1.2 H can be evicted
// and its id given to another gateway, and LeaseBound is below that. A partition is served only while (a) the Session is
// unbroken and (b) the last lease read that succeeded was sent less than HandoverBound ago
// (default 3 x LeasePoll = 300 ms, never above LeaseBound). Both are checked on every Directory
// answer and before every journal append; a failed read drops every partition at once and a new
// session joins again (and learns its new member id).
//
// Only live members count (fleet.View.LiveMembers): members that a live gateway names in its
// announcement. Iggy drops a member only on Leave, Logout, or when the server node holding its
// connection sees it close or go stale, so after an Iggy restart, or the loss of the node that
// held a connection, the member of a gateway that is gone stays in the group for good; counted,
// it would hold log partitions nobody serves. A gateway counts itself from the moment its own
// announcement is read back, as the others do (it announces and reads the owners topic right
// after joining). A live gateway that cannot announce for longer than fleet.LeaseLiveFactor x Live
// (20 s by default) drops out of everyone's lease, its own included, until it announces again.
//
// At most 16 gateways hold leases (Iggy gives each of up to 16 members a partition, which is how
// a gateway tells its id): a gateway that finds 16 members does not join, serves produce and
// fetch, and tries again every two seconds; unless some of the 16 are dead, when it deletes the
// group and creates it anew (reapDead), and every live gateway joins again (one handover of
// every partition, by claims, without a Kafka rebalance).
//
// Handover. The membership may change at any moment R, moving a partition from a live owner O
// to a gateway N (N joins, or a member leaves). O's last read that still showed the old
// membership was answered before R, so it was sent at s < R; O stops by s + HandoverBound at
// the latest, and earlier when its next read (within LeasePoll) shows the loss or its tail finds
// N's claim. N learns of the gain from a read answered at a > R. Unless the previous owner
// released the partition (below), N claims only after a + HandoverBound, when O has stopped
// appending, from the log as it then stands, so claims strictly increase in log order (a
// partition never claimed, gained by the group's only member, is claimed at once: a fleet's
// first start). N serves only from max(a + HandoverBound, c + 2 x TailPoll), c being when its
// claim was read back. Since
// s < R < a, s + HandoverBound < a + HandoverBound: O has stopped before N starts, by a margin
// of a - s, which is at least the time from O's last sync to the move. Every gateway of a fleet
// must use the same HandoverBound. With the defaults, a rebalance therefore leaves a partition
// unserved for at most about 300 ms.
//
// Release. A gateway that stops serving a partition for good (lease lost, tail, fenced append,
// SIGTERM) records, once its manager is closed and no append is in flight, the claim it stopped
// under, and every announcement carries these releases (fleet.Announcement.Released). On
// SIGTERM Leave stops serving, waits for that (within HandoverBound), appends the announcement
// and only then leaves `kafka-gateways`. N reads `coordinator_owners` to its end after the lease
// read that showed the gain, so it finds a release announced before the move; when the newest
// claim before its own is listed as released by that claim's node, N serves as soon as its claim
// is read back, and it claims at once too. A SIGTERM handover is thus one lease read (up to
// LeasePoll) plus the load. A close slower than Leave's wait is announced when it ends, and N,
// reading the announcements while it waits, serves then instead of at a + HandoverBound.
//
// Tail. Every TailPoll (default LeasePoll / 2) each owned partition is read from its last
// applied offset to its end. A newer claim stops the partition at once, and a lease answer to a
// sync sent before that moment does not load it again. This covers a move and a move back
// between two lease reads of O (O's syncs show the partition all along): N's claim is in the log
// by c, O's tail finds it within TailPoll plus one read, and N waits until c + 2 x TailPoll. Any
// loss closes the partition's manager; every gain replays the log from the last checkpoint, so
// it serves what an interim owner wrote, and appends a fresh claim.
//
// LeaseBound (below) still bounds the lease against Iggy's eviction; HandoverBound is the
// tighter of the two. Crash takeover is eviction (or, with the embedded store, the closed
// connection) + LeasePoll + load + HandoverBound: for the fleet test's H = 2 s, 2.4-4.4 s + 0.1 s +
// 0.3 s + the replay, below the session timeout + 1 s.
//
// Embedded store: a closed connection ends the Iggy session at once and hands its partitions to
// the others immediately, so a crashed or stopped gateway's partitions move within one LeasePoll
// of the others; a gateway whose own connection broke stops at (a). A gateway that is alive but
// stalled (SIGSTOP, a long pause) keeps its connection open; the store, like the real server,
// checks once every heartbeat interval H and evicts a group member silent for more than 1.2 H
// (gateway/store/server.go sweepStale), so between 1.2 H and 2.2 H after the member's last
// request (36 to 66 s at the default H = 30 s). Our last confirming sync is
// itself a request sent at time s, so the earliest moment another gateway can be given the
// partition is s + 1.2 H. LeaseBound defaults to 1.2 H - 2 x LeasePoll - 100 ms; for the default
// H = 30 s that is 36 s - 0.2 s - 0.1 s = 35.7 s, for H = 5 s it is 6 s - 0.3 s = 5.7 s. The
// margin covers one sync in flight and reading the clock. Start refuses a LeaseBound at or above
// 1.2 H with that arithmetic in the message. Config.HeartbeatInterval must be the store's H.
//
// Iggy cluster: a session outlives its connection until the server's session timeout, 1.2 x
// the server's heartbeat.interval H at the earliest and 2.2 H at the latest (36 to 66 s by
// default), measured on the leader from the last request it received; a gateway cut off from the cluster cannot learn that it lost the
// partition. Our sync was sent before the leader received it, so stopping at s + LeaseBound with
// LeaseBound < 1.2 H still stops before the leader can hand the partition over. The cluster's H
// must be at least Config.HeartbeatInterval (Start cannot read it); a smaller server H breaks the
// bound. Crash takeover with a cluster is bounded by 2.2 H + LeasePoll + replay time. A gateway
// frozen past its bound checks the age of its lease before every answer, so on waking it answers
// NOT_COORDINATOR before its next sync, and its appends are refused; any record it still had in
// flight is void behind the new owner's claim.
//
// # A slow link to Iggy
//
// A gateway whose link to Iggy is slow keeps its session (its reads come back, late) but
// cannot serve: with 200 ms added toward Iggy every lease read takes 200 ms, the next one is
// sent LeasePoll after the answer, so each confirmation arrives 500 ms after the one before was
// sent, past HandoverBound (300 ms); the lease lapses for 200 ms of every 300, an append that
// starts in a lapse is fenced, and the partition reloads, over the same slow link. Its groups
// stall, and past their session timeout they rebalance, while Iggy moves nothing.
//
// So the lease loop judges each answer (leaseWatch): a confirmation is late when it arrives
// HandoverBound or more after the previous one was sent (the lease had lapsed by then), in time
// otherwise. When every confirmation has come late for slowLeaseFactor x HandoverBound (20 x
// 300 ms = 6 s), counted from the moment the lease first lapsed, and another live gateway that
// holds a lease membership and is not drained announces serving a partition, the gateway stands
// down: it stops serving every partition, waits for the releases (within HandoverBound) and
// announces them with no lease member. The lease counts only members that a live announcement
// names, so every gateway that reads it, this one included, computes the lease without it, and
// the others gain its partitions by the usual handover (they wait HandoverBound, since this
// release does not say it is leaving). It stays a member of `kafka-gateways`, so its lease reads
// go on and Iggy does not evict it, and it stays a live broker: a gateway whose announcement
// names no member is never taken for one that lost its membership (fleet.View.Alive), so the
// leaders of its data partitions do not move (leaving the group instead would make it, for whoever read the membership before its next
// announcement, a gateway that lost its membership, out of Metadata for a moment, while its
// writes were still on the slow link). A stood-down gateway takes part again, announcing its
// member, once its confirmations have come in time for slowLeaseFactor x HandoverBound since
// the stand-down, but for one late in ten at most (a loaded machine's lease lapses now and
// then; a single confirmation in time, by contrast, ends a run of late ones, so the same machine
// does not stand down for it), or at once when no other gateway serves any more; the lease then
// counts it as it counts a gateway that joins, and the moves back go through the usual
// handover.
//
// The bound: the lease lapses within HandoverBound of the slowdown, the gateway stands down at
// the first answer 20 x HandoverBound after that, its partitions are released within
// HandoverBound and announced over the slow link, and each other gateway serves them after its
// next read of the announcements and of its lease, HandoverBound and the load: with the
// defaults and a 200 ms link, 6 s plus 2 to 3 s. Only a gateway that another one could
// replace stands down: one that announces serving a partition. In a fleet whose every link is
// slow and that has group traffic, the partitions keep being fenced and reloaded and few are
// announced as served, so few stand down; but gateways whose lease reads turn late all at once
// (a whole machine starved) may stand down together, then take part again together as soon as
// none serves, and so hand their partitions around every 20 x HandoverBound while it lasts: the
// announcements do not say how fresh each gateway's lease is, which a better rule would need.
//
// # Drain
//
// `iggy-kafka drain node N` appends a fleet.DrainRequest {"node": N, "undo": false, "time": ...}
// to `coordinator_drains`, `--undo` the same with "undo": true. Every gateway reads the topic
// from its start before it joins `kafka-gateways`, then every FollowInterval, into its
// fleet.View: for each node the request latest in log order wins (the writers' clocks do not
// matter), a message without a numeric "node" is skipped with a warning, other fields are
// ignored. The drained set is the nodes whose latest request is not an undo.
//
// A drained gateway does what Leave does on SIGTERM (stop serving, wait for the releases within
// HandoverBound, announce them, leave `kafka-gateways`) and closes its lease session, but keeps
// running: it answers produce, fetch and metadata for its clients, announces itself every
// AnnounceInterval with Draining set (so it stays live and listed as a broker) and claims no
// partition. While drained it does not join again, also after a restart, since Start reads the
// drains first. On undo the lease loop joins again and takes back what fleet.Lease gives its new
// member id, each move going through the usual handover. The other
// gateways gain the drained gateway's partitions (and a few others may move among them, as the
// bounded lease evens the shares) as on SIGTERM and find its releases, so each serves as soon as
// its claim is read back, without the HandoverBound wait; the groups move with their members,
// generations and offsets, and nothing rebalances. Metadata names no drained gateway as a
// partition leader (kafka.Fleet's Draining) unless every listed gateway is drained. Refusing a
// drain that would leave no serving gateway is the operator library's rule (drainplan.Plan,
// no flag overrides it); a gateway acts on every request it reads, so a drain written by other
// means can still take the last one out, and FindCoordinator then answers
// COORDINATOR_NOT_AVAILABLE until an undo.
//
// Authorization is Iggy's: a drain request is a message on `<stream>.meta`, so only an Iggy user
// allowed to send messages to that stream (stream or global permission to send, or to manage it)
// can append to `coordinator_drains`; a gateway acts on every well-formed request it reads there
// and asks nothing else. Kafka clients cannot reach the topic: the gateways serve `<stream>`, not
// `<stream>.meta`.
//
// # Without the log
//
// With Config.Log false there is no lease: the gateway with the lowest node id in Brokers
// coordinates every group, holds them in one group.Manager, and keeps offsets as Iggy consumer
// offsets of a single consumer named like the Kafka group (a Journal over StoreOffset: Iggy lets
// only a member owning a partition store an Iggy group's offset); OffsetFetch falls back to those
// and then to an Iggy consumer group of the same name (IggyOffsets). Before a group's first
// request the gateway loads those offsets for every partition of every topic of the stream, so
// an OffsetFetch of all topics answers them after a restart. Group membership is then lost when
// that gateway restarts, as in the original.
package coordinator
