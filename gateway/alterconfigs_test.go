package gateway

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/store"
	"github.com/iggy-kafka/iggy-kafka/internal/teststore"
)

// Topic configs altered through one gateway, with kadm's AlterTopicConfigsState (AlterConfigs)
// and AlterTopicConfigs (IncrementalAlterConfigs), are what DescribeTopicConfigs reads back at
// that gateway, at a second one over the same store, and after both restart on the same data;
// validate-only alterations and unknown config names change nothing, an incremental DELETE
// goes back to the default, and compression.type is the codec of the topic's fetched batches.
func TestAlterTopicConfigsAcrossGatewaysAndRestarts(t *testing.T) {
	data := t.TempDir()
	var running []*Gateway
	start := func(iggy string) *Gateway {
		t.Helper()
		cfg := Config{
			Bind:             "127.0.0.1:0",
			AutoCreateTopics: true,
			Embedded:         store.Config{Listen: "127.0.0.1:0", DataDir: data, PasswordIterations: teststore.PasswordIterations},
		}
		if iggy != "" {
			cfg.IggyAddrs, cfg.IggyUsername, cfg.IggyPassword = []string{iggy}, "iggy", "iggy"
		}
		g, err := Start(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		running = append(running, g)
		return g
	}
	stop := func() {
		t.Helper()
		for i := len(running) - 1; i >= 0; i-- { // the gateway holding the store last
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := running[i].Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			cancel()
		}
		running = nil
	}
	t.Cleanup(stop)
	g1 := start("")
	g2 := start(g1.StoreAddr().String())
	a1, a2 := kadm.NewClient(client(t, g1)), kadm.NewClient(client(t, g2))
	if r, err := a1.CreateTopic(testCtx(t), 1, 1, map[string]*string{"retention.ms": kmsg.StringPtr("60000")}, "cfg"); err != nil || r.Err != nil {
		t.Fatalf("create: %v %v", err, r.Err)
	}

	const (
		dynamic  = kmsg.ConfigSourceDynamicTopicConfig
		defaultS = kmsg.ConfigSourceDefaultConfig
	)
	type entry struct {
		value  string
		source kmsg.ConfigSource
	}
	check := func(what string, adm *kadm.Client, want map[string]entry) {
		t.Helper()
		rcs, err := adm.DescribeTopicConfigs(testCtx(t), "cfg")
		if err != nil {
			t.Fatal(err)
		}
		rc, err := rcs.On("cfg", nil)
		if err != nil || rc.Err != nil {
			t.Fatalf("%s: describe: %v %v", what, err, rc.Err)
		}
		got := map[string]entry{}
		for _, c := range rc.Configs {
			got[c.Key] = entry{c.MaybeValue(), c.Source}
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s is %+v, want %+v", what, name, got[name], w)
			}
		}
	}
	ok := func(what string, rs kadm.AlterConfigsResponses, err error) {
		t.Helper()
		if err != nil || len(rs) != 1 || rs[0].Err != nil {
			t.Fatalf("%s: %v %+v", what, err, rs)
		}
	}
	set := func(name, value string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: kmsg.StringPtr(value)}
	}

	// AlterConfigs replaces the topic's own configs: retention.ms is replaced, the others set.
	rs, err := a2.AlterTopicConfigsState(testCtx(t), []kadm.AlterConfig{
		set("retention.ms", "120000"), set("max.message.bytes", "3000000"), set("compression.type", "lz4"),
	}, "cfg")
	ok("AlterConfigs", rs, err)
	replaced := map[string]entry{
		"retention.ms":      {"120000", dynamic},
		"max.message.bytes": {"3000000", dynamic},
		"compression.type":  {"lz4", dynamic},
		"retention.bytes":   {"-1", defaultS},
	}
	check("after AlterConfigs at the second gateway, at the first", a1, replaced)
	check("after AlterConfigs at the second gateway, at the second", a2, replaced)

	// IncrementalAlterConfigs changes what it names only.
	rs, err = a1.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{
		set("retention.bytes", "2147483648"), set("compression.type", "zstd"), {Op: kadm.DeleteConfig, Name: "max.message.bytes"},
	}, "cfg")
	ok("IncrementalAlterConfigs", rs, err)
	altered := map[string]entry{
		"retention.ms":      {"120000", dynamic},
		"max.message.bytes": {"1048588", defaultS},
		"compression.type":  {"zstd", dynamic},
		"retention.bytes":   {"2147483648", dynamic},
	}
	check("after IncrementalAlterConfigs at the first gateway, at the first", a1, altered)
	check("after IncrementalAlterConfigs at the first gateway, at the second", a2, altered)

	// Validation and refusals change nothing.
	rs, err = a2.ValidateAlterTopicConfigs(testCtx(t), []kadm.AlterConfig{set("retention.ms", "1")}, "cfg")
	ok("IncrementalAlterConfigs, validate only", rs, err)
	rs, err = a2.ValidateAlterTopicConfigsState(testCtx(t), []kadm.AlterConfig{set("retention.ms", "1")}, "cfg")
	ok("AlterConfigs, validate only", rs, err)
	for what, alter := range map[string]func(context.Context, []kadm.AlterConfig, ...string) (kadm.AlterConfigsResponses, error){
		"IncrementalAlterConfigs": a2.AlterTopicConfigs, "AlterConfigs": a2.AlterTopicConfigsState,
	} {
		rs, err := alter(testCtx(t), []kadm.AlterConfig{set("retention.ms", "1"), set("no.such.config", "1")}, "cfg")
		if err != nil || len(rs) != 1 || !errors.Is(rs[0].Err, kerr.InvalidConfig) {
			t.Errorf("%s of an unknown config: %v %+v, want INVALID_CONFIG", what, err, rs)
		}
	}
	// Iggy's max_topic_size is at least the topic's segment size, 1 GiB on the embedded store.
	rs, err = a2.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{set("retention.bytes", "1048576")}, "cfg")
	if err != nil || len(rs) != 1 || !errors.Is(rs[0].Err, kerr.InvalidConfig) {
		t.Errorf("retention.bytes below the segment size: %v %+v, want INVALID_CONFIG", err, rs)
	}
	check("after validations and refusals", a1, altered)

	// compression.type is the codec of the topic's fetched batches, at both gateways.
	prod := client(t, g1, kgo.DefaultProduceTopic("cfg"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err := prod.ProduceSync(testCtx(t), &kgo.Record{Value: bytes.Repeat([]byte("v"), 1000)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*Gateway{"first": g1, "second": g2} {
		if codec := fetchedCodec(t, client(t, g)); codec != 4 {
			t.Errorf("%s gateway: fetched batch has codec %d, want zstd (4) of compression.type", name, codec)
		}
	}

	// An incremental DELETE goes back to the default.
	rs, err = a2.AlterTopicConfigs(testCtx(t), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "retention.ms"}}, "cfg")
	ok("IncrementalAlterConfigs DELETE", rs, err)
	final := map[string]entry{
		"retention.ms":      {"-1", defaultS},
		"max.message.bytes": {"1048588", defaultS},
		"compression.type":  {"zstd", dynamic},
		"retention.bytes":   {"2147483648", dynamic},
	}
	check("after DELETE at the second gateway, at the first", a1, final)

	stop()
	g3 := start("")
	check("after a restart", kadm.NewClient(client(t, g3)), final)
}

// fetchedCodec is the codec of the first batch of cfg/0 that the client's seed answers a Fetch
// from offset 0 with.
func fetchedCodec(t *testing.T, cl *kgo.Client) int16 {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = 12, 10, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "cfg"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 || len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 || fr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch: %+v", fr)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(fr.Topics[0].Partitions[0].RecordBatches); err != nil {
		t.Fatalf("fetched batch: %v", err)
	}
	return rb.Attributes & 7
}
