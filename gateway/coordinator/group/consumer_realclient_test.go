package group

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

func fastConsumerGroups(c *Config) {
	c.ConsumerHeartbeatInterval = 50 * time.Millisecond
	c.TopicRefresh = 50 * time.Millisecond
}

// Two franz-go members with the server-side balancer (KIP-848): the first owns every partition,
// the second gets half only once the first gave it up (no partition is owned by both at any
// moment the callbacks show), the one left owns all again after the other leaves, and
// ConsumerGroupDescribe, ListGroups and the journal agree with what the members own.
func TestRealClientConsumerGroup(t *testing.T) {
	for _, tc := range []struct {
		name     string
		balancer kgo.GroupBalancer
		assignor string
	}{
		{"uniform", kgo.StickyBalancer(), "uniform"},
		{"range", kgo.RangeBalancer(), "range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStack(t, fastConsumerGroups)
			s.produce(t, 5)
			group := "kip848-" + tc.name
			opts := []kgo.Opt{kgo.Balancers(tc.balancer), kgo.ServerSideBalancer()}
			a := s.consumer(t, group, opts...)
			checkfor.Eventually(t, 20*time.Second, "first member owns all", func() error { return split([]*consumer{a}, 4) })
			b := s.consumer(t, group, opts...)
			stop := make(chan struct{})
			overlap := make(chan error, 1)
			go func() {
				for {
					select {
					case <-stop:
						close(overlap)
						return
					case <-time.After(time.Millisecond):
					}
					seen := map[int32]bool{}
					for _, c := range []*consumer{a, b} {
						for _, p := range c.partitions() {
							if seen[p] {
								overlap <- fmt.Errorf("partition %d owned by both members", p)
								close(overlap)
								return
							}
							seen[p] = true
						}
					}
				}
			}()
			checkfor.Eventually(t, 20*time.Second, "two members split", func() error { return split([]*consumer{a, b}, 2, 2) })
			close(stop)
			if err := <-overlap; err != nil {
				t.Fatal(err)
			}

			adm := kadm.NewClient(s.client(t))
			checkfor.Eventually(t, 10*time.Second, "described group", func() error {
				dg, err := adm.DescribeConsumerGroups(tctx(t), group)
				if err != nil {
					return err
				}
				d := dg[group]
				if d.Err != nil || d.State != "Stable" || d.AssignorName != tc.assignor || len(d.Members) != 2 || d.Epoch != d.AssignmentEpoch {
					return fmt.Errorf("describe: %+v", d)
				}
				for _, m := range d.Members {
					if len(m.Assignment["events"]) != 2 || m.MemberEpoch != d.Epoch || m.ClientID != "kgo" {
						return fmt.Errorf("member: %+v", m)
					}
				}
				return nil
			})
			lg, err := adm.ListGroups(tctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if l := lg[group]; l.ProtocolType != "consumer" || l.State != "Stable" {
				t.Fatalf("listed %+v", l)
			}
			// The classic describe answers that this is not a classic group.
			if dg, err := adm.DescribeGroups(tctx(t), group); err != nil || dg[group].Err == nil {
				t.Fatalf("classic describe of a consumer group: %+v %v", dg[group], err)
			}

			// Folding the journal gives what the manager holds.
			st := record.NewState()
			st.Apply(0, record.Record{Type: record.TypeClaim, Claim: 1, ClaimInfo: &record.Claim{Number: 1, Node: 1}})
			for i, r := range s.j.records() {
				r.Claim = 1
				st.Apply(uint64(i+1), r)
			}
			logged, _ := st.ConsumerGroup(group)
			if held := s.m.ConsumerGroups(); len(held) != 1 || !reflect.DeepEqual(held[0], logged) {
				t.Fatalf("manager holds\n%+v\nthe journal folds to\n%+v", held, logged)
			}

			b.close()
			checkfor.Eventually(t, 20*time.Second, "left member's partitions move", func() error { return split([]*consumer{a}, 4) })
		})
	}
}
