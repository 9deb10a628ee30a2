package claims_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/record"
	"github.com/iggy-kafka/iggy-kafka/inspect/claims"
	"github.com/iggy-kafka/iggy-kafka/inspect/logread"
	"github.com/iggy-kafka/iggy-kafka/internal/output"
	"github.com/iggy-kafka/iggy-kafka/internal/output/golden"
)

// The node table in text and JSON, with a node in every state: serving (the controller),
// draining (the request stands, it still holds a partition), drained, gone by silence, gone
// because its lease membership ended, and known only from an old claim.
func TestNodeTableGolden(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 30, 0, time.UTC)
	m := claims.NewModel()
	claim := func(p int, node int32, addr string, n uint64) {
		e := logread.Entry{Partition: p, Offset: n, Record: record.Record{Type: record.TypeClaim, Claim: n, Time: now.Add(-time.Hour), ClaimInfo: &record.Claim{Number: n, Node: node, Addr: addr}}}
		m.Parts[p].Apply(&e)
		g := record.Group{Name: "g" + addr, State: "Stable"}
		e = logread.Entry{Partition: p, Offset: n + 1, Record: record.Record{Type: record.TypeGroup, Claim: n, Time: now.Add(-time.Hour), Group: &g}}
		m.Parts[p].Apply(&e)
	}
	claim(0, 1, "gw1:9092", 3)
	claim(1, 1, "gw1:9092", 2)
	claim(2, 2, "gw2:9092", 4)
	claim(3, 6, "old6:9092", 1)
	m.Members = []uint32{0, 1, 4}
	for _, a := range []fleet.Announcement{
		{Node: 1, Addr: "gw1:9092", Time: now.Add(-800 * time.Millisecond), Claims: map[int]uint64{0: 3, 1: 2}, HasMember: true, Member: 0, Version: "v0.9.0"},
		{Node: 2, Addr: "gw2:9092", Time: now.Add(-300 * time.Millisecond), Claims: map[int]uint64{2: 4}, HasMember: true, Member: 1, Version: "v0.9.0"},
		{Node: 3, Addr: "gw3:9092", Time: now.Add(-time.Second), Draining: true, Claims: map[int]uint64{}, Version: "v0.9.0"},
		{Node: 4, Addr: "gw4:9092", Time: now.Add(-12 * time.Second), Claims: map[int]uint64{}, Version: "v0.8.1"},
		{Node: 5, Addr: "gw5:9092", Time: now.Add(-time.Second), Claims: map[int]uint64{}, HasMember: true, Member: 3},
	} {
		m.View.Announce(a)
	}
	for i, r := range []fleet.DrainRequest{{Node: 2, Time: now.Add(-2 * time.Second)}, {Node: 3, Time: now.Add(-time.Minute)}} {
		if err := m.View.ApplyDrains(uint64(i), fleet.EncodeDrainRequest(r)); err != nil {
			t.Fatal(err)
		}
	}
	m.View.SetMembers(m.Members)
	m.View.KnowClaim(6, "old6:9092")
	rows := m.Nodes(now)
	for _, f := range []output.Format{output.Text, output.JSON} {
		var b bytes.Buffer
		if err := output.List(&b, f, "claims.nodes", rows); err != nil {
			t.Fatal(err)
		}
		golden.Assert(t, "nodes."+string(f), b.Bytes())
	}
}
