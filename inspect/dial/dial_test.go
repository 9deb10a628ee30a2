package dial_test

import (
	"context"
	"errors"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
	"github.com/iggy-kafka/iggy-kafka/inspect/dial"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/render"
	"github.com/iggy-kafka/iggy-kafka/internal/testfleet"
)

func TestDialGateways(t *testing.T) {
	nodes := []fleet.Node{
		{ID: 1, State: fleet.Serving, Addr: "10.0.0.1:9092"},
		{ID: 2, State: fleet.Gone, Addr: "10.0.0.2:9092"},
		{ID: 3, State: fleet.Drained, Addr: "10.0.0.3:9092"},
		{ID: 4, State: fleet.Draining, Addr: "10.0.0.4:9092"},
		{ID: 5, State: fleet.Serving, Addr: ""},
		{ID: 6, State: fleet.Serving, Addr: "10.0.0.1:9092"},
	}
	fallback := []string{"localhost:9092"}
	for _, tc := range []struct {
		name  string
		given []string
		nodes []fleet.Node
		want  dial.Gateways
	}{
		{"given wins over announcements", []string{"a:1", "b:2"}, nodes,
			dial.Gateways{List: []dial.Gateway{{Addr: "a:1"}, {Addr: "b:2"}}}},
		{"announced: every node not gone, once per address, by node", nil, nodes,
			dial.Gateways{Announced: true, List: []dial.Gateway{{Node: 1, Addr: "10.0.0.1:9092"}, {Node: 3, Addr: "10.0.0.3:9092"}, {Node: 4, Addr: "10.0.0.4:9092"}}}},
		{"all gone: the default", nil, []fleet.Node{{ID: 2, State: fleet.Gone, Addr: "10.0.0.2:9092"}},
			dial.Gateways{List: []dial.Gateway{{Addr: "localhost:9092"}}}},
		{"no announcement: the default", nil, nil,
			dial.Gateways{List: []dial.Gateway{{Addr: "localhost:9092"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := dial.DialGateways(tc.given, tc.nodes, fallback)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	g := dial.DialGateways(nil, nodes, fallback)
	if s := g.String(); s != "node 1 at 10.0.0.1:9092, node 3 at 10.0.0.3:9092, node 4 at 10.0.0.4:9092" {
		t.Fatalf("String %q", s)
	}
}

// The prober asks each address alone: a listener that answers and a closed port are told apart,
// in the order asked, even though a client seeded with both would reach the fleet.
func TestProberAsksEachAddressAlone(t *testing.T) {
	_, gws := testfleet.Start(t, 2, nil)
	closed := freeport.Addr(t)
	list := dial.Gateways{Announced: true, List: []dial.Gateway{
		{Node: 1, Addr: gws[0].Addr().String()}, {Node: 7, Addr: closed}, {Node: 2, Addr: gws[1].Addr().String()},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := dial.NewProber([]kgo.Opt{kgo.RequestTimeoutOverhead(2 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for round := range 2 {
		reach := p.Probe(ctx, list)
		if len(reach) != 3 || reach[0].Err != nil || reach[2].Err != nil || reach[1].Err == nil {
			t.Fatalf("round %d: %+v", round, reach)
		}
		var op *net.OpError
		if !errors.As(reach[1].Err, &op) || reach[1].Node != 7 {
			t.Fatalf("round %d: the closed port: %+v", round, reach[1])
		}
		down := dial.Unreachable(reach)
		if len(down) != 1 || render.NoAnswer(down[0]) != "no answer from node 7 at "+closed+": "+reach[1].Err.Error() {
			t.Fatalf("round %d: unreachable %+v", round, down)
		}
		// The second round asks them in another order: the answers follow the addresses.
		list.List[0], list.List[2] = list.List[2], list.List[0]
	}
}
