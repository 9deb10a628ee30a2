// Command kfake runs franz-go's in-memory Kafka (kfake) as a process of its
// own, so that the benchmark runner measures it as it measures the gateway:
// one broker, the client in another process. It prints its address on the
// first line of standard output and serves until it is signalled.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "port to listen on (0: any free port)")
	partitions := flag.Int("default-partitions", 3, "partitions of an auto-created topic")
	flag.Parse()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(*port),
		kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(*partitions))
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	fmt.Println(c.ListenAddrs()[0])
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	c.Close()
}
