package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeTxns answers every transaction request with its own marker values.
type fakeTxns struct{}

func (fakeTxns) InitProducerID(_ context.Context, _ Identity, req *kmsg.InitProducerIDRequest) (*kmsg.InitProducerIDResponse, error) {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = 4242, 7
	return resp, nil
}

func (fakeTxns) AddPartitionsToTxn(_ context.Context, _ Identity, req *kmsg.AddPartitionsToTxnRequest) (*kmsg.AddPartitionsToTxnResponse, error) {
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
			for k, want := range map[int16]int16{addPartitionsToTxnKey: 3, addOffsetsToTxnKey: 3, endTxnKey: 3, txnOffsetCommitKey: 3, describeTransactionsKey: 0, listTransactionsKey: 1} {
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

// Stable of the in-memory storage: no transactions, so everything up to hw is stable.
func (m *memStorage) Stable(_ context.Context, _ string, _ int32, _, hw int64) (int64, []AbortedTxn, error) {
	return hw, nil, nil
}
