package fleettest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// storeOutage is how long TestStoreOutage keeps the store away.
const storeOutage = 20 * time.Second

// TestStoreOutage is a store outage of 20 s under load: the store is killed, stays down, and
// starts again on its data. Throughout, every gateway keeps the topic whole in Metadata (its
// partitions offline, LEADER_NOT_AVAILABLE without a leader, as Kafka answers), never with an
// error and fewer partitions; afterwards the idempotent producers go on by themselves, none gave
// up on a record, and every acknowledged record is stored once at its offset. The consumer group
// is left out: its coordinator log is in the store too, and with the store gone for longer than
// a heartbeat franz-go gives its partitions up and joins again, as it would with Kafka's
// __consumer_offsets leaders gone.
func TestStoreOutage(t *testing.T) {
	f := startFleet(t)
	tp := &tap{}
	createTopic(t, f, tp)
	l := newLoad(t, f, tp)
	l.startProducers()
	t.Cleanup(func() {
		l.prodCancel()
		l.prodWG.Wait()
		for _, cl := range l.prods {
			cl.Close()
		}
	})
	progress := func(what string) {
		t.Helper()
		acked := l.nAcked.Load()
		checkfor.Eventually(t, recovery, what, func() error {
			return checkfor.True(l.nAcked.Load() >= acked+ackProgress, "%d more acknowledged, want %d", l.nAcked.Load()-acked, ackProgress)
		})
	}
	progress("the load before the outage")

	var askers []*kgo.Client
	for _, g := range f.gws {
		cl, err := kgo.NewClient(kgo.SeedBrokers(g.addr), kgo.ClientID(fmt.Sprintf("outage-asker-%d", g.id)))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		askers = append(askers, cl)
	}
	// ask is one Metadata of the load's topic from the gateway that is cl's seed; it returns how
	// many partitions were offline.
	ask := func(cl *kgo.Client) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		kr, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			return 0, err
		}
		resp := kr.(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 {
			return 0, fmt.Errorf("%d topics answered", len(resp.Topics))
		}
		st := resp.Topics[0]
		if st.ErrorCode != 0 || len(st.Partitions) != partitions {
			return 0, fmt.Errorf("%s answered with %v and %d partitions, want %d", topic, kerr.ErrorForCode(st.ErrorCode), len(st.Partitions), partitions)
		}
		offline := 0
		for _, p := range st.Partitions {
			switch p.ErrorCode {
			case 0:
			case kerr.LeaderNotAvailable.Code:
				if p.Leader != -1 {
					return 0, fmt.Errorf("partition %d LEADER_NOT_AVAILABLE with leader %d", p.Partition, p.Leader)
				}
				offline++
			default:
				return 0, fmt.Errorf("partition %d answered %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		return offline, nil
	}

	f.killIggy()
	down := time.Now()
	offlineSeen := make([]bool, len(askers))
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	rounds := 0
	for ; time.Since(down) < storeOutage; rounds++ {
		for i, cl := range askers {
			n, err := ask(cl)
			if err != nil {
				t.Fatalf("%v into the outage, gateway %d: %v", time.Since(down).Round(time.Millisecond), f.gws[i].id, err)
			}
			if n == partitions {
				offlineSeen[i] = true
			}
		}
		<-tick.C
	}
	for i, seen := range offlineSeen {
		if !seen {
			t.Errorf("gateway %d never answered the topic offline in %d rounds over %v without a store", f.gws[i].id, rounds, storeOutage)
		}
	}

	acked := l.nAcked.Load()
	f.startIggy()
	back := time.Now()
	checkfor.Eventually(t, recovery, "a record acknowledged after the store came back", func() error {
		return checkfor.True(l.nAcked.Load() > acked, "%d acknowledged, as before the restart", acked)
	})
	t.Logf("store down %v: Metadata kept %d partitions offline on every gateway (%d rounds); producers acknowledged again %v after the store listened",
		back.Sub(down).Round(time.Millisecond), partitions, rounds, time.Since(back).Round(time.Millisecond))
	progress("the load after the store came back")

	l.stopProducers()
	stored := readAll(t, f, tp, endOffsets(t, f, tp))
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.prodErrs) > 0 {
		t.Errorf("producers gave up on records: %v", l.prodErrs[:min(5, len(l.prodErrs))])
	}
	problems := l.storedProblemsLocked(stored)
	if len(problems) > 0 {
		t.Errorf("%d problems (%d acknowledged, %d stored): %s", len(problems), len(l.acked), len(stored), firstFew(problems))
	}
	t.Logf("%d acknowledged, %d stored", len(l.acked), len(stored))
}
