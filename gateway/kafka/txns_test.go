package kafka

import (
	"context"
	"fmt"
	"hash/crc32"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/authz"
)

// fakeTxns answers every transaction request with its own marker values; asked, when set,
// counts the requests that reach it, and refuse is the code VerifyProduce answers for every
// partition.
type fakeTxns struct {
	asked  *int
	refuse int16
}

func (f fakeTxns) WriteTxnMarkers(_ context.Context, _ Identity, req *kmsg.WriteTxnMarkersRequest) (*kmsg.WriteTxnMarkersResponse, error) {
	if f.asked != nil {
		*f.asked++
	}
	return req.ResponseKind().(*kmsg.WriteTxnMarkersResponse), nil
}

func (f fakeTxns) VerifyProduce(_ context.Context, _ string, _ int64, _ int16, parts map[string][]int32, _ bool) map[string]map[int32]int16 {
	if f.asked != nil {
		*f.asked++
	}
	out := map[string]map[int32]int16{}
	for t, ps := range parts {
		out[t] = map[int32]int16{}
		for _, p := range ps {
			out[t][p] = f.refuse
		}
	}
	return out
}

func (fakeTxns) InitProducerID(_ context.Context, _ Identity, req *kmsg.InitProducerIDRequest) (*kmsg.InitProducerIDResponse, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = 4242, 7
	return resp, nil
}

func (f fakeTxns) AddPartitionsToTxn(_ context.Context, _ Identity, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
	if f.asked != nil {
		*f.asked++
	}
	return req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse), nil
}

func (fakeTxns) AddOffsetsToTxn(_ context.Context, _ Identity, req *kmsg.AddOffsetsToTxnRequest) (*kmsg.AddOffsetsToTxnResponse, error) {
	return req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse), nil
}

func (fakeTxns) EndTxn(_ context.Context, _ Identity, req *kmsg.EndTxnRequest) (*kmsg.EndTxnResponse, error) {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ErrorCode = kerr.InvalidTxnState.Code
	return resp, nil
}

func (fakeTxns) TxnOffsetCommit(_ context.Context, _ Identity, req *kmsg.TxnOffsetCommitRequest) (*kmsg.TxnOffsetCommitResponse, error) {
	return req.ResponseKind().(*kmsg.TxnOffsetCommitResponse), nil
}

func (fakeTxns) DescribeTransactions(_ context.Context, _ Identity, req *kmsg.DescribeTransactionsRequest) (*kmsg.DescribeTransactionsResponse, error) {
	return req.ResponseKind().(*kmsg.DescribeTransactionsResponse), nil
}

func (fakeTxns) ListTransactions(_ context.Context, _ Identity, req *kmsg.ListTransactionsRequest) (*kmsg.ListTransactionsResponse, error) {
	return req.ResponseKind().(*kmsg.ListTransactionsResponse), nil
}

// The transaction keys are advertised and served only with a Config.Txns; without one a
// transactional id stays TRANSACTIONAL_ID_AUTHORIZATION_FAILED and EndTxn is unsupported.
func TestTxnKeysOnlyWithCoordinator(t *testing.T) {
	for _, withTxns := range []bool{false, true} {
		t.Run(fmt.Sprintf("txns=%v", withTxns), func(t *testing.T) {
			ts := startServer(t, func(c *Config) {
				if withTxns {
					c.Txns = fakeTxns{}
				}
			})
			conn := dialRaw(t, ts.addr)
			resp := conn.roundTrip(t, kmsg.NewPtrApiVersionsRequest()).(*kmsg.ApiVersionsResponse)
			listed := map[int16]int16{}
			for _, k := range resp.ApiKeys {
				listed[k.ApiKey] = k.MaxVersion
			}
			for k, want := range map[int16]int16{addPartitionsToTxnKey: 5, addOffsetsToTxnKey: 4, endTxnKey: 5, writeTxnMarkersKey: 2, txnOffsetCommitKey: 5, describeTransactionsKey: 0, listTransactionsKey: 1} {
				if max, ok := listed[k]; ok != withTxns || ok && max != want {
					t.Errorf("%s advertised %v up to v%d", kmsg.NameForKey(k), ok, max)
				}
			}
			id := "t"
			init := kmsg.NewPtrInitProducerIDRequest()
			init.Version, init.TransactionalID, init.TransactionTimeoutMillis = 4, &id, 1000
			iresp := conn.roundTrip(t, init).(*kmsg.InitProducerIDResponse)
			end := kmsg.NewPtrEndTxnRequest()
			end.Version, end.TransactionalID = 3, id
			eresp := conn.roundTrip(t, end).(*kmsg.EndTxnResponse)
			if withTxns {
				if iresp.ErrorCode != 0 || iresp.ProducerID != 4242 || iresp.ProducerEpoch != 7 {
					t.Errorf("InitProducerId not answered by the coordinator: %+v", iresp)
				}
				if eresp.ErrorCode != kerr.InvalidTxnState.Code {
					t.Errorf("EndTxn not answered by the coordinator: code %d", eresp.ErrorCode)
				}
				return
			}
			if iresp.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
				t.Errorf("InitProducerId with a transactional id: code %d", iresp.ErrorCode)
			}
			if eresp.ErrorCode != kerr.UnsupportedVersion.Code {
				t.Errorf("EndTxn without a coordinator: code %d", eresp.ErrorCode)
			}
		})
	}
}

// ApiVersions finalizes transaction.version at Config.TransactionVersion only with a Config.Txns
// (what franz-go and Kafka's Java client read to choose transactions v2), and lists it as
// supported from 0 to 2 from v4 (v3 leaves a feature whose minimum is 0 out, as Kafka's).
func TestTransactionVersionFeature(t *testing.T) {
	type feature struct{ min, max int16 }
	cases := []struct {
		name      string
		txns      bool
		level     int16
		version   int16
		supported map[string]feature
		finalized map[string]feature
		epoch     int64
	}{
		{"v2 finalized", true, 2, 4, map[string]feature{"transaction.version": {0, 2}}, map[string]feature{"transaction.version": {2, 2}}, 2},
		{"v2 finalized, ApiVersions v3", true, 2, 3, map[string]feature{}, map[string]feature{"transaction.version": {2, 2}}, 2},
		{"v1 finalized", true, 1, 4, map[string]feature{"transaction.version": {0, 2}}, map[string]feature{"transaction.version": {1, 1}}, 1},
		{"level 0", true, 0, 4, map[string]feature{"transaction.version": {0, 2}}, map[string]feature{}, -1},
		{"no coordinator", false, 2, 4, map[string]feature{"transaction.version": {0, 2}}, map[string]feature{}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := startServer(t, func(cfg *Config) {
				if c.txns {
					cfg.Txns = fakeTxns{}
				}
				cfg.TransactionVersion = c.level
			})
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = c.version, "test", "1"
			resp := dialRaw(t, ts.addr).roundTrip(t, req).(*kmsg.ApiVersionsResponse)
			supported, finalized := map[string]feature{}, map[string]feature{}
			for _, f := range resp.SupportedFeatures {
				supported[f.Name] = feature{f.MinVersion, f.MaxVersion}
			}
			for _, f := range resp.FinalizedFeatures {
				finalized[f.Name] = feature{f.MinVersionLevel, f.MaxVersionLevel}
			}
			if !maps.Equal(supported, c.supported) || !maps.Equal(finalized, c.finalized) || resp.FinalizedFeaturesEpoch != c.epoch {
				t.Errorf("supported %v, finalized %v at epoch %d; want %v, %v at %d", supported, finalized, resp.FinalizedFeaturesEpoch,
					c.supported, c.finalized, c.epoch)
			}
		})
	}
}

// WriteTxnMarkers and AddPartitionsToTxn v4 are what gateways send each other: CLUSTER_ACTION on
// the cluster, else CLUSTER_AUTHORIZATION_FAILED for every partition and the coordinator is not
// asked. AddPartitionsToTxn v3 (a client's) needs no CLUSTER_ACTION.
func TestTxnClusterActionKeys(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused=%v", refuse), func(t *testing.T) {
			asked := 0
			ts := startServer(t, func(c *Config) { c.Txns = fakeTxns{asked: &asked} })
			ts.storage.refused = func(acl authz.ACL) bool {
				return refuse && acl.Resource == kmsg.ACLResourceTypeCluster && acl.Op == kmsg.ACLOperationClusterAction
			}
			conn := dialRaw(t, ts.addr)
			w := kmsg.NewPtrWriteTxnMarkersRequest()
			w.Version = 1
			mk := kmsg.NewWriteTxnMarkersRequestMarker()
			mk.ProducerID, mk.ProducerEpoch = 5, 0
			rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			rt.Topic, rt.Partitions = "__consumer_offsets", []int32{3}
			mk.Topics = append(mk.Topics, rt)
			w.Markers = append(w.Markers, mk)
			wresp := conn.roundTrip(t, w).(*kmsg.WriteTxnMarkersResponse)
			a := kmsg.NewPtrAddPartitionsToTxnRequest()
			a.Version = 4
			tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
			tx.TransactionalID, tx.VerifyOnly = "t", true
			a.Transactions = append(a.Transactions, tx)
			aresp := conn.roundTrip(t, a).(*kmsg.AddPartitionsToTxnResponse)
			if !refuse {
				if asked != 2 {
					t.Fatalf("the coordinator was asked %d times, want 2", asked)
				}
				return
			}
			if asked != 0 {
				t.Fatalf("refused requests reached the coordinator %d times", asked)
			}
			if len(wresp.Markers) != 1 || wresp.Markers[0].Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
				t.Errorf("WriteTxnMarkers refused: %+v", wresp.Markers)
			}
			if aresp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
				t.Errorf("AddPartitionsToTxn v4 refused: code %d", aresp.ErrorCode)
			}
			a3 := kmsg.NewPtrAddPartitionsToTxnRequest()
			a3.Version, a3.TransactionalID = 3, "t"
			conn.roundTrip(t, a3)
			if asked != 1 {
				t.Errorf("AddPartitionsToTxn v3 needs CLUSTER_ACTION: asked %d", asked)
			}
		})
	}
}

// A produce holding a transactional batch is checked against the producer's transaction first
// (TxnCoordinator.VerifyProduce): a partition refused there gets the code and nothing is stored;
// a produce without a transactional batch is not checked.
func TestProduceVerifiedAgainstTransaction(t *testing.T) {
	asked := 0
	ts := startServer(t, func(c *Config) { c.Txns = fakeTxns{asked: &asked, refuse: kerr.InvalidTxnState.Code} })
	if err := ts.storage.CreateTopic(context.Background(), "verified", 1, nil, false); err != nil {
		t.Fatal(err)
	}
	stored := 0
	ts.storage.onProduce(func(string, int32, []byte) error { stored++; return nil })
	conn := dialRaw(t, ts.addr)
	produce := func(transactional bool) int16 {
		batch := kmsg.RecordBatch{Magic: 2, ProducerID: 7, ProducerEpoch: 1, FirstSequence: 0, NumRecords: 1, LastOffsetDelta: 0}
		rec := kmsg.Record{Value: []byte("v")}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		batch.Records = rec.AppendTo(nil)
		if transactional {
			batch.Attributes = 0x10
		}
		raw := batch.AppendTo(nil)
		batch.Length = int32(len(raw) - 12)
		raw = batch.AppendTo(nil)
		batch.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
		raw = batch.AppendTo(nil)
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 5000
		id := "t"
		req.TransactionID = &id
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "verified"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = raw
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := conn.roundTrip(t, req).(*kmsg.ProduceResponse)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	if code := produce(true); code != kerr.InvalidTxnState.Code || asked != 1 {
		t.Fatalf("transactional batch refused by the check: code %d, asked %d", code, asked)
	}
	if stored != 0 {
		t.Fatalf("a refused transactional batch reached the storage %d times", stored)
	}
	if code := produce(false); code != 0 || asked != 1 || stored != 1 {
		t.Fatalf("a batch that is not transactional: code %d, asked %d, stored %d", code, asked, stored)
	}
}

// Stable of the in-memory storage: no transactions, so everything up to hw is stable.
func (m *memStorage) Stable(_ context.Context, _ string, _ int32, _, hw int64) (int64, []AbortedTxn, error) {
	return hw, nil, nil
}
