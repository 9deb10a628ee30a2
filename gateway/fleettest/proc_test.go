package fleettest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/checkfor"
	"github.com/iggy-kafka/iggy-kafka/internal/testbin"
)

// tailLines is how many lines of each process's log a failure shows.
const tailLines = 40

// proc is one child process: its flags stay the same across restarts, and its output goes to a
// log file that outlives each run (restarts append to it).
type proc struct {
	name    string
	bin     string   // the executable; iggyKafka when empty
	env     []string // added to the environment of every run
	args    []string
	logPath string
	addr    string // the TCP address it listens on, to know it is up
	// netns is the network namespace it runs in (through ip netns exec), "" for the test's
	// own; dial reaches its address then.
	netns string
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{} // closed when the current run has exited
	exitErr error
	stopped bool // SIGSTOPped and not yet continued
}

// environ is the environment of every child: no IGGY_KAFKA_* setting of the caller's, and no
// config file of the caller's.
func environ(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IGGY_KAFKA_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_CONFIG_HOME="+home)
}

func (p *proc) start(t testing.TB, home string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !p.exitedLocked() {
		t.Fatalf("%s: started while still running", p.name)
	}
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("%s: log file: %v", p.name, err)
	}
	fmt.Fprintf(f, "=== fleettest: %s %s start %s\n", p.name, strings.Join(p.args, " "), time.Now().Format(time.StampMilli))
	bin := p.bin
	if bin == "" {
		bin = iggyKafka
	}
	cmd := exec.Command(bin, p.args...)
	if p.netns != "" {
		// ip execs the command in place: the child is the process itself, signals included.
		cmd = exec.Command("ip", append([]string{"netns", "exec", p.netns, bin}, p.args...)...)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(environ(home), p.env...)
	// A test binary that dies must not leave its fleet running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("%s: start: %v", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.exitErr, p.stopped = cmd, done, nil, false
	go func() {
		err := cmd.Wait()
		f.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
}

func (p *proc) exitedLocked() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	p.mu.Lock()
	cmd := p.cmd
	if sig == syscall.SIGSTOP {
		p.stopped = true
	}
	if sig == syscall.SIGCONT {
		p.stopped = false
	}
	p.mu.Unlock()
	if cmd == nil {
		t.Fatalf("%s: %v to a process never started", p.name, sig)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v: %v", p.name, sig, err)
	}
}

// waitExit waits for the current run to exit and returns how long that took.
func (p *proc) waitExit(t testing.TB, within time.Duration) time.Duration {
	t.Helper()
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	start := time.Now()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(within):
		t.Fatalf("%s did not exit within %v", p.name, within)
		return 0
	}
}

// term sends SIGTERM and waits for the exit.
func (p *proc) term(t testing.TB, within time.Duration) time.Duration {
	t.Helper()
	p.signal(t, syscall.SIGTERM)
	return p.waitExit(t, within)
}

// kill sends SIGKILL and waits for the exit.
func (p *proc) kill(t testing.TB) {
	t.Helper()
	p.signal(t, syscall.SIGKILL)
	p.waitExit(t, 10*time.Second)
}

// waitListening waits until the process accepts TCP connections, failing early when it exits.
func (p *proc) waitListening(t testing.TB, within time.Duration) {
	t.Helper()
	checkfor.Eventually(t, within, p.name+" listening on "+p.addr, func() error {
		p.mu.Lock()
		exited, err := p.exitedLocked(), p.exitErr
		p.mu.Unlock()
		if exited {
			t.Fatalf("%s exited before listening: %v", p.name, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		dial := (&net.Dialer{}).DialContext
		if p.dial != nil {
			dial = p.dial
		}
		c, err := dial(ctx, "tcp", p.addr)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

// tail is the last n lines of the process's log, across restarts.
func (p *proc) tail(n int) string { return testbin.TailFile(p.logPath, n) }

// shutdown ends whatever is still running at the end of a test: continue a frozen process so it
// can die, then SIGKILL.
func (p *proc) shutdown() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(syscall.SIGCONT)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}
