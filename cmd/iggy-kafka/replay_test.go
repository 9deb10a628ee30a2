package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
)

// replay --diff-live says that the log and the gateways agree, or how many differences there
// are, and exits 0 or 1 by it. The gateways here are a kfake broker holding the groups a fleet
// would answer for: what they answer is the test's to choose.
func TestReplayDiffLiveVerdict(t *testing.T) {
	addr, _ := operatorStore(t)
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(record.Partitions), "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kf.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	commit := func(group string, p int32, at int64) {
		t.Helper()
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: "t", Partition: p, At: at, LeaderEpoch: -1})
		if err := adm.CommitAllOffsets(ctx, group, offs); err != nil {
			t.Fatal(err)
		}
	}
	// The log of partition 2 holds group g with t[2] at 5 (operatorStore).
	commit("g", 2, 5)
	env := []string{"IGGY_KAFKA_OPERATOR_IGGY=" + addr, "IGGY_KAFKA_KAFKA_BOOTSTRAP=" + kf.ListenAddrs()[0], "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, f := range []string{"text", "json"} {
		code, out, stderr := runCLI(t, env, "replay", "partition", "2", "--diff-live", "-o", f)
		if code != exitOK || stderr != "" {
			t.Fatalf("agreeing diff-live -o %s: exit %d stderr %q\n%s", f, code, stderr, out)
		}
		golden.Assert(t, "replay.agree."+f, []byte(out))
	}

	// The gateways move g on and hold a group of partition 2 the log never had.
	commit("g", 2, 7)
	other := "h"
	for i := 0; record.Partition(other) != 2; i++ {
		other = "h" + strconv.Itoa(i)
	}
	commit(other, 0, 1)
	for _, f := range []string{"text", "json"} {
		code, out, stderr := runCLI(t, env, "replay", "partition", "2", "--diff-live", "-o", f)
		if code != exitFailed || stderr == "" {
			t.Fatalf("differing diff-live -o %s: exit %d stderr %q\n%s", f, code, stderr, out)
		}
		golden.Assert(t, "replay.differ."+f, []byte(out))
		if f != "json" {
			continue
		}
		var doc struct {
			Data    []livegroups.Difference `json:"data"`
			Summary livegroups.Summary      `json:"summary"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Data) != 2 || doc.Summary.Agree || doc.Summary.Differences != 2 || doc.Summary.GroupsDiffering != 2 {
			t.Fatalf("diff-live -o json: %v\n%s", err, out)
		}
	}
}
