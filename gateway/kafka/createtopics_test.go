package kafka

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// From v5 a created topic's answer lists its configs, never null: Kafka's Java admin client
// reads the list of every topic created without an error (TopicCommand --create failed with a
// NullPointerException on a null one). A validate-only answer lists none, an error null.
func TestCreateTopicsListsConfigs(t *testing.T) {
	ts := startServer(t, nil)
	conn := dialRaw(t, ts.addr)

	create := func(validateOnly bool, names ...string) *kmsg.CreateTopicsResponse {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 7
		req.ValidateOnly = validateOnly
		for _, name := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 2, 1
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("60000")
			rt.Configs = append(rt.Configs, c)
			req.Topics = append(req.Topics, rt)
		}
		return conn.roundTrip(t, req).(*kmsg.CreateTopicsResponse)
	}

	got := create(false, "configs-listed").Topics[0]
	if got.ErrorCode != 0 || got.ConfigErrorCode != 0 || got.Configs == nil {
		t.Fatalf("create: code %d, config code %d, configs %v; want 0, 0 and a list", got.ErrorCode, got.ConfigErrorCode, got.Configs)
	}
	want := map[string]struct {
		value  string
		source kmsg.ConfigSource
	}{
		"retention.ms":   {"60000", kmsg.ConfigSourceDynamicTopicConfig},
		"cleanup.policy": {"delete", kmsg.ConfigSourceDefaultConfig},
	}
	if len(got.Configs) != len(want) {
		t.Fatalf("create listed %d configs, want %d: %+v", len(got.Configs), len(want), got.Configs)
	}
	for _, c := range got.Configs {
		w, ok := want[c.Name]
		if !ok || c.Value == nil || *c.Value != w.value || kmsg.ConfigSource(c.Source) != w.source {
			t.Fatalf("create listed %s = %v (source %d), want %+v", c.Name, c.Value, c.Source, w)
		}
	}

	if got := create(true, "configs-validated").Topics[0]; got.ErrorCode != 0 || got.Configs == nil || len(got.Configs) != 0 {
		t.Fatalf("validate-only create: code %d, configs %v; want 0 and an empty list", got.ErrorCode, got.Configs)
	}
	if got := create(false, "configs-listed").Topics[0]; got.ErrorCode == 0 || got.Configs != nil {
		t.Fatalf("create of an existing topic: code %d, configs %v; want an error and null", got.ErrorCode, got.Configs)
	}
}
