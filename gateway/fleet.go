package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/gateway/kafka"
	"github.com/iggy-kafka/iggy-kafka/gateway/store"
)

// MaxFleet bounds StartFleet's n: a fleet in one process is for trying the fleet's behaviour
// on one machine, not for capacity.
const MaxFleet = 64

// LocalFleet is n gateways running in this process, with the embedded store they share when they
// have no Iggy address.
type LocalFleet struct {
	log       *slog.Logger
	store     *store.Server
	storeDone chan error
	gateways  []*Gateway
}

// StartFleet starts the embedded store from cfg.Embedded (unless cfg.IggyAddrs names an Iggy)
// and then n gateways sharing every other setting of cfg: node ids 1..n, Kafka listeners on
// consecutive ports from cfg.Bind's port, each advertised at the bind host (localhost when it
// names no host) and each told of all n as its Brokers, so Metadata lists the whole fleet and
// the coordinator log's partitions spread over it. The gateways reach the store through memory,
// as a lone gateway reaches its own; native Iggy clients use the store's TCP listener. With
// MetricsAddr set, gateway i serves metrics on its port plus i-1. Every gateway logs with a
// node attribute. cfg.NodeID, Brokers and AdvertisedAddr are the fleet's to choose, so they
// must be unset. ctx bounds the start only.
func StartFleet(ctx context.Context, cfg Config, n int) (*LocalFleet, error) {
	if n < 1 || n > MaxFleet {
		return nil, fmt.Errorf("gateway: a fleet of %d: must be 1..%d gateways", n, MaxFleet)
	}
	if cfg.NodeID != 0 || len(cfg.Brokers) > 0 || cfg.AdvertisedAddr != "" {
		return nil, errors.New("gateway: a fleet chooses its node ids, brokers and advertised addresses itself")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Bind == "" {
		cfg.Bind = "127.0.0.1:9092"
	}
	host, port, err := fleetPorts("Kafka listener", cfg.Bind, n)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		return nil, fmt.Errorf("gateway: fleet Kafka listener %q: needs a port (gateway i listens on it plus i-1)", cfg.Bind)
	}
	advHost := host
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		advHost = "localhost"
	}
	// A metrics port of 0 gives every gateway a free port of its own.
	var mhost string
	var mport int
	if cfg.MetricsAddr != "" {
		if mhost, mport, err = fleetPorts("metrics listener", cfg.MetricsAddr, n); err != nil {
			return nil, err
		}
	}
	brokers := make([]kafka.Broker, n)
	for i := range brokers {
		brokers[i] = kafka.Broker{NodeID: int32(i + 1), Host: advHost, Port: int32(port + i)}
	}

	f := &LocalFleet{log: cfg.Logger}
	if len(cfg.IggyAddrs) == 0 && cfg.Store == nil {
		if f.store, err = store.New(cfg.Embedded); err != nil {
			return nil, fmt.Errorf("gateway: starting the embedded store: %w", err)
		}
		f.storeDone = make(chan error, 1)
		go func() { f.storeDone <- f.store.Serve(context.Background()) }()
		cfg.Store = f.store
	}
	for i := range n {
		gc := cfg
		gc.NodeID = int32(i + 1)
		gc.Brokers = brokers
		gc.Bind = net.JoinHostPort(host, strconv.Itoa(port+i))
		gc.AdvertisedAddr = net.JoinHostPort(advHost, strconv.Itoa(port+i))
		if mport != 0 {
			gc.MetricsAddr = net.JoinHostPort(mhost, strconv.Itoa(mport+i))
		}
		gc.Logger = slog.New(&nodeHandler{h: cfg.Logger.Handler(), node: gc.NodeID})
		g, err := Start(ctx, gc)
		if err != nil {
			err = fmt.Errorf("gateway: node %d of the fleet: %w", gc.NodeID, err)
			return nil, errors.Join(err, f.Shutdown(context.WithoutCancel(ctx)))
		}
		f.gateways = append(f.gateways, g)
	}
	addrs := make([]string, n)
	for i, b := range brokers {
		addrs[i] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	attrs := []any{"gateways", n, "kafka", strings.Join(addrs, ",")}
	if f.store != nil {
		attrs = append(attrs, "store", f.store.Addr().String())
	} else {
		attrs = append(attrs, "iggy", cfg.IggyAddrs)
	}
	f.log.Info("fleet up", attrs...)
	return f, nil
}

// nodeHandler tags a fleet gateway's log records with its node id, unless a logger derived
// from it names the node already (the coordinator does, for a gateway on its own too): a key
// twice on one line would make JSON logs ambiguous.
type nodeHandler struct {
	h      slog.Handler
	node   int32
	tagged bool
}

func (n *nodeHandler) Enabled(ctx context.Context, l slog.Level) bool { return n.h.Enabled(ctx, l) }

func (n *nodeHandler) Handle(ctx context.Context, r slog.Record) error {
	if !n.tagged {
		r = r.Clone()
		r.AddAttrs(slog.Int("node", int(n.node)))
	}
	return n.h.Handle(ctx, r)
}

func (n *nodeHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	tagged := n.tagged || slices.ContainsFunc(attrs, func(a slog.Attr) bool { return a.Key == "node" })
	return &nodeHandler{h: n.h.WithAttrs(attrs), node: n.node, tagged: tagged}
}

func (n *nodeHandler) WithGroup(name string) slog.Handler {
	if !n.tagged {
		// Attributes after a group belong to it; the node goes on before.
		return &nodeHandler{h: n.h.WithAttrs([]slog.Attr{slog.Int("node", int(n.node))}).WithGroup(name), node: n.node, tagged: true}
	}
	return &nodeHandler{h: n.h.WithGroup(name), node: n.node, tagged: true}
}

// fleetPorts splits addr and checks that its port and the n-1 after it are ports.
func fleetPorts(what, addr string, n int) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("gateway: fleet %s %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(portText)
	switch {
	case err != nil || port < 0:
		return "", 0, fmt.Errorf("gateway: fleet %s %q: port %q is not a number", what, addr, portText)
	case port+n-1 > 65535:
		return "", 0, fmt.Errorf("gateway: fleet %s %q: %d gateways on consecutive ports run past 65535", what, addr, n)
	}
	return host, port, nil
}

// Gateways are the fleet's gateways, node i at index i-1.
func (f *LocalFleet) Gateways() []*Gateway { return f.gateways }

// StoreAddr is the embedded store's address (for native Iggy clients and the operator
// commands), or nil when the fleet uses an external Iggy.
func (f *LocalFleet) StoreAddr() net.Addr {
	if f.store == nil {
		return nil
	}
	return f.store.Addr()
}

// Shutdown stops the gateways one after another in node order, each as Gateway.Shutdown does
// (it leaves the coordinator group, so the gateways still running take its partitions over,
// then drains its Kafka connections), and then the store, which the gateways need until the
// last has left. Every gateway is stopped even when one fails; the errors are joined.
func (f *LocalFleet) Shutdown(ctx context.Context) error {
	var errs []error
	for _, g := range f.gateways {
		if err := g.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("node %d: %w", g.cfg.NodeID, err))
		}
	}
	if f.store != nil {
		if err := f.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("store: %w", err))
		}
		if err := <-f.storeDone; err != nil {
			errs = append(errs, fmt.Errorf("store: %w", err))
		}
	}
	err := errors.Join(errs...)
	f.log.Info("fleet stopped", "err", err)
	return err
}

// RunFleet starts a fleet, serves until ctx ends, then shuts it down.
func RunFleet(ctx context.Context, cfg Config, n int) error {
	f, err := StartFleet(ctx, cfg, n)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return f.Shutdown(context.WithoutCancel(ctx))
}
