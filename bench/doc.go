// Package bench holds the end-to-end throughput and latency benchmarks of the
// gateway. A real Kafka client (franz-go's kgo) produces and then consumes
// through two brokers in the same run: the gateway with its embedded Iggy
// store, started in-process (Kafka on loopback, the store through an in-memory
// connection), and franz-go's kfake, an in-memory
// Kafka that copies batches as they are and so marks what a broker that does
// nothing else could reach on this machine. Both run in this process, so the
// CPU figures (cpu-s/GB, from getrusage) include broker and client alike.
//
// Run them with
//
//	go test -run '^$' -bench . -count 5 ./bench
//
// The gateway's store goes to a fresh directory under IGGY_BENCH_DIR, or
// under the system temp directory when it is unset; pointing it at a tmpfs
//
//	IGGY_BENCH_DIR=/dev/shm go test -run '^$' -bench . -count 5 ./bench
//
// takes the disk out of the figures and leaves the software's own cost.
//
// Compare the medians of the gateway and kfake rows: records/s, MB/s,
// cpu-s/GB, and for the paced producer the p99 of per-record ack latency.
package bench
