package gateway

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// A DeleteTopics through the gateway drops the topic's committed offsets at once, well before the
// coordinator's periodic topic resync (10 s) would, so a recreated topic starts without them.
func TestDeleteTopicDropsItsOffsets(t *testing.T) {
	g := startGateway(t, func(c *Config) { c.CoordinatorLog = true })
	adm := kadm.NewClient(client(t, g))
	ctx := testCtx(t)
	for _, topic := range []string{"gone", "kept"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	offsets := kadm.Offsets{}
	offsets.AddOffset("gone", 0, 0, -1)
	offsets.AddOffset("kept", 0, 0, -1)
	checkfor.Eventually(t, 10*time.Second, "commit", func() error {
		r, err := adm.CommitOffsets(ctx, "g", offsets)
		if err != nil {
			return err
		}
		return r.Error()
	})
	committed := func() (map[string]int64, error) {
		r, err := adm.FetchOffsets(ctx, "g")
		if err != nil {
			return nil, err
		}
		out := map[string]int64{}
		r.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				out[o.Topic] = o.At
			}
		})
		return out, nil
	}
	if got, err := committed(); err != nil || len(got) != 2 {
		t.Fatalf("before the delete: %v %v", got, err)
	}
	if r, err := adm.DeleteTopic(ctx, "gone"); err != nil || r.Err != nil {
		t.Fatalf("delete: %v %v", err, r.Err)
	}
	start := time.Now()
	checkfor.Eventually(t, 3*time.Second, "the deleted topic's offsets dropped", func() error {
		got, err := committed()
		if err != nil {
			return err
		}
		if _, ok := got["gone"]; ok || got["kept"] != 0 || len(got) != 1 {
			return fmt.Errorf("committed %v", got)
		}
		return nil
	})
	t.Logf("dropped %v after the delete", time.Since(start))
}
