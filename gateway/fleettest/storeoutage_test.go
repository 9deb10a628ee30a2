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

// metadataBound is how long a Metadata request may take at any time, a store outage included.
const metadataBound = time.Second

// TestStoreOutage is a store outage of 20 s under load: the store is killed, stays down, and
// starts again on its data. Throughout, every gateway answers Metadata within metadataBound,
// both for the load's topic and for every topic (kcat -L), listing the three gateways (their
// announcements stop with the store, so this spans Live, 5 s, several times) and the topic whole,
// every partition with its leader, never with an error and fewer partitions; the producers
// meanwhile are answered a retriable error. Afterwards the idempotent producers go on by
// themselves, none gave up on a record, and every acknowledged record is stored once at its
// offset. The consumer group is left out: its coordinator log is in the store too, and with the
// store gone for longer than a heartbeat franz-go gives its partitions up and joins again, as it
// would with Kafka's __consumer_offsets leaders gone.
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

	cls := askers(t, f)
	for _, cl := range cls {
		for _, all := range []bool{false, true} {
			if _, err := askMetadata(cl, all); err != nil {
				t.Fatalf("before the outage: %v", err)
			}
		}
	}

	f.killIggy()
	down := time.Now()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	rounds := 0
	var slowest time.Duration
	for ; time.Since(down) < storeOutage; rounds++ {
		for i, cl := range cls {
			for _, all := range []bool{false, true} {
				took, err := askMetadata(cl, all)
				if err != nil {
					t.Fatalf("%v into the outage, gateway %d (all topics %v): %v", time.Since(down).Round(time.Millisecond), f.gws[i].id, all, err)
				}
				slowest = max(slowest, took)
			}
		}
		<-tick.C
	}
	t.Logf("Metadata during the outage: %d rounds of 2 requests to each gateway, the slowest answered in %v", rounds, slowest.Round(time.Microsecond))

	acked := l.nAcked.Load()
	f.startIggy()
	back := time.Now()
	checkfor.Eventually(t, recovery, "a record acknowledged after the store came back", func() error {
		return checkfor.True(l.nAcked.Load() > acked, "%d acknowledged, as before the restart", acked)
	})
	t.Logf("store down %v: Metadata listed the %d gateways and %d partitions with leaders on every gateway (%d rounds); producers acknowledged again %v after the store listened",
		back.Sub(down).Round(time.Millisecond), gateways, partitions, rounds, time.Since(back).Round(time.Millisecond))
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

// askMetadata is one Metadata from the gateway that is cl's seed, of the load's topic or, with
// all, of every topic; it must answer within metadataBound and name the three gateways and every
// partition of the topic with one of them as leader.
func askMetadata(cl *kgo.Client, all bool) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), metadataBound)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	if !all {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	sent := time.Now()
	kr, err := cl.SeedBrokers()[0].Request(ctx, req)
	took := time.Since(sent)
	if err != nil {
		return took, fmt.Errorf("no answer within %v: %w", metadataBound, err)
	}
	resp := kr.(*kmsg.MetadataResponse)
	nodes := map[int32]bool{}
	for _, b := range resp.Brokers {
		nodes[b.NodeID] = true
	}
	if len(resp.Brokers) != gateways || len(nodes) != gateways {
		return took, fmt.Errorf("%d brokers listed, want the %d gateways", len(resp.Brokers), gateways)
	}
	var st *kmsg.MetadataResponseTopic
	for i := range resp.Topics {
		if t := &resp.Topics[i]; t.Topic != nil && *t.Topic == topic {
			st = t
		}
	}
	if st == nil {
		return took, fmt.Errorf("%s not among the %d topics answered", topic, len(resp.Topics))
	}
	if st.ErrorCode != 0 || len(st.Partitions) != partitions {
		return took, fmt.Errorf("%s answered with %v and %d partitions, want %d", topic, kerr.ErrorForCode(st.ErrorCode), len(st.Partitions), partitions)
	}
	for _, p := range st.Partitions {
		if p.ErrorCode != 0 || !nodes[p.Leader] {
			return took, fmt.Errorf("partition %d answered %v with leader %d", p.Partition, kerr.ErrorForCode(p.ErrorCode), p.Leader)
		}
	}
	return took, nil
}

// askers is one client per gateway, each with only that gateway as its seed, connected.
func askers(t *testing.T, f *fleet) []*kgo.Client {
	t.Helper()
	var out []*kgo.Client
	for _, g := range f.gws {
		cl, err := kgo.NewClient(kgo.SeedBrokers(g.addr), kgo.ClientID(fmt.Sprintf("outage-asker-%d", g.id)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		out = append(out, cl)
	}
	return out
}

// metadataOutage is how long TestMetadataThroughStoreOutage keeps the store away: past the
// gateways' Live (5 s), when every announcement read before the outage is too old.
const metadataOutage = 8 * time.Second

// TestMetadataThroughStoreOutage: the store is killed with no load running, right after a topic
// of 6 partitions was created and asked for at every gateway, so the first Iggy call of the
// outage is Metadata's own. From the kill on, every gateway answers Metadata within
// metadataBound, for the topic and for every topic (kcat -L), listing the three gateways and the
// 6 partitions with their leaders, for longer than an announcement keeps a gateway live.
func TestMetadataThroughStoreOutage(t *testing.T) {
	f := startFleet(t)
	createTopic(t, f, &tap{})
	cls := askers(t, f)
	checkfor.Eventually(t, recovery, "every gateway lists the fleet and the topic", func() error {
		for _, cl := range cls {
			for _, all := range []bool{false, true} {
				if _, err := askMetadata(cl, all); err != nil {
					return err
				}
			}
		}
		return nil
	})
	f.killIggy()
	down := time.Now()
	var slowest, later time.Duration // later: the slowest after each gateway's first round
	rounds := 0
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for ; time.Since(down) < metadataOutage; rounds++ {
		for i, cl := range cls {
			for _, all := range []bool{false, true} {
				took, err := askMetadata(cl, all)
				if err != nil {
					t.Fatalf("%v into the outage, gateway %d (all topics %v): %v", time.Since(down).Round(time.Millisecond), f.gws[i].id, all, err)
				}
				slowest = max(slowest, took)
				if rounds > 0 {
					later = max(later, took)
				}
			}
		}
		<-tick.C
	}
	t.Logf("Metadata for %v without the store: %d rounds of 2 requests to each gateway, the slowest answered in %v, the slowest after the first round in %v",
		metadataOutage, rounds, slowest.Round(time.Microsecond), later.Round(time.Microsecond))
}
