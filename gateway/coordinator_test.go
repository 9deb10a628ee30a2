package gateway

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// A group's committed offsets outlive the gateway, with the coordinator log and without it, and
// a gateway alone is the controller of its fleet.
func TestGroupOffsetsSurviveARestart(t *testing.T) {
	for _, withLog := range []bool{true, false} {
		t.Run(fmt.Sprintf("log=%v", withLog), func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{
				Bind:           "127.0.0.1:0",
				NodeID:         7,
				CoordinatorLog: withLog,
				DrainTimeout:   5 * time.Second,
				Embedded:       store.Config{Listen: "127.0.0.1:0", DataDir: dir, HeartbeatInterval: 2 * time.Second, PasswordIterations: teststore.PasswordIterations},
			}
			start := func() *Gateway {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				g, err := Start(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			g := start()
			cl := client(t, g, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			adm := kadm.NewClient(cl)
			checkfor.Eventually(t, 10*time.Second, "Metadata naming node 7 controller", func() error {
				req := kmsg.NewPtrMetadataRequest()
				resp, err := req.RequestWith(testCtx(t), cl)
				if err != nil {
					return err
				}
				if resp.ControllerID != 7 || len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 7 {
					return fmt.Errorf("controller %d, brokers %+v", resp.ControllerID, resp.Brokers)
				}
				return nil
			})
			if _, err := adm.CreateTopic(testCtx(t), 2, 1, nil, "orders"); err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				r := &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))}
				if err := cl.ProduceSync(testCtx(t), r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			cons := client(t, g, kgo.ConsumerGroup("readers"), kgo.ConsumeTopics("orders"), kgo.DisableAutoCommit(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			read := 0
			for read < 10 {
				fs := cons.PollFetches(testCtx(t))
				if err := fs.Err0(); err != nil {
					t.Fatal(err)
				}
				read += fs.NumRecords()
			}
			if err := cons.CommitUncommittedOffsets(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			cons.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}

			g = start()
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := g.Shutdown(ctx); err != nil {
					t.Errorf("shutdown: %v", err)
				}
			})
			// A consumer asks for its partitions by name: Iggy keeps the offsets without the log.
			cl = client(t, g)
			checkfor.Eventually(t, 10*time.Second, "the committed offsets after the restart", func() error {
				req := kmsg.NewPtrOffsetFetchRequest()
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = "orders", []int32{0, 1}
				req.Group, req.Topics = "readers", []kmsg.OffsetFetchRequestTopic{rt}
				resp, err := req.RequestWith(testCtx(t), cl)
				if err != nil {
					return err
				}
				got := map[int32]int64{}
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						if t.Topic == "orders" && p.ErrorCode == 0 {
							got[p.Partition] = p.Offset
						}
					}
				}
				if resp.ErrorCode != 0 || got[0] != 5 || got[1] != 5 {
					return fmt.Errorf("code %d, offsets %v, want 5 and 5", resp.ErrorCode, got)
				}
				return nil
			})
		})
	}
}
