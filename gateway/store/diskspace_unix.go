//go:build unix

package store

import "syscall"

// diskSpace is the free and total bytes of the file system holding dir, 0 and 0 when it cannot
// be read.
func diskSpace(dir string) (free, total uint64) {
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) != nil {
		return 0, 0
	}
	return fs.Bavail * uint64(fs.Bsize), fs.Blocks * uint64(fs.Bsize)
}
