package bridge

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/message"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// storedConfig reports whether a Kafka topic config is one the config log keeps as it is
// (conf.stored) rather than in a field of its own or in Iggy's settings.
func storedConfig(name string) bool {
	switch name {
	case confMaxMessage, confCompression, confTimestampType, confCleanup, "retention.ms", "retention.bytes":
		return false
	}
	return true
}

// Kafka topic configs that Iggy has no field for live in Iggy too: every
// create, config change or delete of a topic appends one message to
// "<stream>.meta"/topic_configs (partition 0) whose payload is the topic name
// and whose user headers carry all of the topic's configs; the latest message
// per name wins. Gateways read the log incrementally, at most once per
// confRefresh when a produce or fetch needs it, and at once for
// DescribeConfigs.
const (
	topicConfigsTopic = "topic_configs"
	confMaxMessage    = "max.message.bytes"      // Int32
	confCompression   = "compression.type"       // String, one of compressionTypes
	confTimestampType = "message.timestamp.type" // String "LogAppendTime"; absent: CreateTime
	confCleanup       = "cleanup.policy"         // String, "compact" or "compact,delete" (cleanupPolicy)
	confDeleted       = "deleted"                // Bool: the topic was deleted
	confRefresh       = time.Second
	confPollCount     = 1000
	kindBool          = 3
)

// topicConf is what the bridge keeps per topic beyond Iggy's own settings.
type topicConf struct {
	maxMessageBytes int32  // 0: Config.MaxMessageBytes
	compression     string // a key of compressionTypes; empty: Config.FetchCodec
	logAppendTime   bool   // message.timestamp.type=LogAppendTime; false: CreateTime
	cleanup         string // cleanup.policy as cleanupPolicy gives it; empty: "delete"
	// stored are the topic's other Kafka topic configs (kafka.CheckTopicConfig), kept and
	// described back without effect: Iggy has nothing they would act on.
	stored map[string]string
}

type confCache struct {
	// refresh is held across the read of the config log, an Iggy round trip,
	// and orders it with the cache updates of writeTopicConf. mu only guards
	// the fields, so once the cache has been loaded a refresh in progress
	// holds up no produce, on any partition.
	refresh sync.Mutex
	next    uint64 // guarded by refresh

	mu     sync.Mutex
	loaded time.Time
	m      map[string]topicConf
	// broker are the dynamic broker configs by scope ("" the cluster's default, else a node
	// id), kept in the same log under brokerConfName(scope).
	broker map[string]map[string]string
}

// brokerConfPrefix starts the name under which the config log keeps a scope's dynamic broker
// configs: no topic can be named so (Kafka topic names are [a-zA-Z0-9._-]).
const brokerConfPrefix = "\x00broker:"

func brokerConfName(scope string) string { return brokerConfPrefix + scope }

// writeTopicConf records a topic's configs (or its deletion) in Iggy and in
// this gateway's cache.
func (b *Bridge) writeTopicConf(ctx context.Context, name string, conf topicConf, deleted bool) error {
	h := appendConf(nil, conf, deleted)
	var mb message.Builder
	mb.Reset()
	mb.Add(message.MakeID(b.ids.ctr.Add(1), b.ids.hi), uint64(time.Now().UnixMicro()), []byte(name), h)
	batch, err := mb.Finish()
	if err != nil {
		return err
	}
	if _, err := b.admin.send(ctx, b.meta, topicConfigsTopic, 0, batch); err != nil {
		return fmt.Errorf("bridge: record configs of %s: %w", name, adminErr(err))
	}
	b.conf.refresh.Lock()
	b.conf.mu.Lock()
	if deleted {
		delete(b.conf.m, name)
	} else {
		b.conf.m[name] = conf
	}
	b.conf.mu.Unlock()
	b.conf.refresh.Unlock()
	return nil
}

// topicConf returns the stored configs of a topic, reading what other
// gateways appended when the cache is older than confRefresh. Only one caller
// reads at a time; the others go on with the cache, which is then at most one
// round trip older than what that read will find.
func (b *Bridge) topicConf(ctx context.Context, name string) (topicConf, error) {
	c := &b.conf
	c.mu.Lock()
	conf, stale, loaded := c.m[name], b.clock.Now().Sub(c.loaded) >= confRefresh, !c.loaded.IsZero()
	c.mu.Unlock()
	if !stale {
		return conf, nil
	}
	if !loaded {
		c.refresh.Lock()
	} else if !c.refresh.TryLock() {
		return conf, nil
	}
	defer c.refresh.Unlock()
	c.mu.Lock()
	stale = b.clock.Now().Sub(c.loaded) >= confRefresh
	c.mu.Unlock()
	if stale {
		if err := b.refreshConf(ctx); err != nil {
			return topicConf{}, err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if stale {
		c.loaded = b.clock.Now()
	}
	return c.m[name], nil
}

// freshTopicConf reads what other gateways appended to the config log now, whatever the cache's
// age, and returns the topic's configs.
func (b *Bridge) freshTopicConf(ctx context.Context, name string) (topicConf, error) {
	c := &b.conf
	c.refresh.Lock()
	defer c.refresh.Unlock()
	if err := b.refreshConf(ctx); err != nil {
		return topicConf{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = b.clock.Now()
	return c.m[name], nil
}

// refreshConf reads the config log from where the last read stopped. The
// caller holds b.conf.refresh, not b.conf.mu.
func (b *Bridge) refreshConf(ctx context.Context) error {
	c := &b.conf
	for {
		p, err := b.admin.poll(ctx, b.meta, topicConfigsTopic, 0, c.next, confPollCount)
		if err != nil {
			return fmt.Errorf("bridge: read topic configs: %w", kafkaErr(err))
		}
		recs := p.Records
		n := p.Count
		c.mu.Lock()
		for len(recs) > 0 {
			rec, rest, ok := splitRecord(recs)
			if !ok {
				break
			}
			recs = rest
			base := batchBase(rec)
			it := message.Frames(rec)
			for f, ok := it.Next(); ok; f, ok = it.Next() {
				if off := base + uint64(f.OffsetDelta); off >= c.next {
					c.next = off + 1
				}
				if scope, ok := strings.CutPrefix(string(f.Payload), brokerConfPrefix); ok {
					if c.broker == nil {
						c.broker = map[string]map[string]string{}
					}
					c.broker[scope] = parseBrokerConf(f.UserHeaders)
					continue
				}
				conf, deleted := parseConf(f.UserHeaders)
				if deleted {
					delete(c.m, string(f.Payload))
				} else {
					c.m[string(f.Payload)] = conf
				}
			}
		}
		c.mu.Unlock()
		if p.Release != nil {
			p.Release()
		}
		if n < confPollCount {
			return nil
		}
	}
}

// appendConf appends the user headers of a config log message, which parseConf reads.
func appendConf(h []byte, conf topicConf, deleted bool) []byte {
	if conf.maxMessageBytes > 0 {
		h = appendInt(h, confMaxMessage, kindInt32, 4, uint64(uint32(conf.maxMessageBytes)))
	}
	if conf.compression != "" {
		h = appendTLVKey(h, confCompression)
		h = appendTLVHead(h, kindString, len(conf.compression))
		h = append(h, conf.compression...)
	}
	if conf.logAppendTime {
		h = appendTLVKey(h, confTimestampType)
		h = appendTLVHead(h, kindString, len(logAppendTime))
		h = append(h, logAppendTime...)
	}
	if conf.cleanup != "" {
		h = appendTLVKey(h, confCleanup)
		h = appendTLVHead(h, kindString, len(conf.cleanup))
		h = append(h, conf.cleanup...)
	}
	for _, k := range slices.Sorted(maps.Keys(conf.stored)) {
		h = appendTLVKey(h, k)
		h = appendTLVHead(h, kindString, len(conf.stored[k]))
		h = append(h, conf.stored[k]...)
	}
	if deleted {
		h = appendInt(h, confDeleted, kindBool, 1, 1)
	}
	return h
}

// parseConf reads the user headers of a config log message; items it does not know, or of
// another kind or size than it expects, are skipped, so that a later gateway may add some.
func parseConf(b []byte) (topicConf, bool) {
	var conf topicConf
	deleted := false
	le := binary.LittleEndian
	for len(b) >= 5 {
		kl := le.Uint32(b[1:])
		if uint64(kl) > uint64(len(b)-5) {
			break
		}
		key := string(b[5 : 5+kl])
		b = b[5+kl:]
		if len(b) < 5 {
			break
		}
		vk, vl := b[0], le.Uint32(b[1:])
		if uint64(vl) > uint64(len(b)-5) {
			break
		}
		val := b[5 : 5+vl]
		b = b[5+vl:]
		switch {
		case key == confMaxMessage && vk == kindInt32 && len(val) == 4:
			conf.maxMessageBytes = int32(le.Uint32(val))
		case key == confCompression && vk == kindString:
			if _, ok := compressionTypes[string(val)]; ok {
				conf.compression = string(val)
			}
		case key == confTimestampType && vk == kindString:
			conf.logAppendTime = string(val) == logAppendTime
		case key == confCleanup && vk == kindString:
			if v, err := cleanupPolicy(string(val)); err == nil {
				conf.cleanup = v
			}
		case key == confDeleted && vk == kindBool && len(val) == 1:
			deleted = val[0] == 1
		case vk == kindString && storedConfig(key) && kafka.CheckTopicConfig(key, string(val)) == nil:
			if conf.stored == nil {
				conf.stored = map[string]string{}
			}
			conf.stored[key] = string(val)
		}
	}
	return conf, deleted
}

// parseBrokerConf reads the user headers of a scope's broker configs: string items, each a
// dynamic broker config with a value of its type (kafka.CheckBrokerConfig); others are
// skipped.
func parseBrokerConf(b []byte) map[string]string {
	out := map[string]string{}
	le := binary.LittleEndian
	for len(b) >= 5 {
		kl := le.Uint32(b[1:])
		if uint64(kl) > uint64(len(b)-5) {
			break
		}
		key := string(b[5 : 5+kl])
		b = b[5+kl:]
		if len(b) < 5 {
			break
		}
		vk, vl := b[0], le.Uint32(b[1:])
		if uint64(vl) > uint64(len(b)-5) {
			break
		}
		val := string(b[5 : 5+vl])
		b = b[5+vl:]
		if vk == kindString && kafka.CheckBrokerConfig(key, val) == nil {
			out[key] = val
		}
	}
	return out
}

// appendBrokerConf appends a scope's broker configs as user headers, in name order.
func appendBrokerConf(h []byte, configs map[string]string) []byte {
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		h = appendTLVKey(h, k)
		h = appendTLVHead(h, kindString, len(configs[k]))
		h = append(h, configs[k]...)
	}
	return h
}

// BrokerConfigs returns the dynamic broker configs of every scope, reading what other gateways
// appended first (kafka.BrokerConfigs).
func (b *Bridge) BrokerConfigs(ctx context.Context) (map[string]map[string]string, error) {
	c := &b.conf
	c.refresh.Lock()
	defer c.refresh.Unlock()
	if err := b.refreshConf(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = b.clock.Now()
	out := make(map[string]map[string]string, len(c.broker))
	for scope, m := range c.broker {
		out[scope] = maps.Clone(m)
	}
	return out, nil
}

// SetBrokerConfigs records a scope's dynamic broker configs in Iggy, replacing what it had.
func (b *Bridge) SetBrokerConfigs(ctx context.Context, scope string, configs map[string]string) error {
	var mb message.Builder
	mb.Reset()
	mb.Add(message.MakeID(b.ids.ctr.Add(1), b.ids.hi), uint64(b.clock.Now().UnixMicro()), []byte(brokerConfName(scope)), appendBrokerConf(nil, configs))
	batch, err := mb.Finish()
	if err != nil {
		return err
	}
	if _, err := b.admin.send(ctx, b.meta, topicConfigsTopic, 0, batch); err != nil {
		return fmt.Errorf("bridge: record broker configs of %q: %w", scope, adminErr(err))
	}
	b.conf.refresh.Lock()
	b.conf.mu.Lock()
	if b.conf.broker == nil {
		b.conf.broker = map[string]map[string]string{}
	}
	b.conf.broker[scope] = maps.Clone(configs)
	b.conf.mu.Unlock()
	b.conf.refresh.Unlock()
	return nil
}
