// Command benchclient is the client side of one benchmark case, run by the
// runner in its own process so that its CPU is not the broker's: it creates
// a topic, produces the case's records, consumes them back, deletes the
// topic, and prints a workload.Report as one JSON line.
//
// With -system kafka it is a franz-go producer and consumer with the
// library's default settings (snappy, idempotent, acks=all); with -system
// iggy it is the project's own Iggy client sending and polling batches.
// -producers splits the produce phase over that many clients (franz-go) or
// connections (Iggy), and -idle-conns holds that many silent connections
// open on the broker through the phases.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/iggy-kafka/iggy-kafka/bench/workload"
)

func main() {
	var c workload.Case
	fs := flag.NewFlagSet("benchclient", flag.ExitOnError)
	system := fs.String("system", "kafka", "kafka (franz-go) or iggy (the project's Iggy client)")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after this long")
	c.Register(fs)
	_ = fs.Parse(os.Args[1:])
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	pool, err := c.Pool()
	if err != nil {
		fail(err)
	}
	var rep workload.Report
	switch *system {
	case "kafka":
		rep, err = runKafka(ctx, &c, pool)
	case "iggy":
		rep, err = runIggy(ctx, &c, pool)
	default:
		err = fmt.Errorf("unknown -system %q", *system)
	}
	if err != nil {
		fail(err)
	}
	if err := rep.Write(os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchclient:", err)
	os.Exit(1)
}
