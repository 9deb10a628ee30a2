package gateway

import (
	"errors"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
)

// Dynamic broker configs set at gateway 1, cluster-wide and for node 2, are described by
// gateway 2 with Kafka's sources and precedence; unknown names are INVALID_CONFIG, the
// gateway's own settings INVALID_REQUEST, values of the wrong type INVALID_CONFIG, and a
// refused alteration changes nothing.
func TestDynamicBrokerConfigsAcrossGateways(t *testing.T) {
	ps := freeport.Ports(t, 2)
	fleet := []kafka.Broker{{NodeID: 1, Host: "127.0.0.1", Port: int32(ps[0])}, {NodeID: 2, Host: "127.0.0.1", Port: int32(ps[1])}}
	g1 := startGateway(t, func(c *Config) { c.NodeID, c.Bind, c.Brokers = 1, "127.0.0.1:"+strconv.Itoa(ps[0]), fleet })
	g2 := startGateway(t, func(c *Config) {
		c.NodeID, c.Bind, c.Brokers = 2, "127.0.0.1:"+strconv.Itoa(ps[1]), fleet
		c.IggyAddrs = []string{g1.StoreAddr().String()}
		c.IggyUsername, c.IggyPassword = "iggy", "iggy"
	})
	ctx := testCtx(t)
	at1, at2 := kadm.NewClient(client(t, g1)), kadm.NewClient(client(t, g2))
	set := func(broker int32, name, value string) error {
		t.Helper()
		rs, err := at1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: kmsg.StringPtr(value)}}, broker)
		if err != nil {
			return err
		}
		return rs[0].Err
	}
	// Cluster-wide (kadm: no broker) and node 2's own.
	rs, err := at1.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.hours", Value: kmsg.StringPtr("24")},
		{Op: kadm.SetConfig, Name: "num.io.threads", Value: kmsg.StringPtr("4")}})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("cluster-wide: %v %+v", err, rs)
	}
	for name, want := range map[string]error{
		"no.such.config":      kerr.InvalidConfig,
		"broker.id":           kerr.InvalidRequest,
		"log.retention.hours": kerr.InvalidConfig, // "soon" is not an int
	} {
		v := "3"
		if name == "log.retention.hours" {
			v = "soon"
		}
		if err := set(1, name, v); !errors.Is(err, want) {
			t.Errorf("setting %s at node 1: %v, want %v", name, err, want)
		}
	}
	// Node 2's own value, which gateway 2 describes over the cluster-wide one.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "2"
	op := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	op.Name, op.Value = "num.io.threads", kmsg.StringPtr("16")
	res.Configs = append(res.Configs, op)
	req.Resources = append(req.Resources, res)
	// A gateway alters its own node's configs (or the cluster's), as a Kafka broker does.
	resp, err := req.RequestWith(ctx, client(t, g2))
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("node 2's num.io.threads: %v %+v", err, resp)
	}

	described, err := at2.DescribeBrokerConfigs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]kadm.Config{}
	for _, rc := range described {
		if rc.Err != nil {
			t.Fatal(rc.Err)
		}
		for _, c := range rc.Configs {
			got[c.Key] = c
		}
	}
	for name, want := range map[string]struct {
		value  string
		source kmsg.ConfigSource
	}{
		"num.io.threads":      {"16", kmsg.ConfigSourceDynamicBrokerConfig},
		"log.retention.hours": {"24", kmsg.ConfigSourceDynamicDefaultBrokerConfig},
		"log.segment.bytes":   {"1073741824", kmsg.ConfigSourceDefaultConfig},
		"broker.id":           {"2", kmsg.ConfigSourceStaticBrokerConfig},
	} {
		c, ok := got[name]
		if !ok || c.Value == nil || *c.Value != want.value || c.Source != want.source {
			t.Errorf("%s at gateway 2: %+v, want %s from %s", name, c, want.value, want.source)
		}
	}
	if _, ok := got["no.such.config"]; ok {
		t.Error("a refused config is described")
	}
}
