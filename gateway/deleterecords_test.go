package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
)

// DeleteRecords through a fleet of two: each partition is deleted at its leader, and then both
// gateways, and the fleet started again on the same data, answer ListOffsets earliest with the
// new log start and Fetch below it with OFFSET_OUT_OF_RANGE; a consumer from the start begins
// there.
func TestDeleteRecordsAcrossTheFleet(t *testing.T) {
	base := freeport.Consecutive(t, 2)
	data := t.TempDir()
	start := func() *LocalFleet {
		t.Helper()
		f, err := StartFleet(testCtx(t), fleetConfig(base, data), 2)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := start()
	seeds := []string{f.Gateways()[0].Addr().String(), f.Gateways()[1].Addr().String()}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic("dr"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	if r, err := adm.CreateTopic(testCtx(t), 4, 1, nil, "dr"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	for i := range 40 {
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Partition: int32(i % 4), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	checkfor.Eventually(t, 10*time.Second, "both gateways leading partitions of dr", func() error {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("dr")
		req.Topics = append(req.Topics, rt)
		md, err := req.RequestWith(testCtx(t), cl)
		if err != nil {
			return err
		}
		leaders := map[int32]bool{}
		for _, p := range md.Topics[0].Partitions {
			leaders[p.Leader] = true
		}
		return checkfor.True(len(leaders) == 2, "leaders %v", leaders)
	})
	offs := kadm.Offsets{}
	for p := range int32(4) {
		offs.Add(kadm.Offset{Topic: "dr", Partition: p, At: 4})
	}
	resp, err := adm.DeleteRecords(testCtx(t), offs)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(4) {
		if r, ok := resp.Lookup("dr", p); !ok || r.Err != nil || r.LowWatermark != 4 {
			t.Fatalf("partition %d: %+v %v", p, r, ok)
		}
	}
	checkAt := func(f *LocalFleet) {
		t.Helper()
		for _, g := range f.Gateways() {
			gc, err := kgo.NewClient(kgo.SeedBrokers(g.Addr().String()))
			if err != nil {
				t.Fatal(err)
			}
			for p := range int32(4) {
				if got := earliest(t, gc, p); got != 4 {
					t.Errorf("gateway %s: ListOffsets earliest of dr/%d is %d, want 4", g.Addr(), p, got)
				}
				if code := fetchCode(t, gc, p, 2); code != kerr.OffsetOutOfRange.Code {
					t.Errorf("gateway %s: Fetch of dr/%d at 2 answered %d, want OFFSET_OUT_OF_RANGE", g.Addr(), p, code)
				}
			}
			gc.Close()
		}
	}
	checkAt(f)

	// A consumer from the start begins at the log start.
	cons, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics("dr"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	read := map[int32][]int64{}
	for n := 0; n < 24; {
		fs := cons.PollFetches(testCtx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read[r.Partition] = append(read[r.Partition], r.Offset)
			n++
		})
	}
	cons.Close()
	for p, offs := range read {
		if offs[0] != 4 || len(offs) != 6 {
			t.Errorf("a consumer from the start read dr/%d at %v, want 4 to 9", p, offs)
		}
	}
	cl.Close()
	if err := f.Shutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	f = start()
	t.Cleanup(func() { f.Shutdown(testCtx(t)) })
	checkAt(f)
}

// earliest is ListOffsets earliest (-2) of dr/p, asked of the client's seed.
func earliest(t *testing.T, cl *kgo.Client, p int32) int64 {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "dr"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp = p, -2
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	sp := resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(sp.ErrorCode); err != nil {
		t.Fatal(fmt.Errorf("ListOffsets of dr/%d: %w", p, err))
	}
	return sp.Offset
}

// fetchCode is the error code of a Fetch of dr/p at offset, asked of the client's seed.
func fetchCode(t *testing.T, cl *kgo.Client, p int32, offset int64) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = 12, 10, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "dr"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = p, offset, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 {
		return fr.ErrorCode
	}
	return fr.Topics[0].Partitions[0].ErrorCode
}
