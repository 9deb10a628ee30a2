// Package partlog is the durable, append-only log of one Iggy partition, as
// the embedded store keeps it on disk.
//
// A Log owns one directory. It stores batch records in the format of package
// message, stamped on append with the partition id, the base offset and the
// append time, so that a poll reply is a copy of stored bytes (sliced with
// message.AppendSlice where a poll starts or stops inside a batch). Offsets
// are contiguous from the first stored message; Purge restarts them at 0.
//
// # Files
//
// The directory holds segments. A segment is a pair of files named by the
// offset of its first message in 20 decimal digits:
//
//	00000000000000000000.log    batch records back to back
//	00000000000000000000.index  one 40-byte entry per batch of the .log
//
// An index entry is, little-endian:
//
//	 0  base_offset     u64  offset of the batch's first message
//	 8  position        u64  byte offset of the batch in the .log
//	16  base_timestamp  u64  append time of the batch, microseconds
//	24  length          u32  batch_length of the record
//	28  count           u32  messages in the batch
//	32  check           u64  XXH3-64 (seed 0) of bytes 0..32 of the entry
//
// The log rolls to a new segment when the active one would grow past
// Options.SegmentBytes. Only the newest segment is written to.
//
// # Durability and recovery
//
// FsyncAlways syncs the .log before Append returns; concurrent appenders share
// one fsync (group commit). FsyncInterval syncs from a background goroutine
// every Options.FsyncInterval, so a crash of the machine loses at most that
// much; FsyncNever leaves writeback to the operating system. A crash of the
// process alone never loses an appended batch under any policy, since the
// bytes are in the page cache. Sealed segments are synced when the log rolls
// (except under FsyncNever), and the directory is synced when a segment file
// is created.
//
// The index is a cache of the .log and is written lazily, never synced on the
// append path: Open recovers the truth from the records themselves. It reads
// and verifies every batch of the newest segment (header fields, frame
// checksums and batch checksum through message.Validate, offsets contiguous
// with the batch before), truncates the .log at the first batch that fails
// (a torn or corrupt tail, which is logged), and rewrites the index if it
// disagrees. A sealed segment is trusted when its index is intact (every
// check field right, entries contiguous, the last one ending exactly at the
// size of the .log); otherwise it is verified and re-indexed the same way.
//
// Reads locate the first batch by binary search over the segments and then
// over the in-memory index of one segment, and read with pread: whole batches
// go straight into the caller's buffer, and only a batch cut by the requested
// range passes through a scratch buffer to be sliced.
package partlog
