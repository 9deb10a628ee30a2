package bridge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
)

// The kept share on disk: with Config.KeptBatchesBytes above zero, the producers' batches the
// tail cache lets go (tailCache.spill) are kept in files of Config.KeptBatchesDir instead of the
// fetch cache's memory, as Kafka serves its log through the page cache: the rebuiltCache that
// keeps them is the same one (the clock over chunks, the index, the pins), its chunks files
// instead of memory. A batch is written to its chunk's file at the chunk's end (pwrite) and
// read back through a read-only shared mapping of the file (mapFile): an answer that is one run
// of a chunk goes to the socket as it lies in the page cache, without a copy into a buffer, and
// other answers copy from the mapping. When its answer is released, the pages it touched leave
// the process's page tables (dropMapped): the file's pages stay with the operating system's page
// cache and out of the process's resident memory. Where mapping is not offered, batches are read
// back with pread into the answer's pooled buffer. An emptied chunk's file is written over from
// its start (no answer pins it then; its old bytes are no batch the index names): a chunk is
// emptied only to be filled at once, and giving its blocks back to take them again at the next
// write costs the produce path an allocation of every page (with tmpfs, each page's zeroing and
// the memory accounting) for nothing.
//
// The files are scratch, nothing survives the process: each is unlinked as soon as it is
// created, so that its blocks go back when the gateway ends however it ends, and two gateways
// sharing the directory (a fleet in one process, two processes on one host) never see each
// other's files. Where a file cannot be unlinked while open it keeps its name until Close, and
// the next start removes such leftovers.
//
// What is read back is checked before it goes out: every batch within its file, whole, at the
// offset its key says, with its record count and magic 2. A check that fails drops the chunk's
// batches from the index and the fetch goes on to the batches rebuilt from Iggy: a batch never
// goes out in another's place. A page of the mapping the system cannot read (an I/O error)
// faults; the check runs with faults turned into panics (debug.SetPanicOnFault) and takes one as
// a failed check. The bytes after the header are not read to check them: the CRC over them is
// the producer's, checked by the gateway on produce and by Kafka clients on fetch, as Kafka's
// brokers serve their logs (checkKeptHeader). Read back with pread, where nothing is mapped,
// the CRC is checked too, as the bytes are read anyway (checkKept).

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
	if m, err := mapFile(f, c.chunkSize); err == nil {
		ch.mapped = m
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

// closeChunkFile closes ch's file (removing it when it kept its name); nothing may read it
// after.
func closeChunkFile(ch *rebuiltChunk) {
	if ch.file == nil {
		return
	}
	if ch.mapped != nil {
		unmapFile(ch.mapped)
		ch.mapped = nil
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

// mapped reports whether every batch of sp lies in a mapped file.
func (sp *rebuiltSpan) mapped() bool {
	for _, e := range sp.parts {
		if sp.c.chunks[e.chunk].mapped == nil {
			return false
		}
	}
	return len(sp.parts) > 0
}

// checkMapped checks every batch of sp, which is mapped, as it lies in its chunk's mapping, and
// returns the first that fails: within its file (which a read of the mapping past the file's end
// would fault on), and whole at the offset its key says with its record count and magic 2
// (checkKeptHeader). A fault reading the mapping fails the check.
func (sp *rebuiltSpan) checkMapped() (bad rebuiltEntry, ok bool) {
	if !withoutFault(func() { bad, ok = sp.checkMappedParts() }) {
		return bad, false
	}
	return bad, ok
}

// withoutFault runs read, which reads a file's mapping, and reports whether it ran without a
// memory fault (a page the system could not read, or one past the file's end): such a fault
// ends read with a panic instead of the process, and withoutFault returns false. Other panics go
// on.
func withoutFault(read func()) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			ok = false
		}
	}()
	read()
	return true
}

func (sp *rebuiltSpan) checkMappedParts() (bad rebuiltEntry, ok bool) {
	base, sizes := sp.base, [rebuiltChunks]int64{}
	for _, e := range sp.parts {
		bad = e
		ch := &sp.c.chunks[e.chunk]
		if sizes[e.chunk] == 0 {
			fi, err := ch.file.Stat()
			if err != nil {
				return bad, false
			}
			sizes[e.chunk] = fi.Size()
		}
		if int64(e.off)+int64(e.len) > sizes[e.chunk] || !checkKeptHeader(ch.mapped[e.off:e.off+e.len], base, e.n) {
			return bad, false
		}
		base += int64(e.n)
	}
	return rebuiltEntry{}, true
}

// dropPages lets go of the pages sp's batches touched in their files' mappings (dropMapped),
// one run of a chunk at a time.
func (sp *rebuiltSpan) dropPages() {
	for i := 0; i < len(sp.parts); {
		first := sp.parts[i]
		end := first.off + first.len
		for i++; i < len(sp.parts) && sp.parts[i].chunk == first.chunk && sp.parts[i].off == end; i++ {
			end += sp.parts[i].len
		}
		if m := sp.c.chunks[first.chunk].mapped; m != nil {
			dropMapped(m, m[first.off:end])
		}
	}
}

// checkKept reports whether b is one whole magic-2 batch at base of n records whose CRC holds.
func checkKept(b []byte, base int64, n int32) bool {
	kb, rest, err := nextBatch(b)
	return err == nil && len(rest) == 0 && kb.BaseOffset == base && kb.NumRecords == n
}

// checkKeptHeader is checkKept without the CRC, for batches answered as they lie in a file's
// mapping: reading every byte to check it would cost about what reading the file into a buffer
// did. The CRC is the producer's, which the gateway checked on produce and Kafka clients check on
// fetch (franz-go and the Java client by default), as Kafka's brokers leave it to them.
func checkKeptHeader(b []byte, base int64, n int32) bool {
	kb, rest, err := splitBatch(b)
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
