package kafka

import (
	"fmt"
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ownConfigs is what the storage holds as the topic's own configs.
func ownConfigs(t *testing.T, ts *testServer, topic string) map[string]string {
	t.Helper()
	entries, err := ts.storage.TopicConfigs(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if !e.Default {
			out[e.Name] = e.Value
		}
	}
	return out
}

type incOp struct {
	name  string
	op    kmsg.IncrementalAlterConfigOp
	value *string
}

func incResource(typ kmsg.ConfigResourceType, name string, ops ...incOp) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = typ, name
	for _, o := range ops {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = o.name, o.op, o.value
		r.Configs = append(r.Configs, c)
	}
	return r
}

// IncrementalAlterConfigs at every version: SET, DELETE, APPEND and SUBTRACT on the topic's own
// configs as Kafka applies them, and each refusal with Kafka's code, changing nothing.
func TestIncrementalAlterConfigs(t *testing.T) {
	const (
		set      = kmsg.IncrementalAlterConfigOpSet
		del      = kmsg.IncrementalAlterConfigOpDelete
		appendOp = kmsg.IncrementalAlterConfigOpAppend
		subtract = kmsg.IncrementalAlterConfigOpSubtract
		topic    = kmsg.ConfigResourceTypeTopic
		broker   = kmsg.ConfigResourceTypeBroker
	)
	v := kmsg.StringPtr
	for version := int16(0); version <= 1; version++ {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			ts := startServer(t, nil)
			cl := ts.client(t)
			createTopic(t, cl, "t", 1)
			send := func(validateOnly bool, rs ...kmsg.IncrementalAlterConfigsRequestResource) []int16 {
				t.Helper()
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.Version, req.ValidateOnly, req.Resources = version, validateOnly, rs
				resp := seedRequest[*kmsg.IncrementalAlterConfigsResponse](t, cl, req)
				if len(resp.Resources) != len(rs) {
					t.Fatalf("%d resources answered, %d asked", len(resp.Resources), len(rs))
				}
				var codes []int16
				for i, r := range resp.Resources {
					if r.ResourceType != rs[i].ResourceType || r.ResourceName != rs[i].ResourceName {
						t.Fatalf("answer %d names %d/%q, asked %d/%q", i, r.ResourceType, r.ResourceName, rs[i].ResourceType, rs[i].ResourceName)
					}
					if (r.ErrorCode == 0) != (r.ErrorMessage == nil) {
						t.Errorf("answer %d: code %d with message %v", i, r.ErrorCode, r.ErrorMessage)
					}
					codes = append(codes, r.ErrorCode)
				}
				return codes
			}
			steps := []struct {
				ops  []incOp
				want map[string]string
			}{
				{[]incOp{{"retention.ms", set, v("5")}, {"cleanup.policy", appendOp, v("compact")}}, map[string]string{"retention.ms": "5", "cleanup.policy": "delete,compact"}},
				{[]incOp{{"cleanup.policy", appendOp, v("compact,delete")}}, map[string]string{"retention.ms": "5", "cleanup.policy": "delete,compact"}},
				{[]incOp{{"cleanup.policy", subtract, v("delete")}, {"max.message.bytes", set, v("100")}}, map[string]string{"retention.ms": "5", "cleanup.policy": "compact", "max.message.bytes": "100"}},
				{[]incOp{{"retention.ms", del, nil}, {"retention.bytes", del, nil}}, map[string]string{"cleanup.policy": "compact", "max.message.bytes": "100"}},
			}
			for i, s := range steps {
				if codes := send(false, incResource(topic, "t", s.ops...)); codes[0] != 0 {
					t.Fatalf("step %d: %v", i, codes)
				}
				if got := ownConfigs(t, ts, "t"); !maps.Equal(got, s.want) {
					t.Fatalf("step %d: own configs %v, want %v", i, got, s.want)
				}
			}
			last := steps[len(steps)-1].want
			refusals := []struct {
				what string
				rs   []kmsg.IncrementalAlterConfigsRequestResource
				want []int16
			}{
				{"APPEND to a config that is not a list", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"retention.ms", appendOp, v("1")})}, []int16{kerr.InvalidConfig.Code}},
				{"SUBTRACT from an unknown config", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"no.such", subtract, v("1")})}, []int16{kerr.InvalidConfig.Code}},
				{"an unknown config", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"no.such", set, v("1")})}, []int16{kerr.InvalidConfig.Code}},
				{"an unknown operation", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"retention.ms", 7, v("1")})}, []int16{kerr.InvalidRequest.Code}},
				{"a null SET", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"retention.ms", set, nil})}, []int16{kerr.InvalidRequest.Code}},
				{"a config named twice", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"retention.ms", set, v("1")}, incOp{"retention.ms", del, nil})}, []int16{kerr.InvalidRequest.Code}},
				{"a resource named twice", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "t", incOp{"retention.ms", set, v("1")}), incResource(topic, "u"), incResource(topic, "t")}, []int16{kerr.InvalidRequest.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidRequest.Code}},
				{"the default topic", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, "", incOp{"retention.ms", set, v("1")})}, []int16{kerr.InvalidRequest.Code}},
				{"the internal topic", []kmsg.IncrementalAlterConfigsRequestResource{incResource(topic, consumerOffsetsTopic, incOp{"retention.ms", set, v("1")})}, []int16{kerr.InvalidTopicException.Code}},
				{"a broker config", []kmsg.IncrementalAlterConfigsRequestResource{incResource(broker, "1", incOp{"broker.id", set, v("3")}), incResource(broker, "", incOp{"auto.create.topics.enable", set, v("false")})}, []int16{kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}},
				{"another broker", []kmsg.IncrementalAlterConfigsRequestResource{incResource(broker, "2", incOp{"broker.id", del, nil})}, []int16{kerr.InvalidRequest.Code}},
				{"broker loggers", []kmsg.IncrementalAlterConfigsRequestResource{incResource(kmsg.ConfigResourceTypeBrokerLogger, "1", incOp{"kafka", set, v("DEBUG")})}, []int16{kerr.InvalidRequest.Code}},
			}
			for _, r := range refusals {
				if got := send(false, r.rs...); fmt.Sprint(got) != fmt.Sprint(r.want) {
					t.Errorf("%s: codes %v, want %v", r.what, got, r.want)
				}
			}
			// Deleting broker configs, or validating a change, changes nothing and succeeds.
			if got := send(false, incResource(broker, "1", incOp{"broker.id", del, nil})); got[0] != 0 {
				t.Errorf("DELETE of a broker config: %v", got)
			}
			if got := send(true, incResource(topic, "t", incOp{"retention.ms", set, v("9")})); got[0] != 0 {
				t.Errorf("validate only: %v", got)
			}
			if got := ownConfigs(t, ts, "t"); !maps.Equal(got, last) {
				t.Errorf("after the refusals and a validation: own configs %v, want %v", got, last)
			}
		})
	}
}

// AlterConfigs at every version replaces the topic's own configs whole; broker configs are
// read-only; refusals change nothing.
func TestAlterConfigs(t *testing.T) {
	v := kmsg.StringPtr
	resource := func(typ kmsg.ConfigResourceType, name string, kv ...*string) kmsg.AlterConfigsRequestResource {
		r := kmsg.NewAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = typ, name
		for i := 0; i < len(kv); i += 2 {
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = *kv[i], kv[i+1]
			r.Configs = append(r.Configs, c)
		}
		return r
	}
	for version := int16(0); version <= 2; version++ {
		t.Run(fmt.Sprint("v", version), func(t *testing.T) {
			ts := startServer(t, nil)
			cl := ts.client(t)
			createTopic(t, cl, "t", 1)
			send := func(validateOnly bool, rs ...kmsg.AlterConfigsRequestResource) []int16 {
				t.Helper()
				req := kmsg.NewPtrAlterConfigsRequest()
				req.Version, req.ValidateOnly, req.Resources = version, validateOnly, rs
				resp := seedRequest[*kmsg.AlterConfigsResponse](t, cl, req)
				var codes []int16
				for _, r := range resp.Resources {
					codes = append(codes, r.ErrorCode)
				}
				return codes
			}
			topic, broker := kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker
			if got := send(false, resource(topic, "t", v("retention.ms"), v("5"), v("max.message.bytes"), v("100"))); got[0] != 0 {
				t.Fatalf("alter: %v", got)
			}
			first := map[string]string{"retention.ms": "5", "max.message.bytes": "100"}
			if got := ownConfigs(t, ts, "t"); !maps.Equal(got, first) {
				t.Fatalf("own configs %v, want %v", got, first)
			}
			for what, c := range map[string]struct {
				rs   []kmsg.AlterConfigsRequestResource
				want []int16
			}{
				"a null value":           {[]kmsg.AlterConfigsRequestResource{resource(topic, "t", v("retention.ms"), nil)}, []int16{kerr.InvalidRequest.Code}},
				"an unknown config":      {[]kmsg.AlterConfigsRequestResource{resource(topic, "t", v("no.such"), v("1"))}, []int16{kerr.InvalidConfig.Code}},
				"a resource named twice": {[]kmsg.AlterConfigsRequestResource{resource(topic, "t"), resource(topic, "t")}, []int16{kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}},
				"a broker config":        {[]kmsg.AlterConfigsRequestResource{resource(broker, "1", v("socket.request.max.bytes"), v("10"))}, []int16{kerr.InvalidRequest.Code}},
				"a missing topic":        {[]kmsg.AlterConfigsRequestResource{resource(topic, "nope")}, []int16{kerr.UnknownTopicOrPartition.Code}},
			} {
				if got := send(false, c.rs...); fmt.Sprint(got) != fmt.Sprint(c.want) {
					t.Errorf("%s: codes %v, want %v", what, got, c.want)
				}
			}
			if got := send(true, resource(topic, "t")); got[0] != 0 {
				t.Errorf("validate only: %v", got)
			}
			if got := ownConfigs(t, ts, "t"); !maps.Equal(got, first) {
				t.Errorf("after the refusals and a validation: own configs %v, want %v", got, first)
			}
			if got := send(false, resource(broker, "1"), resource(topic, "t", v("compression.type"), v("zstd"))); fmt.Sprint(got) != "[0 0]" {
				t.Fatalf("alter: %v", got)
			}
			if got, want := ownConfigs(t, ts, "t"), map[string]string{"compression.type": "zstd"}; !maps.Equal(got, want) {
				t.Errorf("own configs %v after a replacement, want %v", got, want)
			}
		})
	}
}
