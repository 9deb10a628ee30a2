package coordinator

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/gateway/iggy/wire"
	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
)

// requestDrain appends what `iggy-kafka drain node N [--undo]` appends.
func requestDrain(t *testing.T, cl *iggy.Client, node int32, undo bool) {
	t.Helper()
	b := fmt.Appendf(nil, `{"node":%d,"undo":%v,"time":%q}`, node, undo, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := cl.SendMessages(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(drainsTopic), 0, []iggy.Message{{Payload: b}}); err != nil {
		t.Fatal(err)
	}
}

// slowHandover makes the HandoverBound wait long enough that a handover within it can only have
// gone through the release path.
func slowHandover(cfg *Config) { cfg.HandoverBound = 5 * time.Second }

// A drained gateway releases every partition to the other without the HandoverBound wait, stays
// live and listed, leads nothing in Metadata, does not join again after a restart while drained,
// and takes partitions again after the undo.
func TestDrainReleasesStaysLiveAndUndo(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, slowHandover)
	b := start(t, s, 2, slowHandover)
	td, err := cl.GetTopic(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(drainsTopic))
	if err != nil || td.PartitionsCount != 1 {
		t.Fatalf("%s: %+v %v", drainsTopic, td, err)
	}
	waitServing(t, "split", func() error {
		return checkfor.True(len(serving(a))+len(serving(b)) == 16 && len(serving(a)) > 0 && len(serving(b)) > 0,
			"a %d b %d", len(serving(a)), len(serving(b)))
	})
	requested := time.Now()
	requestDrain(t, cl, 1, false)
	checkfor.Eventually(t, b.cfg.HandoverBound-time.Second, "b serving all 16 by the release path", func() error {
		return checkfor.True(len(serving(a)) == 0 && len(serving(b)) == 16, "a %d b %d", len(serving(a)), len(serving(b)))
	})
	t.Logf("drain handed a's partitions to b within %v", time.Since(requested))
	waitServing(t, "b sees a live, listed and draining", func() error {
		b.mu.Lock()
		ann := b.view[1]
		b.mu.Unlock()
		live := b.Fleet().LiveBrokers()
		return checkfor.True(ann.Draining && !ann.Leaving && len(ann.Claims) == 0 && len(live) == 2 && b.fleet.Draining(1) && !b.fleet.Draining(2),
			"announcement %+v live %v", ann, live)
	})
	if a.sess.Load() != nil || !a.fleet.Draining(1) {
		t.Fatal("the drained gateway kept its lease session")
	}

	// A restart while drained reads the drain before joining: no session, no partition.
	_ = a.Close()
	a = start(t, s, 1, slowHandover)
	if a.sess.Load() != nil || !a.dr.self.Load() {
		t.Fatal("a drained gateway joined kafka-gateways at start")
	}
	if n := len(serving(b)); n != 16 {
		t.Fatalf("b serves %d after the drained gateway restarted", n)
	}

	requestDrain(t, cl, 1, true)
	waitServing(t, "a takes partitions again after the undo", func() error {
		return checkfor.True(len(serving(a)) > 0 && len(serving(a))+len(serving(b)) == 16 && !b.fleet.Draining(1),
			"a %d b %d", len(serving(a)), len(serving(b)))
	})
	waitServing(t, "b sees a no longer draining", func() error {
		b.mu.Lock()
		ann := b.view[1]
		b.mu.Unlock()
		return checkfor.True(!ann.Draining && len(ann.Claims) > 0, "%+v", ann)
	})
}

// The operator forced a drain of the last gateway: it still leaves, and nobody coordinates.
func TestDrainLastGatewayLeaves(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, nil)
	waitServing(t, "a serves all", func() error { return checkfor.True(len(serving(a)) == 16, "%d", len(serving(a))) })
	requestDrain(t, cl, 1, false)
	waitServing(t, "a serves none", func() error {
		return checkfor.True(len(serving(a)) == 0 && a.sess.Load() == nil, "%d", len(serving(a)))
	})
	if _, _, _, code := (directory{a}).Coordinator("g", 0); code != 15 {
		t.Fatalf("FindCoordinator with every gateway drained: %d, want 15", code)
	}
}

// Only the latest request per node in log order counts; a corrupt one is skipped.
func TestDrainRequestsLatestWins(t *testing.T) {
	s := newStore(t)
	cl := s.client(t)
	a := start(t, s, 1, nil)
	send := func(p string) {
		t.Helper()
		if _, err := cl.SendMessages(ctxT(t), wire.NamedID("kafka.meta"), wire.NamedID(drainsTopic), 0, []iggy.Message{{Payload: []byte(p)}}); err != nil {
			t.Fatal(err)
		}
	}
	// The undo of node 3 carries an older time than its drain: log order still wins.
	send(`{"node":3,"undo":false,"time":"2030-01-01T00:00:00Z"}`)
	send(`{"node":3,"undo":true,"time":"2020-01-01T00:00:00Z"}`)
	send(`{"node":4}`)
	send(`{"undo":false}`)
	send(`not json`)
	send(`{"node":5,"undo":false}`)
	waitServing(t, "the drained set", func() error {
		got := []bool{a.fleet.Draining(0), a.fleet.Draining(1), a.fleet.Draining(3), a.fleet.Draining(4), a.fleet.Draining(5)}
		return checkfor.True(fmt.Sprint(got) == "[false false false true true]", "nodes 0 1 3 4 5 draining: %v", got)
	})
}

func TestDecodeDrainRequest(t *testing.T) {
	for in, want := range map[string]string{
		`{"node":2,"undo":false,"time":"2025-01-02T03:04:05Z"}`: "2 false <nil>",
		`{"node":2,"undo":true,"extra":[1]}`:                    "2 true <nil>",
		`{"node":0}`:                                            "0 false <nil>",
		`{"undo":true}`:                                         "bad",
		`{"node":"2"}`:                                          "bad",
		`{"node":2.5}`:                                          "bad",
		`{"node":4294967296}`:                                   "bad",
		`{"node":2,"time":"yesterday"}`:                         "bad",
		`{"node":2} {"node":3}`:                                 "bad",
		`null`:                                                  "bad",
		`[]`:                                                    "bad",
		``:                                                      "bad",
	} {
		node, undo, err := decodeDrainRequest([]byte(in))
		got := fmt.Sprint(node, undo, err)
		if err != nil {
			got = "bad"
		}
		if got != want {
			t.Errorf("%q decoded as %s, want %s", in, got, want)
		}
	}
}

func FuzzDrainRequest(f *testing.F) {
	f.Add([]byte(`{"node":2,"undo":false,"time":"2025-01-02T03:04:05Z"}`))
	f.Add([]byte(`{"node":-1,"undo":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		node, undo, err := decodeDrainRequest(b)
		if err != nil {
			return
		}
		again, undo2, err := decodeDrainRequest(fmt.Appendf(nil, `{"node":%d,"undo":%v}`, node, undo))
		if err != nil || again != node || undo2 != undo {
			t.Fatalf("%q: %d %v, re-encoded %d %v %v", b, node, undo, again, undo2, err)
		}
	})
}

// A draining announcement is version 3, with or without releases; the others keep their
// versions, so readers of versions 1 and 2 skip exactly the drained gateways.
func TestAnnouncementDraining(t *testing.T) {
	base := Announcement{Node: 3, Addr: "h:9092", Time: time.Unix(1, 2).UTC(), Claims: map[int]uint64{}}
	d := base
	d.Draining = true
	b := encodeAnnouncement(d)
	want := append(encodeAnnouncement(base), 0, 1)
	want[0] = 3
	if string(b) != string(want) {
		t.Fatalf("version 3 bytes %v, want %v", b, want)
	}
	for _, a := range []Announcement{d, func() Announcement { r := d; r.Released = map[int]uint64{4: 7}; return r }()} {
		got, err := decodeAnnouncement(encodeAnnouncement(a))
		if err != nil || !reflect.DeepEqual(got, a) {
			t.Fatalf("decoded %+v %v, want %+v", got, err, a)
		}
	}
	for _, bad := range [][]byte{b[:len(b)-1], append(b[:len(b)-1:len(b)-1], 0), append(b[:len(b):len(b)], 1)} {
		if _, err := decodeAnnouncement(bad); err == nil {
			t.Fatalf("%v decoded", bad)
		}
	}
	if v := encodeAnnouncement(base)[0]; v != 1 {
		t.Fatalf("a plain announcement is version %d", v)
	}
}
