package fleettest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// TestHarnessAgainstKfake runs the load, the probe and every end check against three brokers of
// kfake, whose group coordinator is Kafka's: the harness must find the group stable, see exactly
// one coordinator per group in every probe round, and pass all of its checks there.
func TestHarnessAgainstKfake(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(gateways))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fleet{t: t}
	for i, addr := range c.ListenAddrs() {
		f.gws = append(f.gws, &gw{id: int32(i), proc: &proc{name: "kfake-" + addr, addr: addr}})
	}
	r := startRunOn(t, f)
	checkRounds(t, r)
	r.finish()
}

// TestProbeSeesSplitBrain checks that the round check fails on two coordinators at once.
func TestProbeSeesSplitBrain(t *testing.T) {
	var rd round
	for p := range LogPartitions {
		rd.heartbeat[p], rd.describe[p] = map[int32]timeT{}, map[int32]timeT{}
		rd.heartbeat[p][1] = timeT{}
	}
	if got := splitBrain([]round{rd}); len(got) != 0 {
		t.Fatalf("one coordinator per group flagged: %v", got)
	}
	rd.describe[7][2], rd.describe[7][3] = timeT{}, timeT{}
	got := splitBrain([]round{rd})
	if len(got) != 1 || !strings.Contains(got[0], "[2 3]") || !strings.Contains(got[0], "partition 7") {
		t.Fatalf("two coordinators of partition 7 reported as %v", got)
	}
}

// TestTapDecodesGroupAnswers checks the tap against a real exchange: a Heartbeat of an unknown
// member must show up as UNKNOWN_MEMBER_ID (25) among the rejoin codes.
func TestTapDecodesGroupAnswers(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fleet{t: t, gws: []*gw{{id: 0, proc: &proc{addr: c.ListenAddrs()[0]}}}}
	tp := &tap{}
	pr := startProbe(t, f, tp, probeInterval, false)
	pr.close()
	if got := tp.rejoins(time.Time{}); len(got) != 0 {
		t.Fatalf("rejoin codes before any: %v", got)
	}
	heartbeatUnknown(t, f, tp)
	got := tp.rejoins(time.Time{})
	if len(got) != 1 || got[0].code != 25 || got[0].key != 12 {
		t.Fatalf("the tap saw %v, want one Heartbeat answered 25", got)
	}
}

type timeT = time.Time

// heartbeatUnknown sends a Heartbeat of a member the coordinator never saw.
func heartbeatUnknown(t *testing.T, f *fleet, tp *tap) {
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(f, tp, "member-unknown")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID = probeGroups()[0], 1, "nobody"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 25 {
		t.Fatalf("Heartbeat of an unknown member answered %d", resp.ErrorCode)
	}
}

// checkRounds waits for enough probe rounds that finish's count check can pass.
func checkRounds(t *testing.T, r *run) {
	t.Helper()
	checkfor.Eventually(t, 20*time.Second, "50 probe rounds", func() error {
		if n := r.pr.roundsSeen(); n < minRounds {
			return fmt.Errorf("%d rounds", n)
		}
		return nil
	})
}
