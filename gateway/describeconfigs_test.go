package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// DescribeConfigs answers as Kafka does: each entry with its config type (v3+), its source,
// and with IncludeSynonyms (v1+) the values it overrides, highest precedence first: the topic's
// own setting, then the broker config behind it (message.max.bytes behind max.message.bytes,
// log.retention.ms behind retention.ms, ...) at the gateway's default.
func TestDescribeConfigsTypesSourcesSynonyms(t *testing.T) {
	g := startGateway(t, nil)
	cl := client(t, g)
	if r, err := kadm.NewClient(cl).CreateTopic(testCtx(t), 1, 1, map[string]*string{
		"retention.ms": kmsg.StringPtr("60000"), "max.message.bytes": kmsg.StringPtr("2000"),
	}, "configs"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}
	describe := func(version int16, synonyms bool, typ kmsg.ConfigResourceType, name string) map[string]kmsg.DescribeConfigsResponseResourceConfig {
		t.Helper()
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Version = version
		req.IncludeSynonyms = synonyms
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = typ, name
		req.Resources = append(req.Resources, rr)
		// A client pinned to the version: kgo would otherwise send the highest both speak.
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(kmsg.DescribeConfigs.Int16(), version)
		resp, err := req.RequestWith(testCtx(t), client(t, g, kgo.MaxVersions(vs)))
		if err != nil || len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || resp.Version != version {
			t.Fatalf("describe v%d %s: %+v %v", version, name, resp, err)
		}
		out := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
		for _, c := range resp.Resources[0].Configs {
			out[c.Name] = c
		}
		return out
	}
	syn := func(c kmsg.DescribeConfigsResponseResourceConfig) string {
		var s []string
		for _, y := range c.ConfigSynonyms {
			v := "<nil>"
			if y.Value != nil {
				v = *y.Value
			}
			s = append(s, fmt.Sprintf("%s=%s@%d", y.Name, v, y.Source))
		}
		return strings.Join(s, " ")
	}
	const (
		topicSrc   = kmsg.ConfigSourceDynamicTopicConfig
		defaultSrc = kmsg.ConfigSourceDefaultConfig
	)
	want := []struct {
		name     string
		typ      kmsg.ConfigType
		source   kmsg.ConfigSource
		synonyms string
	}{
		{"retention.ms", kmsg.ConfigTypeLong, topicSrc, fmt.Sprintf("retention.ms=60000@%d log.retention.ms=-1@%d", topicSrc, defaultSrc)},
		{"max.message.bytes", kmsg.ConfigTypeInt, topicSrc, fmt.Sprintf("max.message.bytes=2000@%d message.max.bytes=1048588@%d", topicSrc, defaultSrc)},
		{"retention.bytes", kmsg.ConfigTypeLong, defaultSrc, fmt.Sprintf("log.retention.bytes=-1@%d", defaultSrc)},
		{"cleanup.policy", kmsg.ConfigTypeList, defaultSrc, fmt.Sprintf("log.cleanup.policy=delete@%d", defaultSrc)},
		{"compression.type", kmsg.ConfigTypeString, defaultSrc, fmt.Sprintf("compression.type=producer@%d", defaultSrc)},
		{"message.timestamp.type", kmsg.ConfigTypeString, defaultSrc, fmt.Sprintf("log.message.timestamp.type=CreateTime@%d", defaultSrc)},
	}
	v4 := describe(4, true, kmsg.ConfigResourceTypeTopic, "configs")
	for _, w := range want {
		c, ok := v4[w.name]
		if !ok {
			t.Fatalf("%s not described", w.name)
		}
		if c.ConfigType != w.typ || c.Source != w.source || syn(c) != w.synonyms {
			t.Errorf("%s: type %d, source %d, synonyms %q; want %d, %d, %q", w.name, c.ConfigType, c.Source, syn(c), w.typ, w.source, w.synonyms)
		}
	}
	// Synonyms only when asked for; the type and source all the same.
	for name, c := range describe(3, false, kmsg.ConfigResourceTypeTopic, "configs") {
		if len(c.ConfigSynonyms) != 0 || c.ConfigType == kmsg.ConfigTypeUnknown {
			t.Errorf("v3 without IncludeSynonyms: %s has type %d and synonyms %q", name, c.ConfigType, syn(c))
		}
	}
	// v0 has no source, only is_default.
	for _, w := range want {
		c := describe(0, false, kmsg.ConfigResourceTypeTopic, "configs")[w.name]
		if c.IsDefault != (w.source == defaultSrc) {
			t.Errorf("v0 %s: is_default %v, want %v", w.name, c.IsDefault, w.source == defaultSrc)
		}
	}
	broker := describe(4, true, kmsg.ConfigResourceTypeBroker, "")
	for name, typ := range map[string]kmsg.ConfigType{"auto.create.topics.enable": kmsg.ConfigTypeBoolean, "broker.id": kmsg.ConfigTypeInt, "socket.request.max.bytes": kmsg.ConfigTypeInt} {
		c, ok := broker[name]
		if !ok || c.ConfigType != typ || c.Source != kmsg.ConfigSourceStaticBrokerConfig || syn(c) != fmt.Sprintf("%s=%s@%d", name, *c.Value, kmsg.ConfigSourceStaticBrokerConfig) {
			t.Errorf("broker %s: %+v (synonyms %q), want type %d from the static broker config", name, c, syn(c), typ)
		}
	}
}
