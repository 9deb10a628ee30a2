// Command bench runs the side-by-side benchmark of package bench and prints
// its markdown tables: the gateway, kfake, Apache Kafka and native Iggy
// clients, each broker and each client in its own process, Kafka's
// producer and consumer perf tools against the gateway and Kafka, for random and compressible
// payloads of 1 KiB and 100 B, then the scale points and the goals of
// issues 11 and 20 met or missed, with the fan-out and tail-consumer cases
// and the transactions case (transactional against plain produce, commit
// latency) between them. It also draws the scale points as an SVG chart.
//
//	go run ./bench/cmd/bench [-quick] [-iggy-checkout DIR] [-out FILE] [-svg FILE] [-scale=false] [-payload=false] [-fanout N] [-kafka=false] [-perftest=false] [-txn-records N] [-txn-batch B]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/iggy-kafka/iggy-kafka/bench"
)

func main() {
	quick := flag.Bool("quick", false, "a smoke run of a few minutes: small cases")
	rounds := flag.Int("rounds", 0, "rounds, alternating the systems (default 5)")
	caseMiB := flag.Int("case-mib", 0, "MiB of values per case (default 256, quick 8)")
	sizes := flag.String("sizes", "", "value sizes in bytes, comma-separated (default 1024,100)")
	kinds := flag.String("kinds", "", "payload kinds, comma-separated (default random,json)")
	partitions := flag.Int("partitions", 0, "partitions per topic (default 3)")
	checkout := flag.String("iggy-checkout", os.Getenv("IGGY_CHECKOUT"), "apache/iggy checkout: also measure the official Iggy Go SDK (default $IGGY_CHECKOUT)")
	ref := flag.String("ref", "", "build the gateway from this git revision instead of the working tree")
	out := flag.String("out", "", "also write the markdown tables to this file")
	scale := flag.Bool("scale", true, "measure the scale points (1 KiB random values; producers × partitions, idle connections)")
	scaleMiB := flag.Int("scale-mib", 0, "MiB of values per scale point (default 128, quick 8)")
	svg := flag.String("svg", "", "write the scale chart to this SVG file (default: beside -out, NAME-scale.svg)")
	fanOut := flag.Int("fanout", -1, "consumer groups of the fan-out cases, in turn and at once, plus a tail consumer (default 4; 0: none)")
	fanOutMiB := flag.Int("fanout-mib", 0, "MiB of values per fan-out case (default 256, quick 8)")
	txnRecords := flag.Int("txn-records", -1, "1 KiB random records of the transactions case, produced plainly then in transactions, on the gateway (serve --transactions), kfake and Apache Kafka (default 50000; 0: none)")
	txnBatch := flag.Int("txn-batch", 0, "records per transaction of the transactions case (default 100)")
	payload := flag.Bool("payload", true, "measure the payload cases (and the paced produce)")
	kafka := flag.Bool("kafka", true, "also measure Apache Kafka (one KRaft node in a JVM of its own; needs java 17+ and mvn, jars from Maven Central cached in ~/.m2)")
	perfTest := flag.Bool("perftest", true, "run kafka-producer-perf-test and kafka-consumer-perf-test against the gateway and Apache Kafka (needs -kafka)")
	memory := flag.Bool("memory", true, "measure the memory goals after the rounds (bench/connmem: idle connections, 50 producers)")
	quiet := flag.Bool("q", false, "no progress lines on standard error")
	flag.Parse()

	cfg := bench.Default()
	if *quick {
		cfg = bench.Quick()
	}
	if *rounds > 0 {
		cfg.Rounds = *rounds
	}
	if *caseMiB > 0 {
		cfg.CaseBytes = int64(*caseMiB) << 20
	}
	if *partitions > 0 {
		cfg.Partitions = *partitions
	}
	if *scaleMiB > 0 {
		cfg.ScaleBytes = int64(*scaleMiB) << 20
	}
	if *fanOut >= 0 {
		cfg.FanOut = *fanOut
	}
	if *fanOutMiB > 0 {
		cfg.FanOutBytes = int64(*fanOutMiB) << 20
	}
	if *txnRecords >= 0 {
		cfg.TxnRecords = *txnRecords
	}
	if *txnBatch > 0 {
		cfg.TxnBatch = *txnBatch
	}
	cfg.Kafka, cfg.PerfTest = *kafka, *perfTest && *kafka
	if !*memory {
		cfg.Memory.Runs = 0
	}
	if !*payload {
		cfg.NoPayload, cfg.LatencyRecords = true, 0
	}
	if !*scale {
		if *svg != "" {
			fail(fmt.Errorf("-svg charts the scale points, which -scale=false leaves out"))
		}
		cfg.Scale = nil
	}
	if *svg == "" && *out != "" && len(cfg.Scale) > 0 {
		*svg = strings.TrimSuffix(*out, filepath.Ext(*out)) + "-scale.svg"
	}
	if *sizes != "" {
		cfg.Sizes = nil
		for _, s := range strings.Split(*sizes, ",") {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil || n < 16 {
				fail(fmt.Errorf("-sizes: %q is not a size of 16 bytes or more", s))
			}
			cfg.Sizes = append(cfg.Sizes, n)
		}
	}
	if *kinds != "" {
		cfg.Kinds = strings.Split(*kinds, ",")
	}
	cfg.DataDir = os.Getenv("IGGY_BENCH_DIR")
	cfg.IggyCheckout = *checkout
	cfg.Ref = *ref
	if !*quiet {
		cfg.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := bench.Run(ctx, cfg)
	if err != nil {
		fail(err)
	}
	command := "go run ./bench/cmd/bench " + strings.Join(os.Args[1:], " ")
	if err := res.WriteMarkdown(os.Stdout, strings.TrimSpace(command)); err != nil {
		fail(err)
	}
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fail(err)
		}
		if err := res.WriteMarkdown(f, strings.TrimSpace(command)); err != nil {
			fail(err)
		}
		if err := f.Close(); err != nil {
			fail(err)
		}
	}
	if *svg != "" && len(cfg.Scale) > 0 {
		f, err := os.Create(*svg)
		if err != nil {
			fail(err)
		}
		if err := res.WriteScaleSVG(f); err != nil {
			fail(err)
		}
		if err := f.Close(); err != nil {
			fail(err)
		}
		if !*quiet {
			fmt.Fprintln(os.Stderr, "bench: wrote the scale chart to", *svg)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
