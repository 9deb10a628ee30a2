package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The transaction APIs plug in here, as the group APIs do in groups.go. A transaction handler
// file (24_add_partitions_to_txn.go, ...) registers its versions with regTxnKey: the key is then
// advertised by ApiVersions and served only by a Server with a Config.Txns; without one it is
// refused as unsupported. InitProducerId (22) is served by every Server and asks Config.Txns only
// for a transactional id.

// TxnCoordinator serves the transaction APIs. A Server has at most one (Config.Txns), shared by
// every connection. As with GroupCoordinator, the request reaching a method is decoded and of a
// version its handler file serves, the method answers with req.ResponseKind() filled in, and an
// error closes the connection.
type TxnCoordinator interface {
	// InitProducerID answers an InitProducerId with a transactional id.
	InitProducerID(ctx context.Context, id Identity, req *kmsg.InitProducerIDRequest) (*kmsg.InitProducerIDResponse, error)
	AddPartitionsToTxn(ctx context.Context, id Identity, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error)
	AddOffsetsToTxn(ctx context.Context, id Identity, req *kmsg.AddOffsetsToTxnRequest) (*kmsg.AddOffsetsToTxnResponse, error)
	EndTxn(ctx context.Context, id Identity, req *kmsg.EndTxnRequest) (*kmsg.EndTxnResponse, error)
	// TxnOffsetCommit stages a group's offsets in the producer's transaction.
	TxnOffsetCommit(ctx context.Context, id Identity, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitResponse, error)
	// DescribeTransactions answers for the ids this gateway coordinates; ListTransactions lists
	// them (each gateway its own, as Kafka's brokers do).
	DescribeTransactions(ctx context.Context, id Identity, req *kmsg.DescribeTransactionsRequest) (*kmsg.DescribeTransactionsResponse, error)
	ListTransactions(ctx context.Context, id Identity, req *kmsg.ListTransactionsRequest) (*kmsg.ListTransactionsResponse, error)
	// WriteTxnMarkers writes transactions' markers (a gateway's request, or an administrator's
	// abort of a hanging transaction), once the handler authorized it.
	WriteTxnMarkers(ctx context.Context, id Identity, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error)
	// VerifyProduce answers, for each partition a transactional produce writes to, whether the
	// producer's open transaction holds it (KIP-890), with add (Produce v12, transactions v2)
	// once it is added to it: 0 when it does, else the code the partition is refused with,
	// nothing stored.
	VerifyProduce(ctx context.Context, transactionalID string, producerID int64, epoch int16, parts map[string][]int32, add bool) map[string]map[int32]int16
}

// txnVersions are the versions of the transaction keys, served and advertised only by a Server
// with a Config.Txns.
var txnVersions = map[int16]versionRange{}

// regTxnKey registers the versions a transaction handler serves, from its file's init.
func regTxnKey(key, min, max int16) {
	_, dup := versions[key]
	_, gdup := groupVersions[key]
	if _, tdup := txnVersions[key]; dup || gdup || tdup {
		panic("kafka: api key registered twice")
	}
	txnVersions[key] = versionRange{min, max}
}

// isTxnKey reports whether key is a transaction API served only with a Config.Txns.
func isTxnKey(key int16) bool {
	_, ok := txnVersions[key]
	return ok
}
