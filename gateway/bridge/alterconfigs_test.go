package bridge

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

func strp(s string) *string { return &s }

// configsOf is the topic's configs as DescribeConfigs gets them, by name.
func configsOf(t *testing.T, b *Bridge, m iggyAPI, topic string) map[string]kafka.ConfigEntry {
	t.Helper()
	cfgs, err := b.topicConfigs(context.Background(), m, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kafka.ConfigEntry{}
	for _, c := range cfgs {
		out[c.Name] = c
	}
	return out
}

// An alteration replaces the topic's own configs: what it names is set, in Iggy's topic options
// or the config log, and what it leaves out goes back to its default; another gateway reads it
// back at once. A config the gateway does not take, a bad value or a missing permission change
// nothing.
func TestAlterTopicConfigs(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1, b2 := newMemBridge(t, m), newMemBridge(t, m)
	if err := b1.createTopic(ctx, m, "a", 1, map[string]*string{
		"retention.ms": strp("60000"), "max.message.bytes": strp("2000"), "segment.bytes": strp("1048576"),
	}, false); err != nil {
		t.Fatal(err)
	}
	configsOf(t, b2, m, "a") // b2's config cache is loaded now
	type want struct {
		value   string
		dflt    bool
		dfValue string
	}
	check := func(b *Bridge, wants map[string]want) {
		t.Helper()
		got := configsOf(t, b, m, "a")
		for name, w := range wants {
			if c := got[name]; c.Value != w.value || c.Default != w.dflt || c.DefaultValue != w.dfValue {
				t.Errorf("%s: %+v, want %+v", name, c, w)
			}
		}
	}
	before := map[string]want{
		"retention.ms":      {"60000", false, "-1"},
		"max.message.bytes": {"2000", false, "1048588"},
		"retention.bytes":   {"-1", true, "-1"},
		"compression.type":  {"producer", true, "producer"},
		// Kept and described back without effect; its default is Kafka's.
		"segment.bytes": {"1048576", false, "1073741824"},
		"segment.ms":    {"604800000", true, "604800000"},
	}
	check(b2, before)

	for _, c := range []struct {
		name    string
		configs map[string]*string
		want    error
	}{
		{"unknown config", map[string]*string{"no.such.config": strp("1")}, kerr.InvalidConfig},
		{"a kept config of the wrong type", map[string]*string{"segment.ms": strp("a week")}, kerr.InvalidConfig},
		{"a kept config with an unknown one", map[string]*string{"segment.ms": strp("1000"), "segment.msec": strp("1000")}, kerr.InvalidConfig},
		{"message.timestamp.type neither CreateTime nor LogAppendTime", map[string]*string{"message.timestamp.type": strp("NoTime")}, kerr.InvalidConfig},
		{"cleanup.policy not a list of delete and compact", map[string]*string{"cleanup.policy": strp("compact,forever")}, kerr.InvalidConfig},
		{"bad value", map[string]*string{"retention.ms": strp("soon")}, kerr.InvalidConfig},
		{"compression.type of another client", map[string]*string{"compression.type": strp("none")}, kerr.InvalidConfig},
	} {
		if err := b1.alterTopicConfigs(ctx, m, "a", c.configs, false); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := b1.alterTopicConfigs(ctx, m, "missing", nil, false); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("missing topic: %v", err)
	}
	if err := b1.alterTopicConfigs(ctx, m, "missing", nil, true); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("missing topic, validate only: %v", err)
	}
	next := map[string]*string{"retention.bytes": strp("2147483648"), "compression.type": strp("lz4"), "cleanup.policy": strp("delete")}
	if err := b1.alterTopicConfigs(ctx, m, "a", next, true); err != nil {
		t.Fatalf("validate only: %v", err)
	}
	m.manageErr = wire.Unauthorized
	if err := b1.alterTopicConfigs(ctx, m, "a", next, false); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("without the permission to manage the topic: %v", err)
	}
	m.manageErr = nil
	check(b2, before) // none of the above changed anything

	if err := b1.alterTopicConfigs(ctx, m, "a", next, false); err != nil {
		t.Fatal(err)
	}
	after := map[string]want{
		"retention.ms":      {"-1", true, "-1"},
		"max.message.bytes": {"1048588", true, "1048588"},
		"retention.bytes":   {"2147483648", false, "-1"},
		"compression.type":  {"lz4", false, "producer"},
		"cleanup.policy":    {"delete", true, "delete"},
		"segment.bytes":     {"1073741824", true, "1073741824"},
	}
	for _, b := range []*Bridge{b1, b2} {
		check(b, after)
	}
	// The config log holds the new settings for a gateway that starts now.
	check(newMemBridge(t, m), after)
}

// compression.type is honoured as the codec of the topic's fetched batches (Iggy keeps records
// uncompressed, so Kafka's recompression on write becomes the fetch's): every gateway hands the
// topic's batches out in it, over its own --fetch-codec, and "producer" gives each batch its
// producer's codec back. A gateway reports its --fetch-codec as the topic default.
func TestTopicCompressionType(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1 := newMemBridge(t, m)
	b2, err := newBridge(ctx, m, Config{FetchCodec: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b2.Close() })
	if err := b1.createTopic(ctx, m, "c", 1, map[string]*string{"compression.type": strp("zstd")}, false); err != nil {
		t.Fatal(err)
	}
	if err := b1.createTopic(ctx, m, "bad", 1, map[string]*string{"compression.type": strp("brotli")}, false); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("create with compression.type=brotli: %v", err)
	}
	produced := []int{codecSnappy, codecGzip, codecNone}
	var want []trec
	for i, codec := range produced {
		// Values a codec shrinks, so that "producer" keeps every batch's codec.
		recs := []trec{{Value: bytes.Repeat([]byte{'a' + byte(i)}, 500), TS: 1}, {Value: bytes.Repeat([]byte{'b'}, 500), TS: 2}}
		want = append(want, recs...)
		if _, err := b1.produce(ctx, m, "c", 0, kafkaBatch(t, codec, recs, -1, -1, -1)); err != nil {
			t.Fatal(err)
		}
	}
	codecs := func(b *Bridge) []int {
		t.Helper()
		res, err := b.fetch(ctx, m, "c", 0, 0, 1<<20, 12)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Release()
		got, codecs := readBatchesCodecs(t, res.Records)
		checkRecords(t, got, want, 0)
		return codecs
	}
	for name, b := range map[string]*Bridge{"producing gateway (tail cache)": b1, "other gateway": b2} {
		if got := codecs(b); !slices.Equal(got, []int{codecZstd, codecZstd, codecZstd}) {
			t.Errorf("%s: codecs %v under compression.type=zstd", name, got)
		}
	}
	if c := configsOf(t, b2, m, "c")["compression.type"]; c.Value != "zstd" || c.Default || c.DefaultValue != "uncompressed" {
		t.Errorf("compression.type at the gateway with --fetch-codec none: %+v", c)
	}

	if err := b1.alterTopicConfigs(ctx, m, "c", map[string]*string{"compression.type": strp("producer")}, false); err != nil {
		t.Fatal(err)
	}
	configsOf(t, b2, m, "c") // b2 reads the log now, not within the second its cache lasts
	if got := codecs(b2); !slices.Equal(got, []int{codecSnappy, codecGzip, codecNone}) {
		t.Errorf("compression.type=producer over --fetch-codec none: codecs %v", got)
	}
	if err := b1.alterTopicConfigs(ctx, m, "c", nil, false); err != nil {
		t.Fatal(err)
	}
	configsOf(t, b2, m, "c")
	if got := codecs(b2); !slices.Equal(got, []int{codecNone, codecNone, codecNone}) {
		t.Errorf("compression.type back to the default, --fetch-codec none: codecs %v", got)
	}
	if c := configsOf(t, b2, m, "c")["compression.type"]; c.Value != "uncompressed" || !c.Default {
		t.Errorf("compression.type back to the default: %+v", c)
	}
}

// cleanup.policy takes compact, as Kafka Connect requires of its internal topics, at creation
// and in alterations (whole and incremental lists alike reach the bridge as one value); it is
// kept in the config log, so another gateway and a restart report it; "delete" is the default,
// and a value that is not a list of delete and compact is INVALID_CONFIG.
func TestCleanupPolicyCompact(t *testing.T) {
	ctx := context.Background()
	m := newMemStore()
	b1, b2 := newMemBridge(t, m), newMemBridge(t, m)
	policy := func(b *Bridge) kafka.ConfigEntry {
		t.Helper()
		return configsOf(t, b, m, "connect-offsets")["cleanup.policy"]
	}
	if err := b1.createTopic(ctx, m, "connect-offsets", 1, map[string]*string{"cleanup.policy": strp("compact")}, false); err != nil {
		t.Fatalf("create with cleanup.policy=compact: %v", err)
	}
	for _, b := range []*Bridge{b1, b2, newMemBridge(t, m)} {
		if c := policy(b); c.Value != "compact" || c.Default || c.ReadOnly || c.DefaultValue != "delete" {
			t.Fatalf("after create: %+v, want compact, set, writable, default delete", c)
		}
	}
	for _, c := range []struct{ set, want string }{
		{"delete, compact,delete", "delete,compact"},
		{"delete", "delete"},
		{"compact", "compact"},
	} {
		if err := b1.alterTopicConfigs(ctx, m, "connect-offsets", map[string]*string{"cleanup.policy": strp(c.set)}, false); err != nil {
			t.Fatalf("alter to %q: %v", c.set, err)
		}
		if got := policy(b2); got.Value != c.want || got.Default != (c.want == "delete") {
			t.Fatalf("after altering to %q: %+v, want %q", c.set, got, c.want)
		}
	}
	for _, bad := range []string{"", "compact,", "Compact", "retain"} {
		if err := b1.alterTopicConfigs(ctx, m, "connect-offsets", map[string]*string{"cleanup.policy": strp(bad)}, false); !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("alter to %q: %v, want INVALID_CONFIG", bad, err)
		}
		if err := b1.createTopic(ctx, m, "bad-policy", 1, map[string]*string{"cleanup.policy": strp(bad)}, false); !errors.Is(err, kerr.InvalidConfig) {
			t.Errorf("create with %q: %v, want INVALID_CONFIG", bad, err)
		}
	}
	if c := policy(b2); c.Value != "compact" {
		t.Fatalf("after the refused alterations: %+v, want compact still", c)
	}
}

// FuzzParseConf reads arbitrary user headers as a config log message: nothing may panic, what
// is read is a config the gateway could have written, and it reads back the same once written.
func FuzzParseConf(f *testing.F) {
	f.Add(appendConf(nil, topicConf{maxMessageBytes: 2000, compression: "zstd"}, false))
	f.Add(appendConf(nil, topicConf{}, true))
	f.Add(appendConf(appendConf(nil, topicConf{compression: "gzip"}, false), topicConf{maxMessageBytes: 1}, false))
	f.Add(appendConf(nil, topicConf{cleanup: "compact,delete"}, false))
	f.Add(appendConf(nil, topicConf{stored: map[string]string{"segment.ms": "1000", "preallocate": "true"}}, false))
	f.Fuzz(func(t *testing.T, h []byte) {
		conf, deleted := parseConf(h)
		if _, ok := compressionTypes[conf.compression]; conf.compression != "" && !ok {
			t.Fatalf("compression.type %q read", conf.compression)
		}
		if c, err := cleanupPolicy(conf.cleanup); conf.cleanup != "" && (err != nil || c != conf.cleanup) {
			t.Fatalf("cleanup.policy %q read", conf.cleanup)
		}
		again, againDeleted := parseConf(appendConf(nil, conf, deleted))
		if conf.maxMessageBytes < 0 {
			conf.maxMessageBytes = 0 // not written: the gateway's default
		}
		if !reflect.DeepEqual(again, conf) || againDeleted != deleted {
			t.Fatalf("read %+v %v, written and read again %+v %v", conf, deleted, again, againDeleted)
		}
	})
}

// FuzzParseBrokerConf reads arbitrary user headers as a scope's broker configs: nothing may
// panic, every config read is one a gateway could have written, and written again it reads back
// the same.
func FuzzParseBrokerConf(f *testing.F) {
	f.Add(appendScoped(nil, map[string]string{"num.io.threads": "4", "log.retention.hours": "24"}))
	f.Add(appendScoped(nil, map[string]string{"log.cleanup.policy": "compact,delete"}))
	f.Add([]byte{kindString, 3, 0, 0, 0, 'a', 'b', 'c', kindString, 1, 0, 0, 0, 'x'})
	f.Fuzz(func(t *testing.T, h []byte) {
		conf := parseScoped(h, kafka.CheckBrokerConfig)
		for k, v := range conf {
			if err := kafka.CheckBrokerConfig(k, v); err != nil {
				t.Fatalf("read %s=%q: %v", k, v, err)
			}
		}
		if again := parseScoped(appendScoped(nil, conf), kafka.CheckBrokerConfig); !reflect.DeepEqual(again, conf) {
			t.Fatalf("read %v, written and read again %v", conf, again)
		}
	})
}
