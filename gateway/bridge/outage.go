package bridge

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// A store outage must not shrink a topic: a topic answered with an error and no partitions makes
// clients drop what they queued for it. The bridge therefore remembers the partition count of
// every topic it has seen in Iggy and, while Iggy cannot be reached, answers topic lookups from
// that memory, marked Offline; Metadata goes on naming every partition's leader, and produce and
// fetch answer retriable errors. The memory holds only topics Iggy listed, so it is bounded by
// the store's topics, not by what clients ask.
//
// Metadata answers in its usual time through an outage: a read of a topic or of the topic list
// (lookup; Metadata's, and those of produce and fetch) waits at most offlineProbe even before the
// store was found unreachable (the first call of an outage would otherwise wait out the Iggy
// client's dial timeout). Once one got no answer, or any call found Iggy unreachable, lookups
// fail at once (Metadata answers from memory, produce and fetch with a retriable error) and the
// bridge reads the topic list in the background, at most once per offlineProbe and each read
// bounded by it (probeSoon), until Iggy answers: any answer ends the outage for every call.

// offlineProbe bounds a topic lookup while the last call to Iggy found it unreachable: a
// Metadata request naming many topics would otherwise wait a whole dial timeout per topic.
const offlineProbe = 500 * time.Millisecond

// unreachable reports whether err says Iggy could not be reached or the connection to it broke.
func unreachable(err error) bool {
	return errors.Is(err, iggy.ErrConnectionLost) || errors.Is(err, iggy.ErrUnavailable)
}

type knownTopics struct {
	down atomic.Bool // the last call to Iggy found it unreachable
	// unanswered: the last lookup found Iggy unreachable or ran out of offlineProbe.
	unanswered atomic.Bool
	// probed is when the last background read of the topic list started, or when the last
	// lookup got no answer (Unix ns on the bridge's clock).
	probed atomic.Int64

	mu sync.Mutex
	m  map[string]int32 // topic -> partitions, as Iggy last answered
	// listed says m came from a full listing, so it may answer for every topic.
	listed bool
}

func (k *knownTopics) set(t topicMeta) { k.setCount(t.Name, int32(len(t.Partitions))) }

func (k *knownTopics) setCount(name string, partitions int32) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]int32{}
	}
	k.m[name] = partitions
	k.mu.Unlock()
}

func (k *knownTopics) replace(ts []topicMeta) {
	m := make(map[string]int32, len(ts))
	for _, t := range ts {
		m[t.Name] = int32(len(t.Partitions))
	}
	k.mu.Lock()
	k.m, k.listed = m, true
	k.mu.Unlock()
}

func (k *knownTopics) drop(name string) {
	k.mu.Lock()
	delete(k.m, name)
	k.mu.Unlock()
}

func (k *knownTopics) get(name string) (int32, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, ok := k.m[name]
	return n, ok
}

// all returns every known topic, Offline, sorted by name; ok is false when no full listing was
// ever had.
func (k *knownTopics) all() (out []kafka.TopicInfo, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.listed {
		return nil, false
	}
	for name, n := range k.m {
		out = append(out, kafka.TopicInfo{Name: name, Partitions: n, Offline: true})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, true
}

// guarded is an iggyAPI whose every call tells the bridge whether Iggy answered, and which,
// while Iggy was last found unreachable, gives each call at most offlineProbe (on the bridge's
// clock): every Kafka request would otherwise wait a whole dial timeout per Iggy call before it
// is answered with a retriable error.
type guarded struct {
	api iggyAPI
	b   *Bridge
}

func (b *Bridge) guard(api iggyAPI) iggyAPI { return guarded{api: api, b: b} }

// call runs f, under the probe bound when bound is set or Iggy was found unreachable, and notes
// what it found. A bound that ran out while Iggy was taken as reachable says it is slow, not
// gone: only a call that failed to reach it, or one bounded because it was gone, finds it gone.
func (g guarded) call(ctx context.Context, f func(context.Context) error) error {
	return g.callBound(ctx, false, f)
}

func (g guarded) callBound(ctx context.Context, bound bool, f func(context.Context) error) error {
	wasDown := g.b.known.down.Load()
	pctx, cancel := ctx, func() {}
	if bound || wasDown {
		var c context.CancelFunc
		pctx, c = context.WithCancel(ctx)
		t := g.b.clock.AfterFunc(offlineProbe, c)
		cancel = func() { t.Stop(); c() }
	}
	err := f(pctx)
	probed := pctx.Err() != nil
	cancel()
	if ctx.Err() != nil {
		return err // the caller gave up: nothing was learnt about Iggy
	}
	if err != nil && !unreachable(err) && probed {
		err = fmt.Errorf("%w: no answer within %v: %w", iggy.ErrUnavailable, offlineProbe, err)
	}
	gone := err != nil && unreachable(err)
	g.b.known.down.Store(gone && (wasDown || !probed))
	if !gone {
		g.b.known.unanswered.Store(false)
	}
	return err
}

// lookup runs a topic read, which the bridge's memory can answer instead: bounded by
// offlineProbe, and while Iggy was found unreachable, or the last lookup got no answer within
// its bound, it fails at once and has the topic list read in the background. A lookup that ran
// out of its bound leaves the other calls as they were (Iggy may be slow, not gone).
func (g guarded) lookup(ctx context.Context, f func(context.Context) error) error {
	k := &g.b.known
	if k.down.Load() || k.unanswered.Load() {
		g.b.probeSoon()
		return fmt.Errorf("%w: no answer from Iggy lately, asked again in the background", iggy.ErrUnavailable)
	}
	err := g.callBound(ctx, true, f)
	if ctx.Err() == nil && err != nil && unreachable(err) {
		k.probed.Store(g.b.clock.Now().UnixNano())
		k.unanswered.Store(true)
	}
	return err
}

// outageProbes are the background reads of the topic list during an outage (probeSoon); Close
// ends them.
type outageProbes struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (p *outageProbes) init() { p.ctx, p.cancel = context.WithCancel(context.Background()) }

func (p *outageProbes) close() {
	p.mu.Lock()
	p.closed = true
	p.cancel()
	p.mu.Unlock()
	p.wg.Wait()
}

// probeSoon reads the topic list in the background, bounded by offlineProbe, unless a read
// started less than offlineProbe ago. An answer ends the outage: the memory takes the list, and
// calls go to Iggy again.
func (b *Bridge) probeSoon() {
	k := &b.known
	now, last := b.clock.Now().UnixNano(), k.probed.Load()
	if now-last < int64(offlineProbe) || !k.probed.CompareAndSwap(last, now) {
		return
	}
	p := &b.probes
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.wg.Go(func() {
		ctx, cancel := context.WithCancel(p.ctx)
		t := b.clock.AfterFunc(offlineProbe, cancel)
		ts, err := b.raw.topics(ctx, b.cfg.Stream)
		t.Stop()
		answered := ctx.Err() == nil && (err == nil || !unreachable(err))
		cancel()
		if !answered {
			return
		}
		if err == nil {
			k.replace(ts)
		}
		k.down.Store(false)
		k.unanswered.Store(false)
	})
}

func (g guarded) ensureStream(ctx context.Context, stream string) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.ensureStream(ctx, stream) })
}

func (g guarded) topic(ctx context.Context, stream, name string) (t topicMeta, err error) {
	err = g.lookup(ctx, func(ctx context.Context) error { t, err = g.api.topic(ctx, stream, name); return err })
	return t, err
}

func (g guarded) topics(ctx context.Context, stream string) (ts []topicMeta, err error) {
	err = g.lookup(ctx, func(ctx context.Context) error { ts, err = g.api.topics(ctx, stream); return err })
	return ts, err
}

func (g guarded) createTopic(ctx context.Context, stream, name string, partitions uint32, opts topicOptions) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.createTopic(ctx, stream, name, partitions, opts) })
}

func (g guarded) deleteTopic(ctx context.Context, stream, name string) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.deleteTopic(ctx, stream, name) })
}

func (g guarded) createPartitions(ctx context.Context, stream, name string, count uint32) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.createPartitions(ctx, stream, name, count) })
}

func (g guarded) updateTopic(ctx context.Context, stream, name string, opts topicOptions) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.updateTopic(ctx, stream, name, opts) })
}

func (g guarded) send(ctx context.Context, stream, topic string, partition uint32, batch []byte) (off uint64, err error) {
	err = g.call(ctx, func(ctx context.Context) error {
		off, err = g.api.send(ctx, stream, topic, partition, batch)
		return err
	})
	return off, err
}

func (g guarded) poll(ctx context.Context, stream, topic string, partition uint32, offset uint64, count uint32) (p polled, err error) {
	err = g.call(ctx, func(ctx context.Context) error {
		p, err = g.api.poll(ctx, stream, topic, partition, offset, count)
		return err
	})
	return p, err
}

func (g guarded) consumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string) (off uint64, ok bool, err error) {
	err = g.call(ctx, func(ctx context.Context) error {
		off, ok, err = g.api.consumerOffset(ctx, stream, topic, partition, consumer)
		return err
	})
	return off, ok, err
}

func (g guarded) storeConsumerOffset(ctx context.Context, stream, topic string, partition uint32, consumer string, offset uint64) error {
	return g.call(ctx, func(ctx context.Context) error {
		return g.api.storeConsumerOffset(ctx, stream, topic, partition, consumer, offset)
	})
}

func (g guarded) deleteSegments(ctx context.Context, stream, topic string, partition, count uint32) error {
	return g.call(ctx, func(ctx context.Context) error { return g.api.deleteSegments(ctx, stream, topic, partition, count) })
}

// lookupTopic asks Iggy for one topic and keeps what it learns in b.known.
func (b *Bridge) lookupTopic(ctx context.Context, as iggyAPI, name string) (topicMeta, error) {
	t, err := as.topic(ctx, b.cfg.Stream, name)
	switch {
	case err == nil:
		b.known.set(t)
	case isNotFound(err):
		b.known.drop(name)
	}
	return t, err
}

// learn looks a topic up when this gateway served one of its partitions without knowing it
// has that many: clients may take the topic's metadata from another gateway, and this one must
// still list it whole through an outage. It costs one lookup per topic (and per growth), only
// for topics that exist.
func (b *Bridge) learn(ctx context.Context, as iggyAPI, topic string, partition int32) {
	if n, ok := b.known.get(topic); ok && partition < n {
		return
	}
	_, _ = b.lookupTopic(ctx, as, topic)
}

// offlineTopic answers a lookup that found Iggy unreachable: the last known partitions, or
// LEADER_NOT_AVAILABLE for a topic this gateway never saw (retriable, as Kafka answers a topic
// whose leaders are not known yet).
func (b *Bridge) offlineTopic(name string, err error) (kafka.TopicInfo, error) {
	if n, ok := b.known.get(name); ok {
		return kafka.TopicInfo{Name: name, Partitions: n, Offline: true}, nil
	}
	return kafka.TopicInfo{}, fmt.Errorf("%w: %w", kerr.LeaderNotAvailable, err)
}
