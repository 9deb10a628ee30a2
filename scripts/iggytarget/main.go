// Command iggytarget runs the Iggy server of an interop script: the embedded store, or the real
// iggy-server (one node or a cluster) when IGGY_KAFKA_TEST_IGGY_SERVER names one (package
// internal/testiggy decides which and how). It starts every node on free loopback ports with its
// data and log in --dir, waits until each accepts connections, prints one line,
// "iggy ADDR[,ADDR...]", and keeps the servers up until it gets SIGTERM or SIGINT, when it stops
// them (SIGTERM, then SIGKILL after 10 s) and exits. Its servers die with it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
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
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	s, err := testiggy.Start(t)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Kind(), err)
	}
	fmt.Printf("iggy %s\n", s.Addr())
	<-ctx.Done()
	s.Stop(10 * time.Second)
	return nil
}
