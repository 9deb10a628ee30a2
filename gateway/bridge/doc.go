// Package bridge maps Kafka onto Apache Iggy: topics, partitions, records and
// idempotent producers. The Kafka handlers (package gateway/kafka) decode
// requests and call a kafka.Storage; Bridge.As gives the Storage that speaks
// to Iggy through one Iggy client, the connection's user's, so Iggy's
// permissions apply. The two types to know are Bridge, the mapping with its
// caches, and iggyAPI, the few Iggy calls it is built on (over the network
// in production, in memory in the tests). The Kafka types the bridge answers
// with (kafka.TopicInfo, kafka.FetchResult, ...) are package kafka's own. Iggy
// is the only shared state: a Bridge keeps nothing but caches that it
// rebuilds from Iggy, so any gateway can serve any partition.
//
// The mapping below is a contract with every other tool that reads or writes
// the same Iggy streams (native Iggy clients, other gateways, the operator
// commands). Changing it breaks data already stored.
//
// # Topics and partitions
//
// Kafka topic T is Iggy topic T in the stream Config.Stream (default
// "kafka"); Kafka partition p is Iggy partition p, both counted from 0. Kafka
// topic names follow Kafka's rules (1..249 characters of [a-zA-Z0-9._-]). A
// topic's Kafka id is not stored: TopicID derives it from the stream name and
// the Iggy topic's id, creation time and name, so every gateway agrees on it
// and a re-created topic gets a new one. The
// topic configs retention.ms and retention.bytes map onto Iggy's
// message_expiry (µs; -1 is Iggy's never) and max_topic_size (-1:
// unlimited). max.message.bytes, compression.type, message.timestamp.type and
// cleanup.policy, which Iggy has no field for, are kept in Iggy as well: every
// topic create, config change or delete appends one message to
// "<Config.Stream>.meta"/topic_configs (partition 0), payload the topic name,
// user headers "max.message.bytes" (Int32), "compression.type" (String,
// Kafka's value name), "message.timestamp.type" (String "LogAppendTime") and
// "cleanup.policy" (String, "compact" or "compact,delete") when the topic sets
// them and, for a delete, "deleted" (Bool); the latest message per name wins,
// and each gateway reads the new messages at most once a second for produces
// and fetches, and at once for DescribeConfigs. compression.type is the codec
// the topic's fetched batches go out with, over Config.FetchCodec; with
// message.timestamp.type=LogAppendTime they carry the LogAppendTime attribute
// and the Iggy batch's append time (fetchForm). An alteration (AlterConfigs)
// replaces all of these at once: Iggy's options through the connection's
// identity first, then the config log. cleanup.policy takes compact (the log
// keeps every record all the same: cleanupPolicy); a few configs of Kafka's own log layout and replication
// (segment.bytes, min.insync.replicas, ...) are taken at creation only and
// not stored; anything else is refused with INVALID_CONFIG
// (topicOptionsFrom).
//
// While Iggy cannot be reached a topic keeps the partition count this
// gateway last saw (kafka.TopicInfo.Offline: Metadata still lists each
// partition with its leader), answered from memory without waiting on Iggy,
// and partition reads and writes are NOT_LEADER_OR_FOLLOWER, retriable, never
// KAFKA_STORAGE_ERROR (outage.go).
//
// # Records
//
// One Kafka record is one Iggy message, and the Kafka offset is the Iggy
// offset. One Kafka batch becomes one Iggy batch (one SendMessages request),
// so a produce stores a whole batch or none of it, and the batch's Iggy base
// offset is its Kafka base offset. Produce accepts magic-2 batches with any
// codec (none, gzip, snappy raw or in the Java client's xerial framing, lz4,
// zstd); Iggy stores the records uncompressed, so native Iggy clients read
// plain values. A magic 0/1 message set (Produce v0-2) becomes one magic-2
// batch first, as Kafka converts it: a record per message (per inner message
// of a compressed wrapper), no headers, timestamp -1 for magic 0; it is
// fetched back uncompressed. Fetch turns each Iggy batch back into one magic-2 batch
// (CRC-32C computed once per batch), compressed again with the codec its
// producer used (snappy in xerial framing) as Kafka would hand it back, while
// that pays: after a batch that its codec shrank by less than 1/16, the
// partition's next 16 rebuilt batches go out uncompressed (every client reads
// those) before compression is tried again. Fetch v0-v3 get magic 0 or 1
// message sets without headers.
//
// # The tail
//
// A gateway remembers where the last 1024 batches it appended to each
// partition lie (base offset, count, size, the Iggy id of the first message).
// A fetch that falls inside one of them asks Iggy for whole batches, from the
// start of that batch, as Kafka answers (clients skip the records before
// their offset), so consecutive fetches stay on batch boundaries; a fetch
// elsewhere (data another gateway wrote, or older than this process) gets the
// records from its offset on, and a slice that starts past a batch's first
// message goes out uncompressed, since the codec rides on that first message.
// The producer and the transactional mark ride there too, and a READ_COMMITTED
// client drops an aborted transaction's records by them, so such a slice
// (magic 2) costs one more read of one message: the batch's first, at the base
// offset the poll reply keeps (Bridge.sliceHead, Metrics.SliceHeads). So that a
// reader going on does not start inside a batch at every fetch, a poll whose
// count (estimated from the record size) may have cut its last batch leaves
// that batch out when it returned others and the batch holds at most half of
// the poll's messages: the next fetch starts on its first message, and reads
// the part this one left again. A reader's first fetch, at an offset of its
// choosing, and batches about as large as a whole poll still pay the extra
// read.
// The tail cache (Config.TailCacheBytes, 64 MiB by default, oldest evicted
// first across all partitions, no batch above a quarter of it) also keeps
// the producers' own Kafka batches: a magic-2 fetch of cached batches is
// answered with those bytes as they came, with the Iggy base offset and
// leader epoch 0 written in (both outside the CRC), producer id and sequence
// kept, after one message is read from Iggy at the last batch's base to check
// that its id is still the one this gateway gave it (a partition deleted and
// re-created elsewhere fails the check and the tail is forgotten). A fetch
// codec other than "producer" (the topic's compression.type, else
// FetchCodec) is served from the cache only for batches produced with it.
//
// The record value is the Iggy payload. The Iggy origin timestamp is the
// record timestamp in microseconds (Kafka milliseconds times 1000). The rest
// travels in Iggy user headers, a TLV block whose keys are String items and
// whose values are at most 255 bytes each; a longer value is split into
// items named NAME, NAME.1, NAME.2, ... in order. All names start with
// "kafka.", and every item is optional:
//
//	kafka.key    Raw, split   the record key; absent means a null key
//	kafka.h      Raw, split   the record's headers in Kafka's own encoding:
//	                          varint count, then per header varint key
//	                          length, key, varint value length (-1 null),
//	                          value; absent means no headers
//	kafka.ts     Int64        the record timestamp in ms, present only when
//	                          the origin timestamp cannot carry it (negative
//	                          timestamps, or a batch whose timestamps span more
//	                          than the 71 minutes a u32 of µs holds)
//	kafka.flags  Uint8        1: the value is null; 2: the value is empty;
//	                          4: the key is empty (not null). Iggy refuses
//	                          empty payloads, so a null or empty value is
//	                          stored as the one-byte payload 0x00.
//
// The first message of every batch may also carry
//
//	kafka.codec  Uint8        the producer's codec (1 gzip, 2 snappy, 3 lz4,
//	                          4 zstd); absent means uncompressed
//
// and, for an idempotent producer,
//
//	kafka.pid    Int64        producer id
//	kafka.epoch  Int16        producer epoch
//	kafka.seq    Int32        base sequence of the Kafka batch
//	kafka.n      Int32        records in the Kafka batch
//
// and, for a transactional producer's batch,
//
//	kafka.txn    Uint8        1: the batch belongs to a transaction of the
//	                          producer kafka.pid at kafka.epoch
//
// Nothing of the producer is stored on the other messages: a reader that
// starts inside a batch finds it on the batch's first message, at the batch's
// base offset (which an Iggy poll reply keeps, with each message's offset
// delta). A batch rebuilt from Iggy carries the producer id, epoch and
// transactional bit of a transactional producer's batch, whole or sliced; an
// idempotent producer's batch of no transaction goes out with producer id -1
// and no sequence, which consumers do not use (its own bytes, from the tail
// cache or kept, keep them).
//
// A transaction's end (WriteMarker) is one message of its own: payload the
// six bytes of Kafka's control record value (version 0, coordinator epoch
// 0), user headers kafka.txn (2 commit, 3 abort), kafka.pid and kafka.epoch.
// Fetch v4+ returns it as Kafka's control batch; Fetch v0-3 (message sets)
// leave it out. A native Iggy reader sees it as a message of six zero bytes
// with those headers, and sees a transaction's records whether it was
// committed or aborted (what Kafka's READ_UNCOMMITTED reads).
//
// A message written by a native Iggy client (no kafka.* items) reads as a
// record with value = payload, a null key, no headers and timestamp = origin
// timestamp / 1000. User headers that do not parse, or kafka.* items of an
// unexpected kind, are ignored rather than failing the fetch. Iggy message
// ids are a random 64-bit value per Bridge (high half) and a counter (low
// half). A record larger than Config.MaxMessageBytes is refused with
// MESSAGE_TOO_LARGE; one whose key and headers do not fit Iggy's 100,000-byte
// user-header limit with INVALID_RECORD. A control batch from a client, and a
// transactional batch without a producer id, are refused with INVALID_RECORD.
//
// # Transactions for READ_COMMITTED readers
//
// Stable answers what a READ_COMMITTED reader may see: each gateway keeps,
// per partition, an index of the producers with a transaction open (from the
// offset of its first batch) and of the aborted transactions, read from the
// partition's log start the first time it is asked and then from where it
// stopped, so it holds every gateway's writes and is rebuilt from Iggy after
// a restart. A log start inside a batch (DeleteRecords to an offset in it)
// reads that batch's first message too, so a transaction open from below the
// log start counts from the log start. The last stable offset is the first
// offset of the oldest open transaction, else the high watermark. The index
// is in memory and grows with the aborted transactions the partition ever held.
//
// # Idempotent producers
//
// InitProducerID appends one message to the topic "producer_ids" of the
// stream "<Config.Stream>.meta" and hands out that message's offset + 1 as the
// producer id (epoch 0), so ids are unique across every gateway sharing the
// store. Produces to one partition are serialized within a gateway so the
// sequence check and the append cannot race. A gateway caches, per partition
// and producer, the last five batches (epoch, base sequence, count, base
// offset): a resend of one of them is answered with its original base offset
// and stores nothing; a gap is OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is
// INVALID_PRODUCER_EPOCH. On a cache miss (another gateway wrote, or this one
// restarted) the state is rebuilt by reading the partition's tail backwards
// from Iggy in windows of 512 messages, at most 8192 messages or 32 MiB, and
// a producer not found within that bound is accepted at any sequence, as
// Kafka accepts a producer whose state expired. A scan that reaches offset 0
// notes every producer it meets: until an append this gateway did not make is
// noticed, a producer the cache does not know has no batch in the partition
// and needs no scan. A sequence error from the
// cache is re-decided once from Iggy before it is returned; should Iggy not
// answer then, the producer is forgotten (the cache no longer counts as
// holding every producer), so its next batch is decided from Iggy as well,
// not taken for a new producer's at any sequence. The cache is
// trusted for one second after this gateway's own last append to the
// partition, unless the fleet's view changed since (Config.LeadersMoved: the
// partition's leader may have moved to another gateway, which may have stored
// a batch and died before answering, and back); otherwise Iggy's high
// watermark is compared with the offset the gateway expects, and any foreign
// append drops the cache. Iggy has no
// conditional append, so two gateways appending to one partition at the same
// moment can still both accept a resend; partition leadership keeps that to
// fail-over moments.
//
// # The log start (DeleteRecords)
//
// A partition's Kafka log start offset is kept in Iggy as the stored offset of the single Iggy
// consumer "kafka-log-start" on that partition: log start - 1, the last offset deleted; no
// stored offset means 0. It lives and dies with the partition, so a topic deleted and created
// again, or purged, starts at 0 again. DeleteRecords stores it (only forward: an offset below
// it answers it unchanged) after checking that the connection's Iggy user may manage the topic
// (a delete_segments of no segment); ListOffsets reads it from Iggy every time, Fetch and
// Produce at most once a second per partition and gateway, so a deletion through one gateway
// shows at the others within a second and survives every restart. Kafka readers then see the
// partition start there: Fetch below it is OFFSET_OUT_OF_RANGE, ListOffsets earliest answers
// the first record at or after it, and Fetch and Produce answer it as LogStartOffset.
//
// Iggy deletes only whole segments, the oldest first, and tells no segment's offsets. So when a
// DeleteRecords reaches the high watermark read just before it, every sealed segment holds only
// records below the new log start and Iggy deletes them all (delete_segments of the segment
// count less the active one); a DeleteRecords below the high watermark deletes nothing in Iggy.
// A native Iggy reader therefore still reads the records below the log start that are left:
// those of the active segment, and all of them after a partial deletion, until Iggy's own
// retention (message_expiry, max_topic_size) or a later DeleteRecords up to the high watermark
// removes their segments. Offsets never restart: Iggy keeps counting from where it was, so the
// Kafka offset stays the Iggy offset.
//
// # Waiting for data
//
// Wait returns as soon as a produce through the same Bridge reaches the
// partition; writes by other gateways or native clients are noticed by the
// caller's next fetch, at most 100 ms later. A fetch at the end of a
// partition within 50 ms of a read that told Iggy's high watermark there,
// with no append through this gateway since, is answered from that read
// without asking Iggy (a consumer at the tail fetches every partition each
// time any one of them gets data), so such a write may show up to 50 ms
// later still.
//
// # The fetch cache
//
// Batches rebuilt from Iggy for magic-2 fetches are kept (Config.FetchCacheBytes,
// 256 MiB by default, in memory apart from the Go heap, 16 chunks evicted oldest
// first with a second chance for those read since they were filled; once it
// is full, a partition read again from its start evicts nothing), keyed by
// partition, the offset of the batch's first record and the fetch codec, so
// other readers of the same offsets (other groups, a group reading again) get
// those bytes; readers arriving at an offset while another fetch rebuilds there
// wait for it. A cached answer is checked first with one message read from
// Iggy at its first batch (the same id, so the same partition), and a fetch
// answered with one run of the cache's memory hands that memory out, pinned
// until the response is written.
package bridge
