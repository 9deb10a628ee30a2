package fleettest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
	"github.com/iggy-kafka/iggy-kafka/internal/testiggy"
)

const (
	// gateways is the size of the fleet.
	gateways = 3
	// iggyHeartbeat is the store's heartbeat interval: Iggy ends a consumer-group member's
	// session after 1.2 times it without a word, so a frozen gateway loses its lease after 2.4 s.
	iggyHeartbeat = 2 * time.Second
	// startLimit bounds a process's start until it listens.
	startLimit = 20 * time.Second
	// drainTimeout is the gateways' --drain-timeout; exitLimit bounds a gateway's exit after
	// SIGTERM: leaving, the drain and the sign-out.
	drainTimeout = 5 * time.Second
	exitLimit    = drainTimeout + 10*time.Second
)

// fleet is the Iggy server and the gateways of one test, with their logs in the test's
// directory. The server is the embedded store, or the real iggy-server when the environment
// names one (package testiggy).
type fleet struct {
	t      *testing.T
	home   string
	target testiggy.Target
	iggy   []*proc // the server's nodes: the store, or the real server's one or three
	gws    []*gw
	// lab is the partition harness the processes run in, nil on loopback.
	lab *netLab
}

// gw is one gateway process; its Kafka node id is its index in fleet.gws plus one.
type gw struct {
	*proc
	id int32
}

// startFleet starts the Iggy server (testiggy.FromEnv: the store, fsync always, unless the
// environment names a real server) and three gateways pointed at it and waits until all listen.
// extra flags go to every gateway. On failure the test's log gets the last lines of every
// process's log; every process still running at the end is killed.
func startFleet(t *testing.T, extra ...string) *fleet {
	t.Helper()
	target, err := testiggy.FromEnv(iggyKafka)
	if err != nil {
		t.Fatal(err)
	}
	return startFleetOn(t, target, extra...)
}

// startFleetOn is startFleet on a target of the caller's choice.
func startFleetOn(t *testing.T, target testiggy.Target, extra ...string) *fleet {
	t.Helper()
	per := target.PortsPerNode()
	addrs := freeport.Addrs(t, target.Nodes*per+gateways)
	target.Addrs = addrs[:target.Nodes]
	if per > 1 {
		target.ReplicaAddrs = addrs[target.Nodes : 2*target.Nodes]
	}
	return launchFleet(t, target, addrs[target.Nodes*per:], nil, extra)
}

// launchFleet starts the server's nodes at target's addresses and the gateways at gwAddrs,
// each in the lab's namespace of its name when lab is not nil.
func launchFleet(t *testing.T, target testiggy.Target, gwAddrs []string, lab *netLab, extra []string) *fleet {
	t.Helper()
	dir := t.TempDir()
	target.Dir, target.Fsync, target.Heartbeat, target.LogLevel = dir, true, iggyHeartbeat, "info"
	plan, err := testiggy.Plan(target)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{t: t, home: dir, target: target, lab: lab}
	place := func(p *proc) *proc {
		if lab != nil {
			p.netns, p.dial = lab.node(p.name).ns, lab.dialer(observer)
		}
		return p
	}
	for _, p := range plan {
		f.iggy = append(f.iggy, place(&proc{name: p.Name, bin: p.Args[0], args: p.Args[1:], env: p.Env, addr: p.Addr,
			logPath: filepath.Join(dir, p.Name+".log")}))
	}
	var brokers []string
	for i := range gateways {
		brokers = append(brokers, fmt.Sprintf("%d@%s", i+1, gwAddrs[i]))
	}
	for i := range gateways {
		id := int32(i + 1)
		args := []string{"serve", "--iggy", f.iggyAddr(), "--node-id", fmt.Sprint(id), "--bind", gwAddrs[i],
			"--brokers", strings.Join(brokers, ","), "--heartbeat-interval", iggyHeartbeat.String(),
			"--auto-create-topics=false", "--drain-timeout", drainTimeout.String(), "--log-level", "info"}
		f.gws = append(f.gws, &gw{id: id, proc: place(&proc{
			name:    fmt.Sprintf("gateway-%d", id),
			addr:    gwAddrs[i],
			logPath: filepath.Join(dir, fmt.Sprintf("gateway-%d.log", id)),
			args:    append(args, extra...),
		})})
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(f.tails())
		}
		for _, g := range f.gws {
			g.shutdown()
		}
		for _, n := range f.iggy {
			n.shutdown()
		}
	})
	f.startIggy()
	for _, g := range f.gws {
		g.start(t, f.home)
	}
	for _, g := range f.gws {
		g.waitListening(t, startLimit)
	}
	return f
}

// tails is the last tailLines lines of each process's log.
func (f *fleet) tails() string {
	var b strings.Builder
	for _, p := range append(append([]*proc{}, f.iggy...), f.procs()...) {
		if p == nil || p.logPath == "" {
			continue
		}
		fmt.Fprintf(&b, "\n----- last %d lines of %s (%s) -----\n%s\n", tailLines, p.name, p.logPath, p.tail(tailLines))
	}
	return b.String()
}

func (f *fleet) procs() []*proc {
	var ps []*proc
	for _, g := range f.gws {
		ps = append(ps, g.proc)
	}
	return ps
}

// gw is the gateway of node id.
func (f *fleet) gw(id int32) *gw {
	f.t.Helper()
	for _, g := range f.gws {
		if g.id == id {
			return g
		}
	}
	f.t.Fatalf("no gateway %d", id)
	return nil
}

// seeds is every gateway's address, for clients' bootstrap.
func (f *fleet) seeds() []string {
	var s []string
	for _, g := range f.gws {
		s = append(s, g.addr)
	}
	return s
}

// restart starts a stopped gateway again with its flags and waits until it listens.
func (f *fleet) restart(g *gw) {
	f.t.Helper()
	g.start(f.t, f.home)
	g.waitListening(f.t, startLimit)
}

// iggyAddr is the server's client addresses as --iggy takes them: every node, comma-separated.
func (f *fleet) iggyAddr() string {
	var addrs []string
	for _, n := range f.iggy {
		addrs = append(addrs, n.addr)
	}
	return strings.Join(addrs, ",")
}

// startIggy starts every node of the server on its data directory (again, after killIggy) and
// waits until each listens.
func (f *fleet) startIggy() {
	f.t.Helper()
	for _, n := range f.iggy {
		n.start(f.t, f.home)
	}
	for _, n := range f.iggy {
		n.waitListening(f.t, startLimit)
	}
}

// killIggy SIGKILLs every node of the server: a store outage, or the loss of a whole cluster.
func (f *fleet) killIggy() {
	f.t.Helper()
	for _, n := range f.iggy {
		n.kill(f.t)
	}
}

// stop sends SIGSTOP; cont sends SIGCONT.
func (g *gw) stop(t testing.TB) { g.signal(t, syscall.SIGSTOP) }
func (g *gw) cont(t testing.TB) { g.signal(t, syscall.SIGCONT) }

const sigterm = syscall.SIGTERM

// iggyLeader is the node of the Iggy cluster that its metadata names leader now.
func (f *fleet) iggyLeader() *proc {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{f.iggy[0].addr}, Username: testiggy.Username, Password: testiggy.Password, PoolSize: 1})
	if err != nil {
		f.t.Fatalf("asking the cluster for its leader: %v", err)
	}
	defer c.Close()
	for _, n := range f.iggy {
		if n.addr == c.Leader() {
			return n
		}
	}
	f.t.Fatalf("the cluster names leader %s, not one of its nodes", c.Leader())
	return nil
}
