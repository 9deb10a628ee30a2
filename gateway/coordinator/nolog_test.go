package coordinator

import (
	"fmt"
	"testing"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
)

// A hostile client without the log sends a request for each of 1,524 invented group names: the
// gateway remembers at most 1,024 loads, each name costs one load, a forgotten name loads again
// at its next request, and a group the manager holds is never loaded again (its offsets stay
// what the manager holds). A deleted group's Iggy offsets are deleted, so a load after its
// name was forgotten does not bring them back.
func TestNoLogLoadsBounded(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	ctx := ctxT(t)
	st, err := cl.CreateStream(ctx, "kafka")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTopic(ctx, wire.NumericID(st.ID), "orders", 2, iggy.TopicOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := cl.SendMessages(ctx, wire.NamedID("kafka"), wire.NamedID("orders"), 1, []iggy.Message{{Payload: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{"kept", "gone"} {
		if err := cl.StoreOffset(ctx, offsetConsumer(g), wire.NamedID("kafka"), wire.NamedID("orders"), 1, 41); err != nil {
			t.Fatal(err)
		}
	}
	c := start(t, s, 1, func(cfg *Config) { cfg.Log = false })
	d := directory{c}
	request := func(name string) {
		t.Helper()
		if _, code := d.Manager(name); code != 0 {
			t.Fatalf("group %s: code %d", name, code)
		}
	}
	_, loaded0, forgotten0 := c.cfg.Metrics.GroupOffsetLoads()
	request("kept")
	request("gone")
	if !c.nolog.Holds("kept") || !c.nolog.Holds("gone") {
		t.Fatal("the Iggy offsets of kept and gone were not loaded")
	}
	const hostile = maxNologLoads + 500
	for i := range hostile {
		request(fmt.Sprintf("hostile-%d", i))
	}
	if n := c.nologLoads.len(); n > maxNologLoads {
		t.Fatalf("%d group names remembered after %d, want at most %d", n, hostile+2, maxNologLoads)
	}
	remembered, loaded, forgotten := c.cfg.Metrics.GroupOffsetLoads()
	if loaded-loaded0 != hostile+2 || forgotten-forgotten0 < 500 || remembered > maxNologLoads {
		t.Fatalf("%d loads for %d names, %d forgotten, %d remembered", loaded-loaded0, hostile+2, forgotten-forgotten0, remembered)
	}

	// kept was forgotten, but the manager holds it: no load.
	request("kept")
	if _, l, _ := c.cfg.Metrics.GroupOffsetLoads(); l != loaded {
		t.Fatalf("a group the manager holds was loaded again (%d loads)", l-loaded)
	}
	// hostile-0 was forgotten and the manager holds nothing of it: it loads again.
	request("hostile-0")
	if _, l, _ := c.cfg.Metrics.GroupOffsetLoads(); l != loaded+1 {
		t.Fatalf("a forgotten group's next request made %d loads, want 1", l-loaded)
	}

	// Deleting gone deletes its Iggy offsets; its next load finds nothing.
	if code := c.nolog.Delete(ctx, "gone"); code != 0 {
		t.Fatalf("deleting gone: code %d", code)
	}
	if _, ok, err := IggyOffsets(cl, "kafka")(ctx, kafka.Identity{}, "gone", "orders", 1); err != nil || ok {
		t.Fatalf("gone's Iggy offset after DeleteGroups: found %v, err %v", ok, err)
	}
	for i := range maxNologLoads {
		request(fmt.Sprintf("more-%d", i))
	}
	request("gone")
	if c.nolog.Holds("gone") {
		t.Fatal("a deleted group's offsets came back when its name was loaded again")
	}
}
