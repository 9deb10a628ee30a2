package gateway

import (
	"errors"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
)

// quotaOp is one AlterClientQuotas operation; remove when value is 0 and rm is set.
type quotaOp struct {
	key   string
	value float64
	rm    bool
}

func alterQuota(t *testing.T, cl *kgo.Client, entity map[string]*string, ops ...quotaOp) error {
	t.Helper()
	req := kmsg.NewPtrAlterClientQuotasRequest()
	e := kmsg.NewAlterClientQuotasRequestEntry()
	for typ, name := range entity {
		ee := kmsg.NewAlterClientQuotasRequestEntryEntity()
		ee.Type, ee.Name = typ, name
		e.Entity = append(e.Entity, ee)
	}
	for _, op := range ops {
		o := kmsg.NewAlterClientQuotasRequestEntryOp()
		o.Key, o.Value, o.Remove = op.key, op.value, op.rm
		e.Ops = append(e.Ops, o)
	}
	req.Entries = append(req.Entries, e)
	resp, err := req.RequestWith(testCtx(t), cl)
	if err != nil {
		t.Fatal(err)
	}
	return kerr.ErrorForCode(resp.Entries[0].ErrorCode)
}

// describeQuotas lists every entity's quotas as "type=name,..." -> key -> value.
func describeQuotas(t *testing.T, cl *kgo.Client) map[string]map[string]float64 {
	t.Helper()
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	for _, typ := range []string{"user", "client-id"} {
		c := kmsg.NewDescribeClientQuotasRequestComponent()
		c.EntityType, c.MatchType = typ, kmsg.QuotasMatchTypeAny
		req.Components = append(req.Components, c)
	}
	out := map[string]map[string]float64{}
	// Any user with any client id, then each type alone (Strict).
	for _, comps := range [][]kmsg.DescribeClientQuotasRequestComponent{req.Components, req.Components[:1], req.Components[1:]} {
		r := kmsg.NewPtrDescribeClientQuotasRequest()
		r.Components, r.Strict = comps, true
		resp, err := r.RequestWith(testCtx(t), cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("describe: %v %+v", err, resp)
		}
		for _, e := range resp.Entries {
			k := ""
			for _, c := range e.Entity {
				name := "<default>"
				if c.Name != nil {
					name = *c.Name
				}
				k += c.Type + "=" + name + ","
			}
			out[k] = map[string]float64{}
			for _, v := range e.Values {
				out[k][v.Key] = v.Value
			}
		}
	}
	return out
}

// Client quotas set at gateway 1 are described by gateway 2; bad values (zero, negative, not a
// whole number of bytes, unknown keys, ip entities, a type twice) are refused one by one and
// change nothing.
func TestClientQuotasAcrossGateways(t *testing.T) {
	ps := freeport.Ports(t, 2)
	fleet := []kafka.Broker{{NodeID: 1, Host: "127.0.0.1", Port: int32(ps[0])}, {NodeID: 2, Host: "127.0.0.1", Port: int32(ps[1])}}
	g1 := startGateway(t, func(c *Config) { c.NodeID, c.Bind, c.Brokers = 1, "127.0.0.1:"+strconv.Itoa(ps[0]), fleet })
	g2 := startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers = 2, "127.0.0.1:"+strconv.Itoa(ps[1]), fleet
		c.IggyAddrs = []string{g1.StoreAddr().String()}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	at1, at2 := client(t, g1), client(t, g2)
	alice, app := kmsg.StringPtr("alice"), kmsg.StringPtr("app")
	if err := alterQuota(t, at1, map[string]*string{"user": alice}, quotaOp{key: "producer_byte_rate", value: 1 << 20}, quotaOp{key: "request_percentage", value: 12.5}); err != nil {
		t.Fatal(err)
	}
	if err := alterQuota(t, at1, map[string]*string{"user": nil}, quotaOp{key: "consumer_byte_rate", value: 4096}); err != nil {
		t.Fatal(err)
	}
	if err := alterQuota(t, at1, map[string]*string{"user": alice, "client-id": app}, quotaOp{key: "producer_byte_rate", value: 2048}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		entity map[string]*string
		op     quotaOp
	}{
		"zero":               {map[string]*string{"user": alice}, quotaOp{key: "producer_byte_rate", value: 0}},
		"negative":           {map[string]*string{"user": alice}, quotaOp{key: "consumer_byte_rate", value: -1}},
		"fractional bytes":   {map[string]*string{"user": alice}, quotaOp{key: "producer_byte_rate", value: 1.5}},
		"unknown key":        {map[string]*string{"user": alice}, quotaOp{key: "fetch_byte_rate", value: 10}},
		"ip entity":          {map[string]*string{"ip": kmsg.StringPtr("10.0.0.1")}, quotaOp{key: "producer_byte_rate", value: 10}},
		"empty name":         {map[string]*string{"user": kmsg.StringPtr("")}, quotaOp{key: "producer_byte_rate", value: 10}},
		"no entity":          {map[string]*string{}, quotaOp{key: "producer_byte_rate", value: 10}},
		"removing a nothing": {map[string]*string{"user": alice}, quotaOp{key: "no_such_rate", rm: true}},
	} {
		if err := alterQuota(t, at1, c.entity, c.op); !errors.Is(err, kerr.InvalidRequest) {
			t.Errorf("%s: %v, want INVALID_REQUEST", name, err)
		}
	}
	got := describeQuotas(t, at2)
	want := map[string]map[string]float64{
		"user=alice,":               {"producer_byte_rate": 1 << 20, "request_percentage": 12.5},
		"user=<default>,":           {"consumer_byte_rate": 4096},
		"client-id=app,user=alice,": {"producer_byte_rate": 2048},
	}
	if len(got) != len(want) {
		t.Fatalf("gateway 2 describes %v, want %v", got, want)
	}
	for k, vs := range want {
		for key, v := range vs {
			if got[k][key] != v || len(got[k]) != len(vs) {
				t.Errorf("%s: %v, want %v", k, got[k], vs)
			}
		}
	}
	// Removing the last quota of an entity removes the entity.
	if err := alterQuota(t, at2, map[string]*string{"user": nil}, quotaOp{key: "consumer_byte_rate", rm: true}); err != nil {
		t.Fatal(err)
	}
	if got := describeQuotas(t, at1); len(got) != 2 || got["user=<default>,"] != nil {
		t.Errorf("after removing the default user's quota: %v", got)
	}
}
