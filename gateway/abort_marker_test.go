package gateway

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// What `kafka-transactions abort --topic T --partition P --start-offset O` does, step by step:
// DescribeProducers finds the producer whose open transaction starts at O, then a WriteTxnMarkers
// (v1, coordinator epoch as DescribeProducers said it) to the partition's leader writes its abort
// marker. The partition's last stable offset then moves past the transaction, to its end, the
// marker included, READ_COMMITTED readers see none of its records, and DescribeProducers no
// longer lists it open; the other partition of the transaction stays held until its coordinator
// ends it.
func TestAbortMarkerOfAHangingTransaction(t *testing.T) {
	g := startGateway(t, func(c *Config) {
		c.CoordinatorLog, c.Transactions = true, true
		c.NodeID = 1
	})
	ctx := testCtx(t)
	adm := kadm.NewClient(client(t, g))
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "hang"); err != nil {
		t.Fatal(err)
	}
	opts := []kgo.Opt{kgo.DefaultProduceTopic("hang"), kgo.RecordPartitioner(kgo.ManualPartitioner())}
	if err := client(t, g, opts...).ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	txn := client(t, g, append(opts, kgo.TransactionalID("hang-1"))...)
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int32{0, 0, 0, 1} {
		if err := txn.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("hanging")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	stable := func() map[int32]int64 {
		t.Helper()
		lso, err := adm.ListCommittedOffsets(ctx, "hang")
		if err == nil {
			err = lso.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
		out := map[int32]int64{}
		lso.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
		return out
	}
	if got := stable(); got[0] != 1 || got[1] != 0 {
		t.Fatalf("last stable offsets with the transaction open: %v, want 1 and 0", got)
	}

	// The tool's first step: the producer whose transaction starts at offset 1.
	d, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"hang": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var open *kadm.DescribedProducer
	d.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset == 1 {
			open = &p
		}
	})
	if open == nil {
		t.Fatalf("no producer with a transaction starting at 1: %+v", d)
	}

	// Its second: the abort marker, sent to the partition's leader.
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = open.ProducerID, open.ProducerEpoch, false, open.CoordinatorEpoch
	rt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	rt.Topic, rt.Partitions = "hang", []int32{0}
	mk.Topics = append(mk.Topics, rt)
	req.Markers = append(req.Markers, mk)
	resp, err := req.RequestWith(ctx, client(t, g))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || len(resp.Markers[0].Topics[0].Partitions) != 1 {
		t.Fatalf("answer %+v", resp)
	}
	if err := kerr.ErrorForCode(resp.Markers[0].Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatalf("the abort marker refused: %v", err)
	}

	ends, err := adm.ListEndOffsets(ctx, "hang")
	if err != nil {
		t.Fatal(err)
	}
	end0, _ := ends.Lookup("hang", 0)
	if got := stable(); end0.Offset != 5 || got[0] != 5 || got[1] != 0 {
		t.Fatalf("after the marker: end of partition 0 %d, last stable offsets %v; want 5, 5 and 0 (partition 1 still held)", end0.Offset, got)
	}
	cons := client(t, g, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"hang": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var got []string
	for len(got) < 1 {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if len(got) != 1 || got[0] != "before" {
		t.Fatalf("READ_COMMITTED read %q, want [before]", got)
	}
	d, err = adm.DescribeProducers(ctx, kadm.TopicsSet{"hang": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	d.EachProducer(func(p kadm.DescribedProducer) {
		if p.CurrentTxnStartOffset >= 0 {
			t.Errorf("producer %d still has a transaction open at %d", p.ProducerID, p.CurrentTxnStartOffset)
		}
	})
}
