//go:build linux

package partlog

import (
	"os"
	"syscall"
)

// keepSize is FALLOC_FL_KEEP_SIZE: the blocks are allocated past the end of
// the file and its size stays the end of the data, which recovery relies on.
const keepSize = 0x01

// preallocate allocates the n bytes of f at off without changing its size.
func preallocate(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Fallocate(int(fd), keepSize, off, n)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}

// allocatedPastEnd reports whether the file behind fi holds blocks well past
// its size, as preallocation leaves them when the log was not closed.
func allocatedPastEnd(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	const slack = 64 << 10 // room for extent tree blocks, which count too
	return st.Blocks*512 > fi.Size()+slack
}

// tmpfsMagic is TMPFS_MAGIC, the f_type statfs reports for tmpfs.
const tmpfsMagic = 0x01021994

// preallocates reports whether preallocating blocks pays on the filesystem holding dir: on
// tmpfs there is no delayed allocation to spare, and fallocate fills every page with zeros
// that the write then overwrites, doubling the cost of an append.
func preallocates(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return true
	}
	return st.Type != tmpfsMagic
}
