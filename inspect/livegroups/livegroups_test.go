package livegroups_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/livegroups"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/inspect/replay"
	"github.com/iggy-kafka/iggy-kafka/inspect/stateview"
	"github.com/iggy-kafka/iggy-kafka/inspect/verify"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
	"github.com/iggy-kafka/iggy-kafka/internal/testlog"
)

// liveFleet is a store and three gateways with the coordinator log, as `serve --iggy` runs them.
func liveFleet(t *testing.T) (log *logread.Log, adm *kadm.Client, gws []*gateway.Gateway) {
	t.Helper()
	srv, gws := testfleet.Start(t, 3, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String(), gws[1].Addr().String(), gws[2].Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return logread.NewLog(c, "kafka", nil), kadm.NewClient(cl), gws
}

func TestLiveFleetClaimsAndDiff(t *testing.T) {
	log, adm, _ := liveFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var rows []claims.PartitionRow
	checkfor.Eventually(t, 20*time.Second, "16 partitions owned", func() error {
		f, err := claims.LoadModel(ctx, log)
		if err != nil {
			return err
		}
		rows = f.Rows(time.Now())
		for _, r := range rows {
			if r.OwnerNode == nil {
				return fmt.Errorf("partition %d unowned", r.Partition)
			}
		}
		return nil
	})
	owners := map[int32]int{}
	for _, r := range rows {
		owners[*r.OwnerNode]++
	}
	t.Logf("owners per node: %v", owners)

	// Every partition's owner is what FindCoordinator names for a group of that partition.
	names := make([]string, 0, len(rows))
	for _, r := range rows {
		names = append(names, testlog.GroupIn(r.Partition, "probe"))
	}
	checkfor.Eventually(t, 10*time.Second, "FindCoordinator agrees with the log", func() error {
		f, err := claims.LoadModel(ctx, log)
		if err != nil {
			return err
		}
		for _, r := range f.Rows(time.Now()) {
			if len(r.Flags) != 0 || r.AssignedNode == nil || *r.AssignedNode != *r.OwnerNode || r.AnnouncedNode == nil || *r.AnnouncedNode != *r.OwnerNode {
				return fmt.Errorf("partition %d: owner %v assigned %v announced %v flags %v", r.Partition, r.OwnerNode, r.AssignedNode, r.AnnouncedNode, r.Flags)
			}
		}
		fcs := adm.FindGroupCoordinators(ctx, names...)
		for _, name := range names {
			fc := fcs[name]
			gc := f.CoordinatorOf(name, fc.NodeID, "", fc.Err)
			if !gc.Agrees {
				return fmt.Errorf("group %s (partition %d): log owner %v, FindCoordinator %d %v", name, gc.Partition, gc.OwnerNode, fc.NodeID, fc.Err)
			}
		}
		return nil
	})

	g := "orders-app"
	p := record.Partition(g)
	if r, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	commit := func(at int64) {
		t.Helper()
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: at, LeaderEpoch: -1})
		offs.Add(kadm.Offset{Topic: "orders", Partition: 1, At: at + 1, LeaderEpoch: -1})
		checkfor.Eventually(t, 10*time.Second, "commit", func() error {
			r, err := adm.CommitOffsets(ctx, g, offs)
			if err != nil {
				return err
			}
			return r.Error()
		})
	}
	commit(5)

	// A handover may still be under way right after the gateways start (FindCoordinator then
	// answers COORDINATOR_NOT_AVAILABLE for a moment): the check is that they come to agree.
	checkfor.Eventually(t, 10*time.Second, "claims --group agrees with FindCoordinator", func() error {
		f, err := claims.LoadModel(ctx, log)
		if err != nil {
			return err
		}
		fc := adm.FindGroupCoordinators(ctx, g)[g]
		if fc.Err != nil {
			return fc.Err
		}
		gc := f.CoordinatorOf(g, fc.NodeID, fmt.Sprintf("%s:%d", fc.Host, fc.Port), nil)
		if !gc.Agrees || !gc.InLog || gc.Partition != p {
			return fmt.Errorf("claims --group: %+v", gc)
		}
		return nil
	})

	res, err := replay.Run(ctx, log, p, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := livegroups.DiffLive(ctx, adm, res.Partition, res.Groups)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 0 {
		t.Fatalf("live fleet differs from its log: %+v", diffs)
	}

	// The fleet moves on; a replay that stops before the new commits differs, offset by offset.
	old := *res.Through
	commit(9)
	stale, err := replay.Run(ctx, log, p, replay.Options{Until: logread.Position{Offset: old, HasOffset: true}})
	if err != nil {
		t.Fatal(err)
	}
	diffs, err = livegroups.DiffLive(ctx, adm, stale.Partition, stale.Groups)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].What != "offset orders[0]" || diffs[0].Log != "5 epoch -1" || diffs[0].Live != "9 epoch -1" {
		t.Fatalf("diffs %+v", diffs)
	}

	// And verify finds the live log clean.
	sum, err := verify.Verify(ctx, log, nil, func(f verify.Finding) error { return errors.New(f.Kind + ": " + f.Detail) })
	if err != nil || sum.Findings != 0 {
		t.Fatalf("verify of the live log: %+v, %v", sum, err)
	}
}

// A KIP-848 consumer group on a live fleet: the replay of its log partition shows it as a
// consumer group with its epochs, assignor and every member's epoch and partitions, the gateways
// answer what the log says (replay --diff-live agrees, through ConsumerGroupDescribe), and the
// log verifies clean.
func TestLiveFleetConsumerGroup(t *testing.T) {
	log, adm, gws := liveFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if r, err := adm.CreateTopic(ctx, 4, 1, nil, "events"); err != nil || r.Err != nil {
		t.Fatalf("create topic: %v %v", err, r.Err)
	}
	const g = "kip848-app"
	var members []*kgo.Client
	for range 2 {
		cl, err := kgo.NewClient(kgo.SeedBrokers(gws[0].Addr().String(), gws[1].Addr().String(), gws[2].Addr().String()),
			kgo.ConsumerGroup(g), kgo.ConsumeTopics("events"), kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		go func() {
			for !cl.PollFetches(ctx).IsClientClosed() && ctx.Err() == nil {
			}
		}()
		members = append(members, cl)
	}
	var described kadm.DescribedConsumerGroup
	checkfor.Eventually(t, 30*time.Second, "two members, Stable, 2 partitions each", func() error {
		dg, err := adm.DescribeConsumerGroups(ctx, g)
		if err != nil {
			return err
		}
		described = dg[g]
		if described.Err != nil || described.State != "Stable" || len(described.Members) != 2 {
			return fmt.Errorf("described %+v", described)
		}
		for _, m := range described.Members {
			if len(m.Assignment["events"]) != 2 {
				return fmt.Errorf("member %s owns %v", m.MemberID, m.Assignment)
			}
		}
		return nil
	})

	p := record.Partition(g)
	var res *replay.Result
	checkfor.Eventually(t, 10*time.Second, "the log agrees with the gateways", func() error {
		var err error
		if res, err = replay.Run(ctx, log, p, replay.Options{FromStart: true}); err != nil {
			return err
		}
		diffs, err := livegroups.DiffLive(ctx, adm, res.Partition, res.Groups)
		if err != nil {
			return err
		}
		return checkfor.True(len(diffs) == 0, "differences %+v", diffs)
	})
	var gv *stateview.GroupView
	for i := range res.Groups {
		if res.Groups[i].Group == g {
			gv = &res.Groups[i]
		}
	}
	if gv == nil || gv.Type != "consumer" || gv.Consumer == nil || gv.Consumer.Assignor != "uniform" || len(gv.Consumer.Members) != 2 {
		t.Fatalf("replayed group %+v", gv)
	}
	if gv.Consumer.Epoch != described.Epoch || gv.Consumer.AssignmentEpoch != described.AssignmentEpoch {
		t.Fatalf("replayed epochs %d/%d, described %d/%d", gv.Consumer.Epoch, gv.Consumer.AssignmentEpoch, described.Epoch, described.AssignmentEpoch)
	}
	for _, m := range gv.Consumer.Members {
		if m.State != "stable" || strings.Count(m.Assigned, ",") != 1 || m.Assigned != m.Target {
			t.Fatalf("replayed member %+v", m)
		}
	}
	sum, err := verify.Verify(ctx, log, nil, func(f verify.Finding) error { return errors.New(f.Kind + ": " + f.Detail) })
	if err != nil || sum.Findings != 0 {
		t.Fatalf("verify of the live log: %+v, %v", sum, err)
	}
	for _, cl := range members {
		cl.Close()
	}
}
