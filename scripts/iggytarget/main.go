// Command iggytarget runs the Iggy server of an interop script: the embedded store, or the real
// iggy-server (one node or a cluster) when IGGY_KAFKA_TEST_IGGY_SERVER names one (package
// internal/testiggy decides which and how). It picks free loopback ports, starts every node with
// its log in --dir, waits until each accepts connections, prints one line, "iggy ADDR[,ADDR...]",
// and keeps the servers up until it gets SIGTERM or SIGINT, when it stops them (SIGTERM, then
// SIGKILL after 10 s) and exits. Its servers die with it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/iggy-kafka/iggy-kafka/internal/testiggy"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "iggytarget:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory for the servers' data and logs (required)")
	bin := flag.String("iggy-kafka", "", "the iggy-kafka binary that runs the embedded store (required)")
	nodes := flag.Int("nodes", 0, "1, or 3 for a cluster of the real server (default: "+testiggy.NodesEnv+", else 1)")
	fsync := flag.Bool("fsync", false, "fsync every write before acknowledging it")
	heartbeat := flag.Duration("heartbeat", 0, "the server's heartbeat interval (default: the server's)")
	level := flag.String("log-level", "warn", "the servers' log level")
	flag.Parse()
	if *dir == "" || *bin == "" {
		return errors.New("--dir and --iggy-kafka are required")
	}
	t, err := testiggy.FromEnv(*bin)
	if err != nil {
		return err
	}
	if *nodes != 0 {
		t.Nodes = *nodes
	}
	t.Dir, t.Fsync, t.Heartbeat, t.LogLevel = *dir, *fsync, *heartbeat, *level
	addrs, err := freeAddrs(t.Nodes * t.PortsPerNode())
	if err != nil {
		return err
	}
	t.Addrs = addrs[:t.Nodes]
	if t.PortsPerNode() > 1 {
		t.ReplicaAddrs = addrs[t.Nodes:]
	}
	plan, err := testiggy.Plan(t)
	if err != nil {
		return err
	}
	var cmds []*exec.Cmd
	var dones []chan struct{} // closed when cmds[i] has exited
	stop := func() {
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		for i, c := range cmds {
			select {
			case <-dones[i]:
			case <-time.After(10 * time.Second):
				_ = c.Process.Kill()
				<-dones[i]
			}
		}
	}
	for _, p := range plan {
		log, err := os.Create(filepath.Join(*dir, p.Name+".log"))
		if err != nil {
			stop()
			return err
		}
		c := exec.Command(p.Args[0], p.Args[1:]...)
		c.Env = append(os.Environ(), p.Env...)
		c.Stdout, c.Stderr = log, log
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			stop()
			return fmt.Errorf("starting %s: %w", p.Name, err)
		}
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		cmds, dones = append(cmds, c), append(dones, done)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	deadline := time.Now().Add(60 * time.Second)
	for i, p := range plan {
		for {
			c, err := net.DialTimeout("tcp", p.Addr, 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-dones[i]:
				stop()
				return fmt.Errorf("%s (%s) exited before accepting connections; its log is %s", p.Name, t.Kind(), filepath.Join(*dir, p.Name+".log"))
			default:
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				stop()
				return fmt.Errorf("%s (%s) did not accept connections on %s within 60 s; its log is in %s", p.Name, t.Kind(), p.Addr, *dir)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	fmt.Printf("iggy %s\n", strings.Join(t.Addrs, ","))
	<-ctx.Done()
	stop()
	return nil
}

// freeAddrs is n distinct loopback addresses free right now.
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
