//go:build unix

package bridge

import "syscall"

// regionAlloc maps n bytes of anonymous memory apart from the Go heap: the collector neither
// counts nor scans it, and pages are taken only as they are first written.
func regionAlloc(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// regionFree unmaps what regionAlloc mapped; nothing may read b after.
func regionFree(b []byte) { _ = syscall.Munmap(b) }
