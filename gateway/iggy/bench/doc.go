// Package bench measures the Iggy path of the gateway end to end: our
// client (package iggy) sending and polling 1000-message batches through
// loopback TCP against the embedded store running in the same process.
//
// It holds only benchmarks. Each reports messages/s, MB/s of payload
// (b.SetBytes) and the CPU seconds the whole process (client and store)
// spends per GB of payload, measured with getrusage around the timed loop.
// BenchmarkTCPCopy moves the same bytes per operation over a bare loopback
// TCP connection, with the same one-reply-per-batch rhythm, as the ceiling
// the client and store are judged against in the same run:
//
//	go test -run '^$' -bench . -count 5 ./gateway/iggy/bench
//
// The store writes to b.TempDir(), so with fsync "never" a send is bounded
// by how fast the kernel can write dirty pages back to that disk. Setting
// IGGY_BENCH_DIR=/dev/shm puts the store on tmpfs and measures the rest of
// the path (client, loopback TCP, store CPU) without the disk.
package bench
