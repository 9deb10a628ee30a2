// Package bench holds the end-to-end throughput and latency benchmarks of the
// gateway. A real Kafka client (franz-go's kgo) produces and then consumes
// through two brokers in the same run: the gateway with its embedded Iggy
// store, started in-process on loopback, and franz-go's kfake, an in-memory
// Kafka that copies batches as they are and so marks what a broker that does
// nothing else could reach on this machine. Both run in this process, so the
// CPU figures (cpu-s/GB, from getrusage) include broker and client alike.
//
// Run them with
//
//	go test -run '^$' -bench . -count 5 ./bench
//
// and compare the medians of the gateway and kfake rows: records/s, MB/s,
// cpu-s/GB, and for the paced producer the p99 of per-record ack latency.
package bench
