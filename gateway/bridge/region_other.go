//go:build !unix

package bridge

import (
	"errors"
	"os"
)

// regionAlloc takes n bytes from the Go heap where anonymous mappings are not offered.
func regionAlloc(n int) ([]byte, error) { return make([]byte, n), nil }

// regionFree leaves b to the collector.
func regionFree([]byte) {}

// mapFile is not offered: kept batches are read back with pread (keptdisk.go).
func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapFile([]byte) {}

func dropMapped(_, _ []byte) {}
