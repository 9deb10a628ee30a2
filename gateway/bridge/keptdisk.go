package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The kept share on disk: with Config.KeptBatchesBytes above zero, the producers' batches the
// tail cache lets go (tailCache.spill) are kept in files of Config.KeptBatchesDir instead of the
// fetch cache's memory, as Kafka serves its log through the page cache: the rebuiltCache that
// keeps them is the same one (the clock over chunks, the index, the pins), its chunks files
// instead of memory. A batch is written to its chunk's file at the chunk's end (pwrite) and
// read back (pread) into the fetch answer's pooled buffer, so the file's pages stay with the
// operating system's page cache and out of the process's resident memory; an emptied chunk's
// file is truncated and filled again.
//
// The files are scratch, nothing survives the process: each is unlinked as soon as it is
// created, so that its blocks go back when the gateway ends however it ends, and two gateways
// sharing the directory (a fleet in one process, two processes on one host) never see each
// other's files. Where a file cannot be unlinked while open it keeps its name until Close, and
// the next start removes such leftovers.
//
// What is read back is checked before it goes out: every batch whole, at the offset its key
// says, with its record count, magic 2 and its CRC (the producer's, which the gateway checked on
// produce and which the base offset written in does not cover). A read that fails or finds
// anything else drops the chunk's batches from the index and the fetch goes on to the batches
// rebuilt from Iggy: the disk never makes a wrong answer, only a slower one.

// keptFilePattern names the chunk files in the directory (os.CreateTemp).
const keptFilePattern = "kept-*.chunk"

// maxKeptChunk bounds a chunk (its offsets are int32): a disk budget above 16 GiB keeps 16 GiB.
const maxKeptChunk = 1 << 30

// newKeptDiskCache returns the kept share on disk: about limit bytes in rebuiltChunks files of
// dir, which it creates, removing the chunk files an earlier process left named there. The
// files themselves are created as chunks first fill.
func newKeptDiskCache(dir string, limit int64, m *Metrics) (*rebuiltCache, error) {
	size := min(limit/rebuiltChunks, maxKeptChunk)
	if size < minRebuiltChunk {
		return nil, fmt.Errorf("bridge: a disk budget of %d bytes for kept batches is below %d", limit, minRebuiltChunk*rebuiltChunks)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bridge: directory of kept batches: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, keptFilePattern))
	if err != nil {
		return nil, err
	}
	for _, name := range old {
		_ = os.Remove(name) // an open one elsewhere (no unlink while open) stays with its owner
	}
	c := &rebuiltCache{chunkSize: int(size), index: map[rebuiltKey]rebuiltEntry{}, metrics: m, kept: true, dir: dir}
	return c, nil
}

// openChunkFile creates ch's file and unlinks it at once (see above); a file that cannot be
// unlinked while open keeps its name for close.
func (c *rebuiltCache) openChunkFile(ch *rebuiltChunk) error {
	f, err := os.CreateTemp(c.dir, keptFilePattern)
	if err != nil {
		return err
	}
	ch.file = f
	if os.Remove(f.Name()) != nil {
		ch.path = f.Name()
	}
	return nil
}

// writeChunk writes b at off of ch's file, creating the file first.
func (c *rebuiltCache) writeChunk(ch *rebuiltChunk, b []byte, off int) error {
	if ch.file == nil {
		if err := c.openChunkFile(ch); err != nil {
			return err
		}
	}
	_, err := ch.file.WriteAt(b, int64(off))
	return err
}

// emptyChunkFile truncates the file of a chunk being emptied, so its blocks go back until it
// fills again (and nothing of it could be read as a batch).
func emptyChunkFile(ch *rebuiltChunk) {
	if ch.file != nil {
		_ = ch.file.Truncate(0)
	}
}

// closeChunkFile closes ch's file (removing it when it kept its name); nothing may read it
// after.
func closeChunkFile(ch *rebuiltChunk) {
	if ch.file == nil {
		return
	}
	_ = ch.file.Close()
	if ch.path != "" {
		_ = os.Remove(ch.path)
	}
	ch.file, ch.path = nil, ""
}

// errKeptRead is a kept batch read back from disk that is not the batch put there.
var errKeptRead = errors.New("bridge: kept batch read back from disk does not check")

// readParts appends to dst, which has room for them, the batches of sp read from their
// chunks' files, each checked (checkKept). On a failure it returns dst as it was and the part
// that failed.
func (sp *rebuiltSpan) readParts(dst []byte) ([]byte, rebuiltEntry, error) {
	start, base := len(dst), sp.base
	for _, e := range sp.parts {
		at := len(dst)
		dst = dst[:at+int(e.len)]
		ch := &sp.c.chunks[e.chunk]
		if ch.file == nil {
			return dst[:start], e, errKeptRead
		}
		n, err := ch.file.ReadAt(dst[at:], int64(e.off))
		if n < int(e.len) {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("%w: %d of %d bytes", errKeptRead, n, e.len)
			}
			return dst[:start], e, err
		}
		if !checkKept(dst[at:], base, e.n) {
			return dst[:start], e, errKeptRead
		}
		base += int64(e.n)
	}
	return dst, rebuiltEntry{}, nil
}

// checkKept reports whether b is one whole magic-2 batch at base of n records whose CRC holds.
func checkKept(b []byte, base int64, n int32) bool {
	kb, rest, err := nextBatch(b)
	return err == nil && len(rest) == 0 && kb.BaseOffset == base && kb.NumRecords == n
}

// dropChunkOf forgets the batches of the chunk e lies in, after a read of it failed: they are
// rebuilt from Iggy from now on, until the chunk is filled again.
func (c *rebuiltCache) dropChunkOf(e rebuiltEntry) {
	c.metrics.keptDiskFaults.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := &c.chunks[e.chunk]
	for _, k := range ch.keys {
		delete(c.index, k)
	}
	clear(ch.keys)
	ch.keys = ch.keys[:0]
}
