package dial

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/iggy-kafka/iggy-kafka/gateway/coordinator/fleet"
)

// Gateway is one Kafka address an operator command dials, and the node that announced it (0 for
// an address the operator gave).
type Gateway struct {
	Node int32
	Addr string
}

func (g Gateway) String() string {
	if g.Node == 0 {
		return g.Addr
	}
	return "node " + strconv.Itoa(int(g.Node)) + " at " + g.Addr
}

// Gateways is where the operator commands reach the fleet, as DialGateways decides it.
type Gateways struct {
	List []Gateway
	// Announced says the addresses are those the gateways announce in the log; otherwise they
	// were given, or no live gateway announced one and List is the default.
	Announced bool
}

// DialGateways is the one rule of which Kafka addresses the operator commands dial: the
// addresses the operator gave (--kafka-bootstrap, its environment variable or config key) when
// given; else the addresses the log's announcements name for every node that is not gone
// (serving, draining or drained: all of them answer Kafka requests), in node order; else, when
// no live node announced one (a fleet without the coordinator log, or all stopped), fallback.
func DialGateways(given []string, nodes []fleet.Node, fallback []string) Gateways {
	if len(given) > 0 {
		return Gateways{List: unnamed(given)}
	}
	var out Gateways
	for _, n := range nodes {
		if n.State == fleet.Gone || n.Addr == "" || slices.ContainsFunc(out.List, func(g Gateway) bool { return g.Addr == n.Addr }) {
			continue
		}
		out.List = append(out.List, Gateway{Node: n.ID, Addr: n.Addr})
	}
	if len(out.List) == 0 {
		return Gateways{List: unnamed(fallback)}
	}
	out.Announced = true
	return out
}

func unnamed(addrs []string) []Gateway {
	out := make([]Gateway, len(addrs))
	for i, a := range addrs {
		out[i] = Gateway{Addr: a}
	}
	return out
}

// Addrs are the addresses to seed a Kafka client with.
func (g Gateways) Addrs() []string {
	out := make([]string, len(g.List))
	for i, gw := range g.List {
		out[i] = gw.Addr
	}
	return out
}

// String names the addresses, each with its node when announced.
func (g Gateways) String() string {
	s := make([]string, len(g.List))
	for i, gw := range g.List {
		s[i] = gw.String()
	}
	return strings.Join(s, ", ")
}

// Reach is one gateway's answer to a probe: Err is nil when it answered.
type Reach struct {
	Gateway
	Err error
}

// Unreachable keeps the gateways that did not answer.
func Unreachable(rs []Reach) []Reach {
	var out []Reach
	for _, r := range rs {
		if r.Err != nil {
			out = append(out, r)
		}
	}
	return out
}

// Prober asks each gateway alone whether it answers (ApiVersions to that address only, never to
// the brokers Metadata names), so that an address that does not answer is said per node. It keeps
// one client, whose seeds follow the addresses asked; Close ends it.
type Prober struct {
	mu    sync.Mutex
	cl    *kgo.Client
	seeds []string
}

// NewProber builds a prober on the connection options of the gateways (TLS, SASL, timeouts);
// seed addresses in opts are replaced by those probed.
func NewProber(opts []kgo.Opt) (*Prober, error) {
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.SeedBrokers("127.0.0.1:0"))...)
	if err != nil {
		return nil, err
	}
	return &Prober{cl: cl}, nil
}

// Probe asks every gateway of gws at once and returns their answers in gws's order.
func (p *Prober) Probe(ctx context.Context, gws Gateways) []Reach {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Reach, len(gws.List))
	for i, g := range gws.List {
		out[i].Gateway = g
	}
	if addrs := gws.Addrs(); !slices.Equal(addrs, p.seeds) {
		if err := p.cl.UpdateSeedBrokers(addrs...); err != nil {
			for i := range out {
				out[i].Err = err
			}
			return out
		}
		p.seeds = addrs
	}
	brokers := p.cl.SeedBrokers()
	if len(brokers) != len(out) {
		for i := range out {
			out[i].Err = errors.New("the client lost the address")
		}
		return out
	}
	var wg sync.WaitGroup
	for i, b := range brokers {
		wg.Go(func() {
			_, err := b.Request(ctx, kmsg.NewPtrApiVersionsRequest())
			out[i].Err = err
		})
	}
	wg.Wait()
	return out
}

// Close ends the prober's client.
func (p *Prober) Close() { p.cl.Close() }

// ProbeGateways asks every gateway of gws once, on the connection options opts.
func ProbeGateways(ctx context.Context, gws Gateways, opts []kgo.Opt) ([]Reach, error) {
	p, err := NewProber(opts)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Probe(ctx, gws), nil
}

// GatewaysError is a command that no gateway answered (it matches ErrNoGateway), with what each
// address said when asked alone.
type GatewaysError struct {
	Err      error
	Gateways Gateways
	Reach    []Reach
}

func (e *GatewaysError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	switch {
	case e.Gateways.Announced:
		b.WriteString("\nasked the gateways the log announces:")
	default:
		b.WriteString("\nasked:")
	}
	for _, r := range e.Reach {
		if r.Err != nil {
			fmt.Fprintf(&b, "\n  %s: %v", r.Gateway, r.Err)
		} else {
			fmt.Fprintf(&b, "\n  %s: answers", r.Gateway)
		}
	}
	return b.String()
}

func (e *GatewaysError) Unwrap() error { return e.Err }
