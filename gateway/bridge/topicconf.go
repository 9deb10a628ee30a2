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
	"github.com/iggy-kafka/iggy-kafka/gateway/quota"
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
	// scoped are the settings kept per scope rather than per topic, by kind: the dynamic broker
	// configs ("" the cluster's default, else a node id) and the client quotas (by entity),
	// kept in the same log under scopedName(kind, scope).
	scoped map[scopedKind]map[string]map[string]string
}

// scopedKind is a kind of setting the config log keeps per scope.
type scopedKind string

const (
	brokerKind scopedKind = "broker"
	quotaKind  scopedKind = "quota"
)

// scopedCheck is the check of each kind's entries: what does not pass is skipped when read.
var scopedCheck = map[scopedKind]func(name, value string) error{
	brokerKind: kafka.CheckBrokerConfig,
	quotaKind:  quota.CheckText,
}

// scopedName is the name under which the config log keeps a scope's settings of a kind: it
// starts with a zero byte, so no topic can be named so (Kafka topic names are [a-zA-Z0-9._-]).
func scopedName(kind scopedKind, scope string) string { return "\x00" + string(kind) + ":" + scope }

// parseScopedName reports the kind and scope of a name scopedName made.
func parseScopedName(name string) (scopedKind, string, bool) {
	rest, ok := strings.CutPrefix(name, "\x00")
	if !ok {
		return "", "", false
	}
	kind, scope, ok := strings.Cut(rest, ":")
	if _, known := scopedCheck[scopedKind(kind)]; !ok || !known {
		return "", "", false
	}
	return scopedKind(kind), scope, true
}

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
				if strings.HasPrefix(string(f.Payload), "\x00") {
					// Scoped settings, or a kind a later gateway added: never a topic.
					if kind, scope, ok := parseScopedName(string(f.Payload)); ok {
						if c.scoped == nil {
							c.scoped = map[scopedKind]map[string]map[string]string{}
						}
						if c.scoped[kind] == nil {
							c.scoped[kind] = map[string]map[string]string{}
						}
						if m := parseScoped(f.UserHeaders, scopedCheck[kind]); len(m) > 0 {
							c.scoped[kind][scope] = m
						} else {
							delete(c.scoped[kind], scope)
						}
					}
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
	eachTLV(b, func(k []byte, vk byte, val []byte) bool {
		key := string(k)
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
		return true
	})
	return conf, deleted
}

// parseScoped reads the user headers of a scope's settings: string items that pass check;
// others are skipped.
func parseScoped(b []byte, check func(name, value string) error) map[string]string {
	out := map[string]string{}
	eachTLV(b, func(k []byte, vk byte, v []byte) bool {
		if key, val := string(k), string(v); vk == kindString && check(key, val) == nil {
			out[key] = val
		}
		return true
	})
	return out
}

// appendScoped appends a scope's settings as user headers, in name order.
func appendScoped(h []byte, settings map[string]string) []byte {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		h = appendTLVKey(h, k)
		h = appendTLVHead(h, kindString, len(settings[k]))
		h = append(h, settings[k]...)
	}
	return h
}

// readScoped returns every scope's settings of a kind, reading what other gateways appended
// first.
func (b *Bridge) readScoped(ctx context.Context, kind scopedKind) (map[string]map[string]string, error) {
	c := &b.conf
	c.refresh.Lock()
	defer c.refresh.Unlock()
	if err := b.refreshConf(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded = b.clock.Now()
	out := make(map[string]map[string]string, len(c.scoped[kind]))
	for scope, m := range c.scoped[kind] {
		out[scope] = maps.Clone(m)
	}
	return out, nil
}

// setScoped records a scope's settings of a kind in Iggy, replacing what it had; none removes
// the scope.
func (b *Bridge) setScoped(ctx context.Context, kind scopedKind, scope string, settings map[string]string) error {
	var mb message.Builder
	mb.Reset()
	mb.Add(message.MakeID(b.ids.ctr.Add(1), b.ids.hi), uint64(b.clock.Now().UnixMicro()), []byte(scopedName(kind, scope)), appendScoped(nil, settings))
	batch, err := mb.Finish()
	if err != nil {
		return err
	}
	if _, err := b.admin.send(ctx, b.meta, topicConfigsTopic, 0, batch); err != nil {
		return fmt.Errorf("bridge: record the %s settings of %q: %w", kind, scope, adminErr(err))
	}
	c := &b.conf
	c.refresh.Lock()
	c.mu.Lock()
	if c.scoped == nil {
		c.scoped = map[scopedKind]map[string]map[string]string{}
	}
	if c.scoped[kind] == nil {
		c.scoped[kind] = map[string]map[string]string{}
	}
	if len(settings) > 0 {
		c.scoped[kind][scope] = maps.Clone(settings)
	} else {
		delete(c.scoped[kind], scope)
	}
	c.mu.Unlock()
	c.refresh.Unlock()
	return nil
}

// BrokerConfigs returns the dynamic broker configs of every scope (kafka.BrokerConfigs).
func (b *Bridge) BrokerConfigs(ctx context.Context) (map[string]map[string]string, error) {
	return b.readScoped(ctx, brokerKind)
}

// SetBrokerConfigs records a scope's dynamic broker configs, replacing what it had.
func (b *Bridge) SetBrokerConfigs(ctx context.Context, scope string, configs map[string]string) error {
	return b.setScoped(ctx, brokerKind, scope, configs)
}

// ClientQuotas returns the client quotas of every entity (kafka.ClientQuotas); an entity is
// named by kafka's encoding of it.
func (b *Bridge) ClientQuotas(ctx context.Context) (map[string]map[string]string, error) {
	return b.readScoped(ctx, quotaKind)
}

// SetClientQuotas records an entity's quotas, replacing what it had; none removes the entity.
func (b *Bridge) SetClientQuotas(ctx context.Context, entity string, quotas map[string]string) error {
	return b.setScoped(ctx, quotaKind, entity, quotas)
}
