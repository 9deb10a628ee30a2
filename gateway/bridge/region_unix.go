//go:build unix

package bridge

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// regionAlloc maps n bytes of anonymous memory apart from the Go heap: the collector neither
// counts nor scans it, and pages are taken only as they are first written.
func regionAlloc(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// regionFree unmaps what regionAlloc mapped; nothing may read b after.
func regionFree(b []byte) { _ = syscall.Munmap(b) }

// mapFile maps the first n bytes of f read-only and shared: the file's own pages in the page
// cache, which a read of the mapping touches without a copy. Pages past the file's end must not
// be read (SIGBUS).
func mapFile(f *os.File, n int) ([]byte, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var m []byte
	cerr := sc.Control(func(fd uintptr) {
		m, err = syscall.Mmap(int(fd), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	})
	if cerr != nil {
		return nil, cerr
	}
	return m, err
}

// unmapFile unmaps what mapFile mapped; nothing may read m after.
func unmapFile(m []byte) { _ = syscall.Munmap(m) }

// dropMapped lets the process's page tables go for the pages of b, part of a mapFile mapping:
// the file's pages stay in the page cache, out of the process's resident memory, and a later
// read maps them again.
func dropMapped(m, b []byte) {
	if len(b) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b))) - base
	end := start + uintptr(len(b))
	page := uintptr(syscall.Getpagesize())
	start, end = start&^(page-1), min((end+page-1)&^(page-1), uintptr(len(m)))
	_ = unix.Madvise(m[start:end], unix.MADV_DONTNEED)
}
