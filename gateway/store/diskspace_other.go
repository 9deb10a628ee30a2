//go:build !unix

package store

// diskSpace is not read where statfs is not offered: the stats answer 0 and 0.
func diskSpace(string) (free, total uint64) { return 0, 0 }
