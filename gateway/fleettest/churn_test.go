package fleettest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

const (
	churnTopic = "churn"
	// churnEnd is each partition's end: the churn program writes 5,000 records round robin over
	// 4 partitions.
	churnEnd = 1250
)

// TestSaramaGroupChurn is IBM/sarama's consumer-group churn on the fleet
// (scripts/clients/sarama/churn): 13 members join in waves over a 4-partition topic of 5,000
// records, each reads its quota, marks it and stops without leaving, so its session expires and
// the others rebalance; every record must be read exactly once, and the group's offsets must
// end at the end of every partition. As in sarama's own suite, the topic existed before, with
// offsets of an earlier group, and the run deletes it and creates it again first. The group is
// coordinated by a gateway other than the controller, which serves the DeleteTopics: that
// gateway learns of the recreation only at its next topic resync, and it used to drop, then,
// the commits made to the new topic so far, so later generations read those records again. The
// earlier group's offsets of the deleted topic must be gone.
func TestSaramaGroupChurn(t *testing.T) {
	churn := make(chan string, 1)
	buildErr := make(chan error, 1)
	out := filepath.Join(t.TempDir(), "churn")
	go func() {
		bin, err := buildChurn(out)
		churn <- bin
		buildErr <- err
	}()
	f := startFleet(t)
	tp := &tap{}
	cl, err := kgo.NewClient(clientOpts(f, tp, "admin")...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const gone = "churn-gone"
	for _, tc := range []struct {
		topic string
		parts int32
	}{{churnTopic, 4}, {gone, 1}} {
		resp, err := adm.CreateTopic(ctx, tc.parts, 1, nil, tc.topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatalf("creating %s: %v", tc.topic, err)
		}
	}
	grp, early := churnGroups(t, ctx, adm)
	t.Logf("group %s and the earlier group %s are in log partition %d, not the controller's", grp, early, LogPartition(grp))

	// The earlier group commits to both topics; the topic that goes away tells when the groups'
	// coordinator has resynced the topic list since the topics were created, seeing churn's first
	// incarnation.
	offs := kadm.Offsets{}
	for p := range int32(4) {
		offs.Add(kadm.Offset{Topic: churnTopic, Partition: p, At: 100, LeaderEpoch: -1})
	}
	offs.Add(kadm.Offset{Topic: gone, Partition: 0, At: 1, LeaderEpoch: -1})
	if resp, err := adm.CommitOffsets(ctx, early, offs); err != nil || resp.Error() != nil {
		t.Fatalf("the earlier group's commit: %v %v", err, resp.Error())
	}
	if resp, err := adm.DeleteTopics(ctx, gone); err != nil || resp.Error() != nil {
		t.Fatalf("deleting %s: %v %v", gone, err, resp.Error())
	}
	checkfor.Eventually(t, 30*time.Second, "the groups' coordinator dropping the offsets of "+gone, func() error {
		fetched, err := adm.FetchOffsets(ctx, early)
		if err == nil {
			err = fetched.Error()
		}
		if err != nil {
			return err
		}
		if o, ok := fetched.Lookup(gone, 0); ok && o.At >= 0 {
			return fmt.Errorf("%s/0 still committed at %d", gone, o.At)
		}
		return nil
	})

	bin := <-churn
	if err := <-buildErr; err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "-brokers", strings.Join(f.seeds(), ","), "-topic", churnTopic,
		"-group", grp, "-recreate", "-timeout", "100s")
	output, err := cmd.CombinedOutput()
	t.Logf("sarama churn:\n%s", output)
	if err != nil {
		t.Fatalf("the sarama churn failed: %v", err)
	}

	fetched, err := adm.FetchOffsets(ctx, grp)
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		t.Fatalf("OffsetFetch of %s: %v", grp, err)
	}
	for p := range int32(4) {
		if o, ok := fetched.Lookup(churnTopic, p); !ok || o.At != churnEnd {
			t.Errorf("%s committed %s/%d at %d (found %v), want the end %d", grp, churnTopic, p, o.At, ok, churnEnd)
		}
	}
	fetched, err = adm.FetchOffsets(ctx, early)
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		t.Fatalf("OffsetFetch of %s: %v", early, err)
	}
	fetched.Each(func(o kadm.OffsetResponse) {
		t.Errorf("%s kept %s/%d at %d of a deleted topic", early, o.Topic, o.Partition, o.At)
	})
}

// churnGroups picks the churn's group, coordinated by a gateway other than the controller, and
// an earlier group in the same log partition.
func churnGroups(t *testing.T, ctx context.Context, adm *kadm.Client) (grp, early string) {
	t.Helper()
	var controller int32
	checkfor.Eventually(t, 20*time.Second, "a controller", func() error {
		m, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		if controller = m.Controller; controller < 0 {
			return errors.New("no controller")
		}
		return nil
	})
	for i := 0; grp == "" && i < 64; i++ {
		name := fmt.Sprintf("churn-g%d", i)
		var node int32
		checkfor.Eventually(t, 20*time.Second, "the coordinator of "+name, func() error {
			c, ok := adm.FindGroupCoordinators(ctx, name)[name]
			if !ok {
				return errors.New("no answer")
			}
			if c.Err != nil {
				return c.Err
			}
			node = c.NodeID
			return nil
		})
		if node != controller {
			grp = name
		}
	}
	if grp == "" {
		t.Fatalf("every group name tried is coordinated by the controller %d", controller)
	}
	for i := 0; ; i++ {
		if name := fmt.Sprintf("churn-early%d", i); LogPartition(name) == LogPartition(grp) {
			return grp, name
		}
	}
}

// buildChurn builds scripts/clients/sarama/churn, a module of its own (sarama comes through the
// Go module proxy, pinned by its go.sum), to out.
func buildChurn(out string) (string, error) {
	root, err := testbin.ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-mod=readonly", "-o", out, "./churn")
	cmd.Dir = filepath.Join(root, "scripts", "clients", "sarama")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the sarama churn: %v\n%s", err, b)
	}
	return out, nil
}
