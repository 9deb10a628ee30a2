package testiggy

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/gateway/iggy"
)

// Server is a target's processes running: for tests that need the server alone (Run), and for
// the interop scripts (the iggytarget program). The fleet tests run theirs with their own
// process type, beside the gateways.
type Server struct {
	plan  []Process
	dir   string
	cmds  []*exec.Cmd
	dones []chan struct{}
}

// Start plans the target on free loopback ports (in target.Dir, which must exist), starts it
// and waits until every node accepts connections. The processes die with the caller.
func Start(target Target) (*Server, error) {
	per := target.PortsPerNode()
	addrs, err := freeAddrs(target.Nodes * per)
	if err != nil {
		return nil, err
	}
	target.Addrs = addrs[:target.Nodes]
	if per > 1 {
		target.ReplicaAddrs = addrs[target.Nodes:]
	}
	plan, err := Plan(target)
	if err != nil {
		return nil, err
	}
	s := &Server{plan: plan, dir: target.Dir, cmds: make([]*exec.Cmd, len(plan)), dones: make([]chan struct{}, len(plan))}
	if err := s.Start(); err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

// Run is Start in a temporary directory for one test: a failure to start fails the test, the
// server is killed when the test ends, and on failure the test's log gets each node's last lines.
func Run(t testing.TB, target Target) *Server {
	t.Helper()
	target.Dir = t.TempDir()
	s, err := Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.Tails(30))
		}
		s.Kill()
	})
	return s
}

// Tails is the last n lines of each node's log.
func (s *Server) Tails(n int) string {
	var b strings.Builder
	for _, p := range s.plan {
		fmt.Fprintf(&b, "\n----- last %d lines of %s -----\n%s\n", n, p.Name, tail(s.logPath(p), n))
	}
	return b.String()
}

func (s *Server) logPath(p Process) string { return filepath.Join(s.dir, p.Name+".log") }

// Addr is the client addresses, comma-separated, as the gateway's --iggy takes them.
func (s *Server) Addr() string { return strings.Join(s.Addrs(), ",") }

// Addrs is the client address of every node.
func (s *Server) Addrs() []string {
	var a []string
	for _, p := range s.plan {
		a = append(a, p.Addr)
	}
	return a
}

// Start starts every node that is not running, on its data directory and with its log in the
// target's directory, and waits until each accepts connections (60 s at most).
func (s *Server) Start() error {
	for i, p := range s.plan {
		if s.cmds[i] != nil {
			continue
		}
		log, err := os.OpenFile(s.logPath(p), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		c := exec.Command(p.Args[0], p.Args[1:]...)
		c.Env = append(os.Environ(), p.Env...)
		c.Stdout, c.Stderr = log, log
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			log.Close()
			return fmt.Errorf("starting %s: %w", p.Name, err)
		}
		done := make(chan struct{})
		go func() {
			err := c.Wait()
			fmt.Fprintf(log, "=== testiggy: %s exited: %v\n", p.Name, err)
			log.Close()
			close(done)
		}()
		s.cmds[i], s.dones[i] = c, done
	}
	deadline := time.Now().Add(60 * time.Second)
	for i, p := range s.plan {
		for {
			// Ready is a login and a ping that work: the real server accepts connections while
			// it still recovers its data, and resets them.
			err := ping(p.Addr)
			if err == nil {
				break
			}
			select {
			case <-s.dones[i]:
				return fmt.Errorf("%s exited before accepting connections:\n%s", p.Name, tail(s.logPath(p), 30))
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not answer a login and a ping on %s within 60 s (%v); its log is %s", p.Name, p.Addr, err, s.logPath(p))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// Kill SIGKILLs every running node and waits for it to exit.
func (s *Server) Kill() { s.stop(syscall.SIGKILL, 0) }

// Stop sends SIGTERM to every running node and waits for it to exit, SIGKILLing one still
// running after grace.
func (s *Server) Stop(grace time.Duration) { s.stop(syscall.SIGTERM, grace) }

func (s *Server) stop(sig syscall.Signal, grace time.Duration) {
	for _, c := range s.cmds {
		if c != nil {
			_ = c.Process.Signal(sig)
		}
	}
	for i, c := range s.cmds {
		if c == nil {
			continue
		}
		select {
		case <-s.dones[i]:
		case <-time.After(grace):
			_ = c.Process.Kill()
			<-s.dones[i]
		}
		s.cmds[i] = nil
	}
}

// Restart kills every node and starts it again on its data directory.
func (s *Server) Restart() error {
	s.Kill()
	return s.Start()
}

func freeAddrs(n int) ([]string, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	return out, nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ping logs in as the root user on addr alone (no leader following) and pings.
func ping(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := iggy.Dial(ctx, iggy.Config{Addrs: []string{addr}, Username: Username, Password: Password, PoolSize: 1,
		DialTimeout: time.Second, RequestTimeout: time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Ping(ctx)
}
