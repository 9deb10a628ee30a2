package fleettest

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/freeport"
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

// fleet is the store and the gateways of one test, with their logs in the test's directory.
type fleet struct {
	t     *testing.T
	home  string
	store *proc
	gws   []*gw
}

// gw is one gateway process; its Kafka node id is its index in fleet.gws plus one.
type gw struct {
	*proc
	id int32
}

// startFleet starts the store and three gateways pointed at it and waits until all listen.
// extra flags go to every gateway. On failure the test's log gets the last lines of every
// process's log; every process still running at the end is killed.
func startFleet(t *testing.T, extra ...string) *fleet {
	t.Helper()
	dir := t.TempDir()
	addrs := freeport.Addrs(t, 1+gateways)
	f := &fleet{t: t, home: dir}
	f.store = &proc{
		name:    "store",
		addr:    addrs[0],
		logPath: filepath.Join(dir, "store.log"),
		args: []string{"store", "--listen", addrs[0], "--data", filepath.Join(dir, "data"),
			"--fsync", "always", "--heartbeat-interval", iggyHeartbeat.String(), "--log-level", "info"},
	}
	var brokers []string
	for i := range gateways {
		brokers = append(brokers, fmt.Sprintf("%d@%s", i+1, addrs[1+i]))
	}
	for i := range gateways {
		id := int32(i + 1)
		args := []string{"serve", "--iggy", addrs[0], "--node-id", fmt.Sprint(id), "--bind", addrs[1+i],
			"--brokers", strings.Join(brokers, ","), "--heartbeat-interval", iggyHeartbeat.String(),
			"--auto-create-topics=false", "--drain-timeout", drainTimeout.String(), "--log-level", "info"}
		f.gws = append(f.gws, &gw{id: id, proc: &proc{
			name:    fmt.Sprintf("gateway-%d", id),
			addr:    addrs[1+i],
			logPath: filepath.Join(dir, fmt.Sprintf("gateway-%d.log", id)),
			args:    append(args, extra...),
		}})
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(f.tails())
		}
		for _, g := range f.gws {
			g.shutdown()
		}
		f.store.shutdown()
	})
	f.store.start(t, f.home)
	f.store.waitListening(t, startLimit)
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
	for _, p := range append([]*proc{f.store}, f.procs()...) {
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

// restartStore starts the store again on its data directory and waits until it listens.
func (f *fleet) restartStore() {
	f.t.Helper()
	f.store.start(f.t, f.home)
	f.store.waitListening(f.t, startLimit)
}

// stop sends SIGSTOP; cont sends SIGCONT.
func (g *gw) stop(t testing.TB) { g.signal(t, syscall.SIGSTOP) }
func (g *gw) cont(t testing.TB) { g.signal(t, syscall.SIGCONT) }

const sigterm = syscall.SIGTERM
