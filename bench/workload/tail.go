package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TailConsumer is a group-less franz-go consumer of topic placed at the end of every one of its
// partitions, returned once it has sent its first Fetch: it has its metadata and offsets and
// waits at the tail when the producer starts, so that a tail phase's window holds no consumer
// start-up. The benchmark's tail phases and bench/cmd/tailcost both start theirs here. hooks are
// added to the client's own; wait bounds the start.
func TailConsumer(ctx context.Context, addr, topic string, partitions int, adm *kadm.Client, wait time.Duration, hooks ...kgo.Hook) (*kgo.Client, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("tail: end offsets: %w", err)
	}
	at := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) { at[o.Partition] = kgo.NewOffset().At(o.Offset) })
	if len(at) != partitions {
		return nil, fmt.Errorf("tail: end offsets of %d partitions, want %d", len(at), partitions)
	}
	first := &firstFetch{sent: make(chan struct{})}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: at}),
		kgo.WithHooks(append([]kgo.Hook{first}, hooks...)...))
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-first.sent:
		return cons, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = fmt.Errorf("tail: the consumer sent no fetch within %v", wait)
	}
	cons.Close()
	return nil, err
}

// firstFetch closes sent when the client has written its first Fetch request.
type firstFetch struct {
	once sync.Once
	sent chan struct{}
}

func (f *firstFetch) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == 1 && err == nil {
		f.once.Do(func() { close(f.sent) })
	}
}
