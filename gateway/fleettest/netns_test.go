package fleettest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iggy-kafka/iggy-kafka/internal/testiggy"
)

// The partition harness: every process of a fleet in a network namespace of its own, each joined
// to one router namespace by a veth pair, so a test can cut, restore and degrade any link in
// either direction while the processes run on. Endpoint i has 10.77.i.2/24 on its eth0 and a
// default route to the router's 10.77.i.1; the router forwards between them. A cut is a
// blackhole policy rule in the router (iif the sender's link, to the receiver's subnet): packets
// vanish without an answer, as on a pulled cable, and established connections stall rather than
// break. Nothing is done in the host's namespace: the test process reaches the namespaces by
// opening its sockets inside them (dialIn).
//
// Every namespace is named netnsPrefix, the test binary's pid, a sequence number and the role,
// so two test binaries on one machine never meet, and the sweep at start removes what a test
// binary that died left behind (namespaces whose pid is gone) and nothing else.

// requireNetnsEnv makes a missing privilege a failure instead of a skip; scripts/test.sh sets it.
const requireNetnsEnv = "IGGY_TEST_REQUIRE_NETNS"

// netnsPrefix starts the name of every namespace the harness creates.
const netnsPrefix = "ikf-"

// netSubnet is the first two octets of every address the harness gives out.
const netSubnet = "10.77"

var netSeq atomic.Int32

// netLab is one test's namespaces and links.
type netLab struct {
	t      testing.TB
	prefix string // ikf-<pid>-<seq>-
	router string
	nodes  map[string]*netNode

	mu    sync.Mutex
	rules map[[2]string]bool // from, to: the blocked directions
}

// netNode is one endpoint namespace.
type netNode struct {
	role string
	ns   string
	idx  int
	link string // its veth's name in the router
}

// ip is the endpoint's address.
func (n *netNode) ip() string { return fmt.Sprintf("%s.%d.2", netSubnet, n.idx) }

func (n *netNode) subnet() string { return fmt.Sprintf("%s.%d.0/24", netSubnet, n.idx) }

// requireNetns checks that this process may make namespaces and links, and skips the test when
// it may not, or fails it when requireNetnsEnv is 1, saying what is missing.
func requireNetns(t testing.TB) {
	t.Helper()
	why := netnsMissing()
	if why == "" {
		return
	}
	msg := "the partition harness needs network namespaces: " + why +
		" (run as root, or with CAP_NET_ADMIN and CAP_SYS_ADMIN, with iproute2's ip installed)"
	if os.Getenv(requireNetnsEnv) == "1" {
		t.Fatalf("%s; %s=1 makes this a failure", msg, requireNetnsEnv)
	}
	t.Skipf("%s; set %s=1 to fail instead of skipping", msg, requireNetnsEnv)
}

// netnsMissing says what keeps the harness from running, "" when nothing does: it makes a
// namespace with a veth pair in it and removes it.
func netnsMissing() string {
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip command (Debian's iproute2)"
	}
	probe := fmt.Sprintf("%s%d-probe", netnsPrefix, os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Sprintf("ip netns add: %v: %s", err, bytes.TrimSpace(out))
	}
	defer exec.Command("ip", "netns", "delete", probe).Run()
	if out, err := exec.Command("ip", "-n", probe, "link", "add", "name", "pa", "type", "veth", "peer", "name", "pb").CombinedOutput(); err != nil {
		return fmt.Sprintf("ip link add type veth: %v: %s", err, bytes.TrimSpace(out))
	}
	return ""
}

// sweepNetns deletes the namespaces of harness runs whose test binary is gone, after killing
// whatever still runs in them.
func sweepNetns(t testing.TB) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, netnsPrefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		killNetnsProcs(name)
		if out, err := exec.Command("ip", "netns", "delete", name).CombinedOutput(); err != nil {
			t.Logf("removing the leftover namespace %s: %v: %s", name, err, bytes.TrimSpace(out))
		} else {
			t.Logf("removed the leftover namespace %s of test binary %d", name, pid)
		}
	}
}

// killNetnsProcs SIGKILLs every process in the namespace.
func killNetnsProcs(ns string) {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// newNetLab makes the router namespace and one endpoint namespace per role, linked to it.
// Cleanup removes them all, killing what still runs inside first.
func newNetLab(t testing.TB, roles ...string) *netLab {
	t.Helper()
	requireNetns(t)
	sweepNetns(t)
	lab := &netLab{t: t, prefix: fmt.Sprintf("%s%d-%d-", netnsPrefix, os.Getpid(), netSeq.Add(1)),
		nodes: map[string]*netNode{}, rules: map[[2]string]bool{}}
	lab.router = lab.prefix + "r"
	t.Cleanup(lab.remove)
	lab.run("ip", "netns", "add", lab.router)
	lab.inNs(lab.router, "ip", "link", "set", "lo", "up")
	lab.inNs(lab.router, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
	for i, role := range roles {
		n := &netNode{role: role, ns: lab.prefix + role, idx: i + 1, link: fmt.Sprintf("v%d", i+1)}
		lab.nodes[role] = n
		lab.run("ip", "netns", "add", n.ns)
		lab.run("ip", "-n", lab.router, "link", "add", "name", n.link, "type", "veth", "peer", "name", "eth0", "netns", n.ns)
		lab.run("ip", "-n", lab.router, "addr", "add", fmt.Sprintf("%s.%d.1/24", netSubnet, n.idx), "dev", n.link)
		lab.run("ip", "-n", lab.router, "link", "set", n.link, "up")
		lab.run("ip", "-n", n.ns, "addr", "add", n.ip()+"/24", "dev", "eth0")
		lab.run("ip", "-n", n.ns, "link", "set", "eth0", "up")
		lab.run("ip", "-n", n.ns, "link", "set", "lo", "up")
		lab.run("ip", "-n", n.ns, "route", "add", "default", "via", fmt.Sprintf("%s.%d.1", netSubnet, n.idx))
	}
	return lab
}

// remove kills every process left in the lab's namespaces and deletes them.
func (lab *netLab) remove() {
	for _, n := range lab.nodes {
		killNetnsProcs(n.ns)
		exec.Command("ip", "netns", "delete", n.ns).Run()
	}
	killNetnsProcs(lab.router)
	exec.Command("ip", "netns", "delete", lab.router).Run()
}

func (lab *netLab) run(args ...string) {
	lab.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		lab.t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

func (lab *netLab) inNs(ns string, args ...string) {
	lab.t.Helper()
	lab.run(append([]string{"ip", "netns", "exec", ns}, args...)...)
}

func (lab *netLab) node(role string) *netNode {
	lab.t.Helper()
	n, ok := lab.nodes[role]
	if !ok {
		lab.t.Fatalf("the partition harness has no endpoint %q", role)
	}
	return n
}

// rule adds or deletes the blackhole rule for packets from one endpoint to another.
func (lab *netLab) rule(op string, from, to *netNode) {
	lab.t.Helper()
	lab.run("ip", "-n", lab.router, "rule", op, "pref", "100", "iif", from.link, "to", to.subnet(), "blackhole")
}

// cut drops every packet from one endpoint to the other from now on; the other direction
// goes on.
func (lab *netLab) cut(from, to string) {
	lab.t.Helper()
	lab.mu.Lock()
	defer lab.mu.Unlock()
	if lab.rules[[2]string{from, to}] {
		return
	}
	lab.rule("add", lab.node(from), lab.node(to))
	lab.rules[[2]string{from, to}] = true
}

// cutBoth cuts the link between two endpoints in both directions.
func (lab *netLab) cutBoth(a, b string) {
	lab.t.Helper()
	lab.cut(a, b)
	lab.cut(b, a)
}

// heal restores every direction cut so far.
func (lab *netLab) heal() {
	lab.t.Helper()
	lab.mu.Lock()
	defer lab.mu.Unlock()
	for k := range lab.rules {
		lab.rule("del", lab.node(k[0]), lab.node(k[1]))
		delete(lab.rules, k)
	}
}

// command is name args run inside the endpoint's namespace.
func (lab *netLab) command(ctx context.Context, role, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", lab.node(role).ns, name}, args...)...)
}

// dialer dials from inside the endpoint's namespace.
func (lab *netLab) dialer(role string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialIn(lab.node(role).ns)
}

// dialIn dials from inside the named namespace (inNetns), and a socket keeps its namespace for
// life.
func dialIn(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = inNetns(ns, func() error {
			c, err = (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// inNetns runs fn on an OS thread that entered the namespace, and brings the thread back to
// the namespace it came from before anything else may run on it. The thread must not end
// instead: a child process started from it (proc.start's Pdeathsig) would be killed with it.
// A thread that cannot go back stays locked to a goroutine that never returns.
func inNetns(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		defer home.Close()
		target, err := os.Open("/run/netns/" + ns)
		if err != nil {
			runtime.UnlockOSThread()
			done <- err
			return
		}
		err = unix.Setns(int(target.Fd()), unix.CLONE_NEWNET)
		target.Close()
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("entering namespace %s: %w", ns, err)
			return
		}
		done <- fn()
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) != nil {
			select {} // this thread stays in ns for good, and runs nothing else
		}
		runtime.UnlockOSThread()
	}()
	return <-done
}

// The endpoints of a partitioned fleet besides the server's nodes and the gateways (which are
// named as their processes): the load's clients, and the observer that runs the checks (the
// probe, the admin and read-back clients, the operator commands) and is never cut off.
const (
	clientsNs = "clients"
	observer  = "observer"
)

// startNetFleet starts the fleet of startFleet with every process in a namespace of its own
// (the server's nodes, each gateway, the clients, the observer), and returns it with its lab.
func startNetFleet(t *testing.T, extra ...string) *fleet {
	t.Helper()
	target, err := testiggy.FromEnv(iggyKafka)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := testiggy.Plan(withAddrs(target))
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, p := range plan {
		roles = append(roles, p.Name)
	}
	for i := range gateways {
		roles = append(roles, fmt.Sprintf("gateway-%d", i+1))
	}
	lab := newNetLab(t, append(roles, clientsNs, observer)...)
	target = withAddrs(target)
	for i, p := range plan {
		n := lab.node(p.Name)
		target.Addrs[i] = net.JoinHostPort(n.ip(), "8090")
		if len(target.ReplicaAddrs) > 0 {
			target.ReplicaAddrs[i] = net.JoinHostPort(n.ip(), "8091")
		}
	}
	var gwAddrs []string
	for i := range gateways {
		gwAddrs = append(gwAddrs, net.JoinHostPort(lab.node(fmt.Sprintf("gateway-%d", i+1)).ip(), "9092"))
	}
	return launchFleet(t, target, gwAddrs, lab, extra)
}

// withAddrs gives target placeholder addresses of the right count, so that Plan names its nodes.
func withAddrs(target testiggy.Target) testiggy.Target {
	target.Addrs = make([]string, target.Nodes)
	for i := range target.Addrs {
		target.Addrs[i] = "0.0.0.0:0"
	}
	if target.PortsPerNode() > 1 {
		target.ReplicaAddrs = append([]string(nil), target.Addrs...)
	}
	return target
}

// clientDialer is how a client of the given name dials: producers and group members from the
// clients' namespace, everything else from the observer's.
func (f *fleet) clientDialer(name string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if strings.HasPrefix(name, "producer-") || strings.HasPrefix(name, "member-") {
		return f.lab.dialer(clientsNs)
	}
	return f.lab.dialer(observer)
}

// command is the built iggy-kafka run with args where it reaches the fleet: in the observer's
// namespace on a partitioned fleet.
func (f *fleet) command(ctx context.Context, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if f.lab != nil {
		cmd = f.lab.command(ctx, observer, iggyKafka, args...)
	} else {
		cmd = exec.CommandContext(ctx, iggyKafka, args...)
	}
	cmd.Env = environ(f.home)
	return cmd
}
