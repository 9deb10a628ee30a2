// Package txn is the transaction coordinator of one coordinator log partition: Kafka's
// transaction protocol for the transactional ids that hash to the partition (record.Partition,
// the same FNV-1a as a group's, so FindCoordinator with key type 1 names the partition's owner as
// it does for a group). It owns the rules of a transaction's life: which producer id and epoch a
// transactional id holds, which partitions and groups the open transaction has, when it must be
// aborted, and the order in which its end is made durable. The bytes of its log records and
// their fold are package record's (record.Transaction, record.State.Transactions), which the
// operator tools read as well; the network and Iggy are the coordinator's and the Kafka
// handlers'.
//
// The two types to know:
//
//   - Manager serves the transactional ids of one log partition: InitProducerID, AddPartitions,
//     AddGroup, EndTxn (EndTxnV2 for transactions v2), Check (is this producer's write to this partition, or its
//     TxnOffsetCommit to a group of log partition N, named as partition N of GroupsTopic, part
//     of its open transaction?) and the timeout of every open transaction. Restore loads what the log holds
//     while the partition loads; Start, once it serves, finishes every transaction found
//     half-ended and restarts the timeouts.
//   - Config, whose Journal makes each change durable and whose Markers writes the end of a
//     transaction to the data partitions and to the log partitions of its groups.
//
// Router turns the Kafka requests into Manager calls, at whichever gateway serves the id. A
// transaction's group offsets are not the transaction's: TxnOffsetCommit is served by the
// group's coordinator, which checks the producer's open transaction with Router.Verify (here,
// or at the transaction's coordinator with an AddPartitionsToTxn v4 verify-only batch, as
// Kafka's brokers ask each other) and keeps the offsets in the group's log partition
// (group.Manager.StageTxnOffsets) until the transaction's marker for that partition
// (WriteTxnMarkers, group.Manager.EndTxnOffsets) commits or drops them. A transactional produce
// is checked the same way (VerifyProduce).
//
// # What is journaled, and when an answer is released
//
// Every change of a transactional id is one record.Transaction holding the id's whole state (its
// producer id and epoch, the state, the partitions and groups of the open transaction, the
// timeout, when the transaction started and when this state was decided). The manager keeps a
// new state only after Journal.Append returned nil, and answers only then, as package group does
// with its records; a failed append changes nothing, so a request is either applied whole or not
// at all. Requests of one transactional id run one at a time, in the order they arrived.
//
// The states and their moves, as Kafka has them:
//
//	(none) --InitProducerID--> Empty
//	Empty, CompleteCommit, CompleteAbort --InitProducerID--> Empty (epoch + 1)
//	Empty, Complete* --AddPartitions/AddGroup--> Ongoing (Started = now)
//	Ongoing --AddPartitions/AddGroup--> Ongoing (nothing appended when nothing is new)
//	Ongoing --EndTxn commit--> PrepareCommit --markers written--> CompleteCommit
//	Ongoing --EndTxn abort--> PrepareAbort --markers written--> CompleteAbort
//	Ongoing --InitProducerID (a new incarnation)--> PrepareAbort (epoch + 1) --> CompleteAbort
//	Ongoing --Timeout passed since Started--> PrepareAbort (epoch + 1) --> CompleteAbort
//
// EndTxn is answered once its Prepare record is read back; the markers are written after it
// (Config.Markers), and the Complete record is appended once every marker is. While a
// transaction is PrepareCommit or PrepareAbort, InitProducerID, AddPartitions, AddGroup and
// EndTxn answer CONCURRENT_TRANSACTIONS, and the client retries. A fencing InitProducerID or a
// timeout bumps the epoch in the PrepareAbort record itself, so from that record on the old
// incarnation's requests are PRODUCER_FENCED. An epoch that would pass 32766 takes a new
// producer id at epoch 0 instead; a fence keeps the producer id (at 32766 it takes 32767, which no
// producer is given) so that its abort markers end the fenced producer's batches.
//
// # Transactions v2 (KIP-890 part 2)
//
// A client that finds transaction.version 2 finalized (ApiVersions) sends no AddPartitionsToTxn
// or AddOffsetsToTxn: its Produce v12 and TxnOffsetCommit v5 add the data partition, or the
// group's log partition as partition N of GroupsTopic, to its transaction where a v1 client's are
// only checked (Router.VerifyProduce and TxnOffsetCommit with add, AddPartitions here or an
// AddPartitionsToTxn v4 batch that is not verify-only at another gateway). Its EndTxn v5
// (EndTxnV2) bumps the epoch of every end, in the Prepare record itself, so the markers are
// written at the bumped epoch, and the answer carries the pair to go on with:
//
//	Ongoing --EndTxnV2--> PrepareCommit/PrepareAbort (epoch + 1, Last = the pair before)
//	        --markers written--> CompleteCommit/CompleteAbort
//	Ongoing at 32766 --EndTxnV2--> Prepare* (epoch 32767, Next = a new producer id at 0)
//	        --markers written at 32767--> Complete* (the producer id and epoch of Next)
//	Empty, Complete* --EndTxnV2 abort--> PrepareAbort (epoch + 1, nothing to mark) --> CompleteAbort
//
// As Kafka's: an end at the epoch before the current one (or the pair before a new producer id) is
// the retry of the end that bumped it, answered with the current pair when it is the same end,
// INVALID_TXN_STATE when it is the opposite end; a commit with nothing open is INVALID_TXN_STATE.
// While an end is being written (Prepare*), every EndTxnV2 of its producer id, or of the new one
// it answered (Next), is CONCURRENT_TRANSACTIONS whatever its epoch, as Kafka's since
// KAFKA-18464, and so are the adds and KIP-360 InitProducerIDs naming the pair it answered: that
// answer comes before the markers are durable, and the producer's next end, or its next
// transaction's Produce v12, may come at once. Fencing it then (PRODUCER_FENCED) is what made franz-go's TestTxnEtl fail on a fleet,
// where the markers travel to the gateways of the groups' log partitions.
//
// # KIP-360 retries
//
// Transaction.Last keeps the pair the producer held before its last bump when it asked for the
// bump by naming that pair (InitProducerID with its producer id and epoch) or by ending a
// transaction v2. An InitProducerID naming Last is the retry of a bump whose answer was lost and
// is answered with the current pair, unbumped; so is an EndTxnV2 (above). A new incarnation (an
// InitProducerID naming no pair) and a fence clear it, so an older instance's retry is fenced.
// Last is in the transaction record (format version 7), so the next owner of the log partition
// answers the retry the same.
//
// # Handover
//
// The gateway that gains the log partition restores the ids from its fold (Restore) before it
// serves, and starts them (Start) when it serves (its appends are refused before): an id found in PrepareCommit or PrepareAbort has its markers written again (markers
// are idempotent for the reader: a second commit marker of the same producer ends nothing new)
// and its Complete record appended by the new owner; an Ongoing one keeps its Started, so its
// timeout fires when it would have at the old owner, on this manager's clock. A manager whose
// Journal reports group.ErrNotCoordinator (a newer claim precedes its record) stops: its answers
// become NOT_COORDINATOR and its background work ends, as a group.Manager's does.
//
// # Limits and choices where Kafka leaves room
//
// A transactional id is 1 to MaxIDLength (1024) bytes: an empty or longer one is
// INVALID_REQUEST. The timeout is 1 ms to Config.MaxTimeout (Kafka's transaction.max.timeout.ms,
// default 15 min), else INVALID_TRANSACTION_TIMEOUT. An InitProducerID that names the producer
// id and epoch it holds (KIP-360) must name the id's current pair or the pair before its last
// bump (above), else PRODUCER_FENCED. TRANSACTION_ABORTABLE is never answered: a partition not in
// the transaction is INVALID_TXN_STATE at every version. Ids do not expire (Kafka's transactional.id.expiration.ms): state Dead exists in the format for that.
package txn
