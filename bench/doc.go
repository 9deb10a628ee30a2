// Package bench is the side-by-side benchmark of the gateway: in one run, a
// Kafka client through the gateway, the same client against kfake, and
// native Iggy clients against the store of the very same gateway process,
// moving the same payloads, each broker and each client in a process of its
// own so that neither is charged for the other's CPU.
//
// Run it with
//
//	bash scripts/bench.sh                 # about 10 minutes on 2 cores
//	bash scripts/bench.sh -quick          # about a minute: development, CI smoke
//	IGGY_BENCH_DIR=/dev/shm bash scripts/bench.sh -iggy-checkout ~/src/iggy -out bench.md
//
// (scripts/bench.sh is go run ./bench/cmd/bench; -h lists the flags). The
// runner builds the programs into a temporary directory: iggy-kafka from
// ./cmd/iggy-kafka (or from the git revision -ref names, to compare commits
// or to run while the working tree is mid-edit), kfake from bench/cmd/kfake,
// the client from bench/cmd/benchclient and, when an apache/iggy checkout
// is given (-iggy-checkout or IGGY_CHECKOUT), bench/sdkclient against the
// checkout's official Go SDK in a throwaway module with a replace
// directive (the SDK is not served by the module proxy; none of it is
// committed here).
//
// Each round starts a fresh `iggy-kafka serve` (embedded store, --fsync
// never, data in a new directory under IGGY_BENCH_DIR or the temp
// directory; a tmpfs such as /dev/shm takes the disk out of the figures) and
// a fresh kfake, then for every case (1 KiB and 100 B values, random and
// compressible) runs one client process per system, in this order:
//
//   - gateway: franz-go producer then consumer on serve's Kafka port, with
//     the library's defaults (snappy, idempotent, acks=all, linger 10 ms);
//   - kfake: the same client against kfake;
//   - native: the project's Iggy client (package gateway/iggy) sending 1 MiB
//     batches and polling them back on serve's store port (--store-listen),
//     one goroutine and connection per partition;
//   - native-sdk: the official Iggy Go SDK doing the same, with one SDK
//     client per partition.
//
// Values come from package workload: random bytes that snappy cannot shrink,
// or JSON-like event records that it shrinks about 3:1 (the header prints
// the measured ratio of each pool); a pool is walked in order and is far
// larger than a batch, so no batch repeats a value. Each client creates a
// fresh topic, produces, consumes every record back (checking count and
// bytes), and deletes the topic. The first case of each round also times a
// paced produce: single records at 1,000 a second, each waited for
// (franz-go with linger 0, native clients one message per send).
//
// The figures, per case, phase and system, are medians over the rounds:
//
//   - MB/s: value bytes (1e6) over the phase's wall time, with the range of
//     the rounds; records/s likewise. Produce is timed from the first send to
//     the last ack, consume from creating the consumer to the last record.
//   - broker CPU s/GB: CPU seconds the broker process spent in the phase
//     (summed over its threads from /proc/PID/task/*/schedstat, read by the
//     client at the phase's edges) per GB of values. For the native rows the
//     broker is the same serve process, reached on its store port.
//   - client CPU s/GB: CPU seconds of the client process in the phase
//     (getrusage), per GB of values.
//   - gateway / X: the median over the rounds of the gateway's MB/s divided
//     by X's in the same round, so that the machine's load drifting between
//     rounds cancels out; above 1 means the gateway is faster.
//   - latency: p50 and p99 of send-to-ack time in the paced phase.
//
// The two types to know are Config (what a run measures; Default and Quick)
// and Results (every client's report, with Figures, Ratio, Latency and
// WriteMarkdown). TestQuickRun runs the whole runner on tiny cases so the
// harness cannot rot unseen; it is skipped under -short.
package bench
