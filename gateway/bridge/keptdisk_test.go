package bridge

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// diskBridge is a bridge over m whose tail cache holds 16 KiB of producers' batches and whose
// fetch cache of 16 MiB would keep 1 MiB of those the tail cache lets go in memory, but keeps
// budget bytes of them in files of dir instead.
func diskBridge(t *testing.T, m *memStore, dir string, budget int64) *Bridge {
	t.Helper()
	b := topicBridge(t, m, Config{TailCacheBytes: 16 << 10, FetchCacheBytes: 16 << 20, KeptBatchesBytes: budget, KeptBatchesDir: dir})
	if b.kept == nil || b.kept.dir != dir {
		t.Fatal("no kept share on disk")
	}
	return b
}

// keptFiles counts the files of dir the process holds open (Linux: /proc/self/fd), named or
// unlinked, and the names left in dir.
func keptFiles(t *testing.T, dir string) (open int, named []string) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, fd := range fds {
		if to, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(to, dir+string(os.PathSeparator)) {
			open++
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		named = append(named, e.Name())
	}
	return open, named
}

// diskUsed is the bytes the kept share's files hold now.
func diskUsed(t *testing.T, c *rebuiltCache) int64 {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for i := range c.chunks {
		if f := c.chunks[i].file; f != nil {
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}

// TestKeptDiskFarBehindTail: with the kept share on disk, a reader far behind the tail (here 6
// MiB, six times what the in-memory share of the same fetch cache would keep and 400 times the
// tail cache) gets every producer's batch it lines up with as its producer sent it, and reads
// what a gateway without caches serves; the files stay within their budget and no name is left
// in the directory, before Close or after, and Close closes them all.
func TestKeptDiskFarBehindTail(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "kept-1.chunk")
	if err := os.WriteFile(stale, []byte("left by an earlier process"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newMemStore()
	b := diskBridge(t, m, dir, 8<<20)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("a chunk file an earlier process left is still there: %v", err)
	}
	// About 1.5 KiB a batch: 4,000 of them are 6 MiB.
	sent := keptWorkload(t, b, m, codecSnappy, "random", 4000, 7, false)
	if got := b.metrics.KeptBytesStored(); got < 5<<20 {
		t.Fatalf("%d bytes kept on disk, want the 6 MiB the tail cache let go", got)
	}
	for _, i := range []int{0, 1, len(sent) / 3, len(sent) / 2} {
		before := b.metrics.KeptFetches()
		res := fetchOK(t, b, m, sent[i].base, 1)
		if b.metrics.KeptFetches() != before+1 || !bytes.Equal(res.Records, sent[i].asServed()) {
			t.Errorf("batch %d at %d: served as %d bytes, from the kept share %v; want its producer's %d bytes from disk",
				i, sent[i].base, len(res.Records), b.metrics.KeptFetches() > before, len(sent[i].raw))
		}
		if mapped := inKeptMapping(b.kept, res.Records); mapped != (runtime.GOOS == "linux") {
			t.Errorf("batch %d: answered from a file's mapping %v, on %s", i, mapped, runtime.GOOS)
		}
		res.Release()
	}
	before := b.metrics.KeptFetches()
	sameServed(t, "read from 0", readAll(t, b, m, 0, 1<<20), fromScratch(t, m))
	if n := b.metrics.KeptFetches() - before; n < 5 {
		t.Errorf("a read from 0 by 1 MiB was answered %d times from the kept share", n)
	}
	if used := diskUsed(t, b.kept); used == 0 || used > 8<<20 {
		t.Errorf("the kept files hold %d bytes, budget %d", used, 8<<20)
	}
	if n := b.metrics.KeptDiskFaults(); n != 0 {
		t.Errorf("%d disk faults", n)
	}
	pinsBalanced(t, b, "after the reads")
	open, named := keptFiles(t, dir)
	if open == 0 || len(named) != 0 {
		t.Errorf("before Close: %d kept files open, names %q in the directory; want some open, none named", open, named)
	}
	b.Close()
	if open, named := keptFiles(t, dir); open != 0 || len(named) != 0 {
		t.Errorf("after Close: %d kept files open, names %q in the directory; want none", open, named)
	}
}

// TestKeptDiskEviction: producing three times the disk budget keeps the files within it (the
// clock empties a chunk and writes its file over from the start, so no file grows past its
// chunk): the oldest batches are rebuilt from Iggy, the newest served from disk as sent.
func TestKeptDiskEviction(t *testing.T) {
	m := newMemStore()
	b := diskBridge(t, m, t.TempDir(), 1<<20)
	sent := keptWorkload(t, b, m, codecNone, "random", 2000, 8, false)
	if used := diskUsed(t, b.kept); used == 0 || used > 1<<20 {
		t.Fatalf("the kept files hold %d bytes after 3 MiB went through a budget of 1 MiB", used)
	}
	b.kept.mu.Lock()
	for i := range b.kept.chunks {
		ch := &b.kept.chunks[i]
		fi, err := ch.file.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > int64(b.kept.chunkSize) || fi.Size() < int64(ch.used) {
			t.Errorf("chunk %d: a file of %d bytes for a chunk of %d holding %d bytes of batches", i, fi.Size(), b.kept.chunkSize, ch.used)
		}
	}
	b.kept.mu.Unlock()
	before := b.metrics.KeptFetches()
	res := fetchOK(t, b, m, sent[0].base, 1)
	res.Release()
	if b.metrics.KeptFetches() != before {
		t.Fatal("the first batch was answered from disk after three times the budget went through it")
	}
	i := len(sent) - 200 // let go by the tail cache, within the newest megabyte
	res = fetchOK(t, b, m, sent[i].base, 1)
	if b.metrics.KeptFetches() != before+1 || !bytes.Equal(res.Records, sent[i].asServed()) {
		t.Errorf("batch %d of %d not served from disk as sent", i, len(sent))
	}
	res.Release()
	pinsBalanced(t, b, "after the reads")
}

// TestKeptDiskReadFaults: a kept batch whose file was cut short, or whose header changed on
// disk (its record count), is never served: the fetch is answered with the batches rebuilt from
// Iggy, the fault counted, and the chunk's batches are not read from disk again.
func TestKeptDiskReadFaults(t *testing.T) {
	for _, fault := range []string{"short", "header"} {
		t.Run(fault, func(t *testing.T) {
			m := newMemStore()
			b := diskBridge(t, m, t.TempDir(), 8<<20)
			sent := keptWorkload(t, b, m, codecGzip, "compressible", 200, 9, true)
			want := fromScratch(t, m)
			st := b.parts[partKey{topic: "t", partition: 0}]
			b.kept.mu.Lock()
			e, ok := b.kept.index[rebuiltKey{st: st, gen: st.rebuiltGen.Load(), base: sent[0].base}]
			var err error
			if ok {
				f := b.kept.chunks[e.chunk].file
				if fault == "short" {
					err = f.Truncate(int64(e.off + e.len/2))
				} else {
					_, err = f.WriteAt([]byte{0x7f}, int64(e.off)+57) // the record count's top byte
				}
			}
			b.kept.mu.Unlock()
			if !ok || err != nil {
				t.Fatalf("the first batch kept on disk: %v, fault: %v", ok, err)
			}
			before := b.metrics.KeptFetches()
			res := fetchOK(t, b, m, sent[0].base, 1)
			got := readServed(t, bytes.Clone(res.Records))
			res.Release()
			if b.metrics.KeptFetches() != before || b.metrics.KeptDiskFaults() != 1 {
				t.Fatalf("after a %s file: %d reads from the kept share, %d disk faults; want none and 1",
					fault, b.metrics.KeptFetches()-before, b.metrics.KeptDiskFaults())
			}
			sameServed(t, "the first batch", got, want[:1])
			sameServed(t, "read from 0", readAll(t, b, m, 0, 1<<20), want)
			if n := b.metrics.KeptDiskFaults(); n != 1 {
				t.Errorf("%d disk faults after reading the chunk again, want it dropped after the first", n)
			}
			pinsBalanced(t, b, "after the reads")
		})
	}
}

// TestKeptDiskUnwritable: a directory the gateway cannot create leaves it with the kept share in
// memory, not without a start.
func TestKeptDiskUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := newMemStore()
	b := topicBridge(t, m, Config{TailCacheBytes: 16 << 10, FetchCacheBytes: 16 << 20, KeptBatchesBytes: 1 << 20, KeptBatchesDir: filepath.Join(file, "kept")})
	if b.kept == nil || b.kept.dir != "" || b.cache.kept != b.kept {
		t.Fatal("no kept share in memory in place of the one on disk")
	}
	sent := keptWorkload(t, b, m, codecNone, "random", 100, 10, false)
	res := fetchOK(t, b, m, sent[0].base, 1)
	if b.metrics.KeptFetches() != 1 || !bytes.Equal(res.Records, sent[0].asServed()) {
		t.Error("the first batch, gone from the tail cache, was not served from memory as sent")
	}
	res.Release()
	sameServed(t, "read from 0", readAll(t, b, m, 0, 1<<20), fromScratch(t, m))
}

// TestWithoutFault: a read of a file's mapping past the file's end, which the system answers
// with SIGBUS, is reported as a fault instead of ending the process.
func TestWithoutFault(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "mapped")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := os.Getpagesize()
	if _, err := f.WriteAt(bytes.Repeat([]byte{7}, page), 0); err != nil {
		t.Fatal(err)
	}
	m, err := mapFile(f, 4*page)
	if err != nil {
		t.Skipf("no mapping here: %v", err)
	}
	defer unmapFile(m)
	var got byte
	if !withoutFault(func() { got = m[page-1] }) || got != 7 {
		t.Fatalf("reading the file's last byte: fault, or %d", got)
	}
	if withoutFault(func() { got = m[2*page] }) {
		t.Fatal("a read past the file's end ran without a fault")
	}
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if withoutFault(func() { got = m[0] }) {
		t.Fatal("a read of a page the file no longer has ran without a fault")
	}
}

// inKeptMapping reports whether b lies in the mapping of one of c's files: answered as it lies
// in the page cache, not copied into a buffer.
func inKeptMapping(c *rebuiltCache, b []byte) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i := range c.chunks {
		m := c.chunks[i].mapped
		if len(m) > 0 && len(b) > 0 {
			lo := uintptr(unsafe.Pointer(&m[0]))
			at := uintptr(unsafe.Pointer(&b[0]))
			if at >= lo && at+uintptr(len(b)) <= lo+uintptr(len(m)) {
				return true
			}
		}
	}
	return false
}
