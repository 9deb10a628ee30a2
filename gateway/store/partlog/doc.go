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
// FsyncAlways syncs before Append returns; concurrent appenders share one
// fsync (group commit). FsyncInterval syncs from a background goroutine
// every Options.FsyncInterval, so a crash of the machine loses about that
// much (see below for a disk that cannot keep up); FsyncNever leaves writeback to the operating system. A crash of
// the process alone never loses an appended batch under any policy, since the
// bytes are in the page cache.
//
// No fsync runs under the log's lock, so appends and reads never wait for
// the disk, except an FsyncAlways appender for its own batch and, under
// FsyncInterval, appenders that arrive while a background sync has run for
// longer than the interval: they wait for it, which holds ingest to the
// disk's pace when the disk falls behind and keeps the loss a power failure
// can cause within about two intervals. A sync takes
// a snapshot under the lock of what it covers: the segments sealed since the
// last sync, the directory if segments were created or deleted, and the
// active segment up to the bytes appended so far. It syncs them outside the
// lock, sealed segments oldest first and the active one last, and only then
// counts those bytes durable. Rolling to a new segment therefore does not
// sync the sealed one; the next sync does, before the new segment's bytes
// can count. Under FsyncAlways that is the group commit of the first append
// into the new segment, so an acknowledged batch never depends on an
// unsynced one before it. Under FsyncInterval a power failure can tear the
// end of a sealed segment as well as the active one, all within the last
// interval; recovery then cuts the sealed segment and keeps what survives
// after it, leaving a gap in the offsets.
//
// Deleting segments removes their names at once and closes their files in
// the background: closing an unlinked file frees its page cache and blocks,
// which costs about as much as writing it did. The active segment's .log has
// its blocks preallocated a chunk ahead of the data (fallocate, keeping the
// file size), which spares the filesystem the per-block bookkeeping of
// delayed allocation on every write; a sealed segment is trimmed to its data
// in the background, a closed one at Close, and one left untrimmed by a crash
// at Open.
//
// The index is a cache of the .log and is written lazily, never synced on the
// append path: Open recovers the truth from the records themselves. It reads
// and verifies every batch of the newest segment (header fields, frame
// checksums and batch checksum through message.Validate, offsets contiguous
// with the batch before), truncates the .log at the first batch that fails
// (a torn or corrupt tail, which is logged), and rewrites the index if it
// disagrees. A sealed segment is trusted when its index is intact (every
// check field right, entries contiguous, the last one ending exactly at the
// size of the .log) and its last batch verifies, since a power failure can
// tear the end of a segment sealed within the last interval; otherwise it is
// verified and re-indexed the same way.
//
// Reads locate the first batch by binary search over the segments and then
// over the in-memory index of one segment, and read with pread: whole batches
// go straight into the caller's buffer, and only a batch cut by the requested
// range passes through a scratch buffer to be sliced.
package partlog
